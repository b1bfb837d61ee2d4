#!/bin/bash
# Every started execution ends on the record (issue 33, findings 3 and 4):
# a call's timeout_ms bounds its wait for stockade-auditd (a stopped
# daemon costs a 1.5 s call 1.5 s, not the link's 10 s, and its started
# record, written late, still gets its call_refused); one-shot stdio
# clients that hang up at once leave no execution_started without its
# end; and after a SIGKILL of mcp-exec the next start writes the ends the
# dead server owed: execution_lost for the code that ran, call_refused
# for the code that never reached its driver.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; { [ -z "$AUDITD_PID" ] || kill -CONT "$AUDITD_PID" 2>/dev/null || true; }; stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
mcp_tokens "user:alice" "user:bob"
start_mx

# 1. A stopped audit daemon: the call answers at its own timeout.
kill -STOP "$AUDITD_PID"
"$PY" - "$PORT" "$TOKA" "$HERE" <<'PYEOF' || fail "the call's timeout did not bound its wait for the audit daemon"
import sys, time
sys.path.insert(0, sys.argv[3])
from mcpclient import Http
c = Http("http://127.0.0.1:%s/mcp" % sys.argv[1], sys.argv[2]); c.initialize()
t0 = time.monotonic()
r = c.tool("execute_python", {"code": "print('never')", "timeout_ms": 1500})
took = time.monotonic() - t0
assert r["isError"] and "within the call's timeout (1500 ms)" in r["content"][0]["text"], r
assert 1.4 < took < 4, took
print("  a 1500 ms call with stockade-auditd stopped answered in %.1f s: not run" % took)
PYEOF
kill -CONT "$AUDITD_PID"

# 1b. Its session closed while the call waits for that ack: not run, said.
"$PY" - "$PORT" "$TOKA" "$HERE" "$AUDITD_PID" <<'PYEOF' || fail "close_session during the audit wait"
import os, signal, sys, threading, time
sys.path.insert(0, sys.argv[3])
from mcpclient import Http, structured
c = Http("http://127.0.0.1:%s/mcp" % sys.argv[1], sys.argv[2]); c.initialize()
sid = structured(c.tool("execute_python", {"code": "v = 1"}))["session_id"]
os.kill(int(sys.argv[4]), signal.SIGSTOP)
out = {}
t = threading.Thread(target=lambda: out.update(r=c.tool("execute_python",
    {"code": "print(v)", "session_id": sid, "timeout_ms": 20000})))
t.start(); time.sleep(0.5)
r = c.tool("close_session", {"session_id": sid})
os.kill(int(sys.argv[4]), signal.SIGCONT)
t.join(30)
assert not r.get("isError"), r
assert out["r"]["isError"] and "session not found" in out["r"]["content"][0]["text"], out
print("  a session closed while its call awaited execution_started's ack: the call not run, said so")
PYEOF

# 2. One-shot stdio clients that hang up as soon as they have asked.
for i in 1 2 3 4 5 6 7 8; do
	printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	    "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_python\",\"arguments\":{\"code\":\"print($i)\"}}}" |
	    "$MX" --stdio --rules "$R" --state-dir "$T/hangup-$i" >/dev/null 2>>"$T/mx.err" &
done
wait_hangups() { for p in $(jobs -p); do [ "$p" = "$MX_PID" ] || [ "$p" = "$AUDITD_PID" ] || wait "$p" || true; done; }
wait_hangups
note "8 one-shot stdio clients hung up right after their call"

# 3. SIGKILL with one call running and one awaiting its ack.
"$PY" - "$PORT" "$TOKA" "$HERE" "$MX_PID" "$AUDITD_PID" <<'PYEOF' || fail "SIGKILL with calls in flight"
import os, signal, sys, threading, time
sys.path.insert(0, sys.argv[3])
from mcpclient import Http
url = "http://127.0.0.1:%s/mcp" % sys.argv[1]
mx, auditd = int(sys.argv[4]), int(sys.argv[5])
def call(code):
    c = Http(url, sys.argv[2]); c.initialize()
    try:
        c.tool("execute_python", {"code": code, "timeout_ms": 20000})
    except Exception:
        pass
threading.Thread(target=call, args=("import time; time.sleep(4)  # ran",), daemon=True).start()
time.sleep(1.5)
os.kill(auditd, signal.SIGSTOP)
threading.Thread(target=call, args=("print('never ran')",), daemon=True).start()
time.sleep(1)
os.kill(mx, signal.SIGKILL)
os.kill(auditd, signal.SIGCONT)
PYEOF
{ wait "$MX_PID"; } 2>/dev/null || true
MX_PID=""
sleep 4		# the killed server's sandbox ends its sleep
start_mx	# the same state_dir: it finds the dead server's journal
for _ in $(seq 1 100); do
	[ "$(ls "$T"/mx-state/inflight-*.log 2>/dev/null | wc -l)" = 1 ] && break
	sleep 0.1
done
stop_mx || fail "mcp-exec exit status $?"
stop_auditd
! ls "$T"/mx-state/inflight-*.log 2>/dev/null || fail "a journal outlived a clean stop"

log=$(ls "$LOG"/audit-*.log)
cat $log | tr -d '\000' | grep -a '"recovered":true' | grep -q '"event":"execution_lost"' ||
    fail "no execution_lost for the code the killed server ran"
cat $log | tr -d '\000' | grep -a '"recovered":true' | grep '"event":"call_refused"' |
    grep -q 'before the code ran' || fail "no recovered call_refused for the code that never ran"
note "after SIGKILL the next start recorded execution_lost (ran) and call_refused (never ran)"
"$PY" "$HERE/ended.py" $log || fail "started executions without an end (above)"
note "every execution_started has its end on the record"
verify >/dev/null || fail "audit verify"
