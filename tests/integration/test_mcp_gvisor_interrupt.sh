#!/bin/bash
# An interrupt on gVisor is `runsc kill INT`, a separate program: the
# server must not wait for it.  A stand-in runsc takes 0.8 s over each
# `kill` (a busy sentry) and then runs the real one.  While a timed-out
# call in one gVisor session is interrupted, calls in another session go
# on (a server that waited would hold them all for 0.8 s); the interrupt
# still lands, the code sees KeyboardInterrupt and its session lives on
# with its state; and no `runsc kill` is left behind, reaped or running.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
printf 'runtime: gvisor\n' >>"$R/profiles/default.yaml"
gvisor_or_skip
REAL=$(command -v runsc)
cat >"$T/runsc" <<SH
#!/bin/sh
case " \$* " in *" kill "*) sleep 0.8 ;; esac
exec $REAL "\$@"
SH
chmod 0755 "$T/runsc"
export STOCKADE_RUNSC="$T/runsc"
start_mx

"$PY" - "$PORT" "$HERE" <<'PYEOF' || fail "interrupt on gvisor (see above)"
import sys, threading, time
sys.path.insert(0, sys.argv[2])
from mcpclient import Http, structured
url = "http://127.0.0.1:%s/mcp" % sys.argv[1]

def client():
    c = Http(url)
    c.initialize()
    return c

a, b = client(), client()
sid_a = structured(a.tool("execute_python", {"code": "x = 41"}))["session_id"]
sid_b = structured(b.tool("execute_python", {"code": "n = 0"}))["session_id"]
box = {}
def timed_out():
    box["r"] = structured(a.tool("execute_python", {"session_id": sid_a,
        "timeout_ms": 500, "code": "import time\ntry:\n    time.sleep(30)\n"
        "except KeyboardInterrupt:\n    print('interrupted')\n    raise"}))
t = threading.Thread(target=timed_out)
t.start()
slowest, calls = 0.0, 0
while t.is_alive():
    t0 = time.monotonic()
    r = structured(b.tool("execute_python", {"session_id": sid_b,
                                             "code": "n += 1"}))
    assert r["exit_code"] == 0, r
    slowest = max(slowest, time.monotonic() - t0)
    calls += 1
t.join()
r = box["r"]
assert r["timed_out"] and r["end"] == "timeout" and "interrupted" in r["stdout"], r
assert not r["session_lost"], r
r = structured(a.tool("execute_python", {"session_id": sid_a, "code": "print(x)"}))
assert r["stdout"] == "41\n", r
assert slowest < 0.6, "a call in the other session took %.2f s while runsc kill ran" % slowest
print("  %d calls in another session during the interrupt, the slowest %.0f ms" %
      (calls, slowest * 1e3))
PYEOF
left=$(pgrep -f -- "$T/runsc .* kill " || true)
[ -z "$left" ] || fail "runsc kill left running: $(ps -o pid,args -p $left)"
zombies=$(ps -o stat=,comm= --ppid "$MX_PID" | awk '$1 ~ /^Z/' | wc -l)
[ "$zombies" = 0 ] || fail "$zombies unreaped children of mcp-exec: $(ps -o pid,stat,args --ppid "$MX_PID")"
note "a gVisor interrupt does not hold the server; the runsc kill is reaped"
stop_mx || fail "mcp-exec exited non-zero"
stop_auditd
verify >/dev/null || fail "audit trail does not verify"
