#!/bin/bash
# A call that never runs leaves nothing behind (issue 19): with the audit
# daemon down, ten execute_python calls without a session_id are refused,
# and each session made for one of them goes with it, recorded as closed.
# When the daemon is back the next call runs (no "session limit reached"),
# and the published status shows only that call's session.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
mcp_serve a
stop_auditd
for i in $(seq 1 10); do
	mcp_call a $i '{"code":"print(1)"}' | grep -q '"isError":true' ||
		fail "call $i ran with the audit daemon down"
done
grep -q 'session limit reached' "$T/a.out" &&
	fail "sessions leaked while the audit daemon was down: $(grep -c 'session limit' "$T/a.out") calls refused for the session limit"
note "daemon down: 10 calls refused, none for the session limit"

start_auditd
out=$(mcp_call a 20 '{"code":"print(6 * 7)"}')
echo "$out" | grep -q '"stdout":"42\\n"' ||
	fail "the call after the outage did not run: $(echo "$out" | cut -c1-300)"
sid=$(echo "$out" | sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' | head -1)
st=$(ls "$S"/sessions-*.json | head -1)
n=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sessions"]))' "$st")
[ "$n" = 1 ] || fail "$n live sessions after the outage, want 1: $(cat "$st")"
n=$(ls "$S/sandboxes" | wc -l)
[ "$n" = 1 ] || fail "$n sandboxes on disk, want 1"
note "daemon back: the call runs; 1 live session ($sid), 1 sandbox"

eval "exec $IN_a>&-"
wait "$PID_a" || fail "mcp-exec did not stop cleanly"
stop_auditd
verify >/dev/null
