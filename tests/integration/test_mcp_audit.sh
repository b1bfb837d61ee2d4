#!/bin/bash
# mcp-exec and a restarting audit daemon: while stockade-auditd is down no
# code runs (the call is a tool error); once it is back, the next call
# reconnects and runs; the trail of the whole story verifies.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
mkdir -p "$T/in"
printf 'a,b\n1,2\n' >"$T/in/data.csv"
sed -i "s|^  roots: .*|  roots: [$T/in]|" "$R/profiles/default.yaml"
grep -q "roots: \[$T/in\]" "$R/profiles/default.yaml" || fail "sed missed inputs.roots"
# The profile asks for more than audit.yaml's code.retention (hash).
printf 'code_retention: full\n' >>"$R/profiles/default.yaml"
mcp_serve a
mcp_call a 1 '{"code":"open(\"one\",\"w\").write(\"1\")"}' | grep -q '"isError":false' ||
	fail "a call with the daemon up did not run"
sid=$(sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' "$T/a.out" | head -1)
box=$(ls "$S/sandboxes")

stop_auditd
mcp_call a 2 "{\"code\":\"open('two','w').write('2')\",\"session_id\":\"$sid\"}" |
	grep -q 'not run: the audit trail is unavailable' ||
	fail "a call ran with the audit daemon down: $(tail -1 "$T/a.out")"
[ ! -e "$S/sandboxes/$box/workspace/two" ] || fail "the refused code ran"
note "daemon down: refused, the code did not run"

start_auditd
mcp_call a 3 "{\"code\":\"print(open('one').read())\",\"session_id\":\"$sid\"}" |
	grep -q '"stdout":"1\\n"' || fail "no reconnect after the daemon came back"
note "daemon back: the next call reconnects and runs"

# Staged inputs are named in the call's records with size and sha256.
mcp_call a 4 "{\"code\":\"print(len(open('/inputs/n.txt','rb').read()))\",\"session_id\":\"$sid\",\"files\":[\"$T/in/data.csv\"],\"inline_files\":[{\"name\":\"n.txt\",\"content\":\"h\u00e9llo\"}]}" |
	grep -q '"stdout":"6\\n"' || fail "the call with inputs: $(tail -1 "$T/a.out")"
"$PY" - "$LOG" "$T/in/data.csv" <<'PY' || fail "inputs in the records (see above)"
import glob, hashlib, json, sys
recs = [json.loads(l) for f in sorted(glob.glob(sys.argv[1] + "/audit-*.log")) for l in open(f).read().split("\0", 1)[0].splitlines()]
csv = open(sys.argv[2], "rb").read(); txt = "h\u00e9llo".encode()
want = [{"name": "data.csv", "size": len(csv), "sha256": "sha256:" + hashlib.sha256(csv).hexdigest()},
        {"name": "n.txt", "size": len(txt), "sha256": "sha256:" + hashlib.sha256(txt).hexdigest()}]
for ev in ("execution_started", "code_execution"):
    got = [r for r in recs if r["event"] == ev and "inputs" in r]
    assert len(got) == 1 and got[0]["inputs"] == want, (ev, got)
# The profile's code_retention: full wins over audit.yaml's hash.
st = [r for r in recs if r["event"] == "execution_started"]
assert st and all(r["code_retention"] == "full" and r["code_retention_min"] == "full"
                  for r in st), st
import os
for r in st:
    assert glob.glob(sys.argv[1] + "/blobs/*/" + r["code_hash"][7:]), r
PY
note "staged inputs: name, size, sha256 in execution_started and code_execution"

eval "exec $IN_a>&-"
wait "$PID_a" || fail "mcp-exec did not stop cleanly"
stop_auditd
verify >/dev/null
n=$(cat "$LOG"/audit-*.log | grep -c '"event":"code_execution"')
[ "$n" = 3 ] || fail "$n code_execution records, want 3"
grep -q '"event":"session_closed"' "$LOG"/audit-*.log || fail "no session_closed"
note "trail verifies: 3 executions, the session's close"
