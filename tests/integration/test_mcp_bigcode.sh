#!/bin/bash
# Code up to max_code_bytes runs, however big: the exec frame goes to the
# session's driver whole, from the event loop, never half of it (issue 19).
# After each big call the same session still answers a small one.  1 MiB
# of control characters (JSON grows each sixfold) fits as well.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
# Room for 1 MiB of code as \u0001 escapes in one message (6 MiB).
sed -i 's|^\(  max_message_bytes:\).*|\1 8M|' "$R/mcp-exec.yaml"
grep -q 'max_message_bytes: 8M' "$R/mcp-exec.yaml" || fail "sed missed max_message_bytes"
mcp_serve a
mcp_call a 1 '{"code":"x = 41"}' | grep -q '"isError":false' ||
	fail "the first call did not run: $(tail -1 "$T/a.out")"
sid=$(sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' "$T/a.out" | head -1)
[ -n "$sid" ] || fail "no session_id"

# args SIZE FILLER: execute_python arguments whose code is exactly SIZE
# bytes: a comment of FILLER, then a print of SIZE.
args() {
	"$PY" - "$1" "$2" "$sid" <<'PYEOF'
import json, sys
size, fill, sid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
tail = "\nprint(%d)" % size
code = "#" + chr(int(fill, 16)) * (size - 1 - len(tail)) + tail
assert len(code.encode()) == size
print(json.dumps({"code": code, "session_id": sid}))
PYEOF
}

id=10
for case in 400000:78 600000:78 999018:78 1048576:78 1048576:01; do
	size=${case%:*} fill=${case#*:}
	id=$((id + 1))
	out=$(mcp_call a $id "$(args "$size" "$fill")")
	echo "$out" | grep -q "\"stdout\":\"$size\\\\n\"" ||
		fail "$size bytes (0x$fill) did not run: $(echo "$out" | cut -c1-400)"
	id=$((id + 1))
	out=$(mcp_call a $id "{\"code\":\"x += 1; print(x)\",\"session_id\":\"$sid\"}")
	echo "$out" | grep -q "\"stdout\":\"$((41 + (id - 10) / 2))\\\\n\"" ||
		fail "the session broke after $size bytes: $(echo "$out" | cut -c1-400)"
	note "$size bytes of code (0x$fill) ran; the session still works"
done

# One byte more than max_code_bytes is refused before anything runs.
out=$(mcp_call a 99 "$(args 1048577 78)")
echo "$out" | grep -q 'longer than 1048576 characters' ||
	fail "over-long code not refused: $(echo "$out" | cut -c1-300)"

eval "exec $IN_a>&-"
wait "$PID_a" || fail "mcp-exec did not stop cleanly"
stop_auditd
verify >/dev/null
n=$(cat "$LOG"/audit-*.log | grep -c '"event":"code_execution"')
[ "$n" = 11 ] || fail "$n code_execution records, want 11"
! grep -q '"session_lost":true' "$LOG"/audit-*.log || fail "a session was lost"
note "trail verifies: 11 executions, no session lost"
