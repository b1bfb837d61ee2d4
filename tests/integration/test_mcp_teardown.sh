#!/bin/bash
# Every path that ends a session while a call runs in it ends it exactly
# once (issue 32, finding 1): close_session (direct and under a task),
# tasks/cancel, notifications/cancelled, a task's TTL, DELETE of the MCP
# session, the driver dying, the idle reaper and eviction beside busy
# sessions (teardown.py), then SIGHUP and SIGTERM with a call in flight,
# and over stdio the client leaving.  Under ASan: the server lives
# through each, exits 0, and its stderr holds no sanitizer report.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || { grep -m1 -A40 -E "AddressSanitizer|runtime error:" "$T/mx.err" || tail -30 "$T/mx.err"; } >&2; stop_mx || true; cleanup' EXIT
no_sanitizer_report() {
	! grep -q -E 'AddressSanitizer|runtime error:|LeakSanitizer' "$1" ||
	    { grep -m5 -A20 -E 'AddressSanitizer|runtime error:' "$1" >&2
	      fail "$2: a sanitizer report (above)"; }
}

start_auditd
mcp_rules
mcp_tokens "user:alice" "user:bob"
# A reaper that runs every second, sessions idle after 3 s: it passes
# the busy sessions by while their calls run.  Four sessions a principal:
# the later scenarios evict the earlier idle ones beside busy ones.
sed -i -e 's/^    idle_timeout_s: .*/    idle_timeout_s: 3/' \
    -e 's/^    reap_interval_s: .*/    reap_interval_s: 1/' "$R/mcp-exec.yaml"
grep -q '^    reap_interval_s: 1$' "$R/mcp-exec.yaml" || fail "sed missed reap_interval_s"
start_mx
PYTHONPATH="$HERE" "$PY" "$HERE/teardown.py" http "$PORT" "$TOKA" ||
    fail "teardown over HTTP (see above)"
kill -0 "$MX_PID" || fail "mcp-exec died"
no_sanitizer_report "$T/mx.err" "HTTP"

# A reload, then a stop, each with a call in flight.
"$PY" - "$PORT" "$TOKA" "$HERE" "$MX_PID" <<'PYEOF' || fail "SIGHUP and SIGTERM with calls in flight"
import os, signal, sys, threading, time
sys.path.insert(0, sys.argv[3])
from mcpclient import Http, McpError, structured
url = "http://127.0.0.1:%s/mcp" % sys.argv[1]
pid = int(sys.argv[4])
c = Http(url, sys.argv[2]); c.initialize()
sid = structured(c.tool("execute_python", {"code": "v = 1"}))["session_id"]
out = {}
t = threading.Thread(target=lambda: out.update(r=c.tool("execute_python",
    {"code": "import time; time.sleep(2); print(v)", "session_id": sid})))
t.start(); time.sleep(0.5)
os.kill(pid, signal.SIGHUP)
t.join(30)
assert structured(out["r"])["stdout"] == "1\n", out
print("  SIGHUP with a call in flight: the call finishes in its session")
t = threading.Thread(target=lambda: out.update(s=c.tool("execute_python",
    {"code": "import time; time.sleep(20)", "session_id": sid})))
t.start(); time.sleep(1)
os.kill(pid, signal.SIGTERM)
t.join(30)
assert not t.is_alive(), "the call in flight at SIGTERM hung"
PYEOF
st=0; wait "$MX_PID" || st=$?
MX_PID=""
[ $st = 0 ] || fail "mcp-exec exit status $st after SIGTERM with a call in flight"
no_sanitizer_report "$T/mx.err" "SIGTERM"
note "SIGTERM with a call in flight: exit 0"

mkdir -p "$T/stdio-state"
PYTHONPATH="$HERE" "$PY" "$HERE/teardown.py" stdio "$MX" "$R" "$T/stdio-state" ||
    { tail -30 "$T/stdio-state.err" >&2; fail "teardown over stdio (see above)"; }
no_sanitizer_report "$T/stdio-state.err" "stdio"

stop_auditd
# Each session ended once: no session_id has two ends on the record.
dups=$(cat "$LOG"/audit-*.log | tr -d '\000' | "$PY" -c '
import json, sys, collections
n = collections.Counter(json.loads(l)["session_id"] for l in sys.stdin
    if l.strip() and json.loads(l)["event"] in
    ("session_closed", "session_expired", "session_evicted"))
print(" ".join(s for s, k in n.items() if k > 1))')
[ -z "$dups" ] || fail "sessions ended twice on the record: $dups"
verify >/dev/null || fail "audit verify"
note "every session ended once on the record; the log verifies"
