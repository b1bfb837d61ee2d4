#!/bin/bash
# Busy polling (lib/evbase.h).  stockade-auditd (flush.busy_poll_us):
# after a durable ack to a writer whose next event came within two polls
# of its last ack, the loop polls instead of sleeping.  A synchronous
# writer that streams events is caught in polls; one that pauses 5 ms
# between events never starts one; busy_poll_us 0 turns polling off, on
# SIGHUP too; a daemon with one CPU to run on never polls.  Polling
# changes no ack: every one still follows its fdatasync (check_writer_
# inline), and the log verifies.  mcp-exec (server.busy_poll_us): a call
# alone in flight is polled for (its ack, its result), a call beside
# another is not, and 0 turns it off; /metrics counts the polls.
. "$(dirname "$0")/lib.sh"

# poll FIELD: the status reply's busy_poll.FIELD.
poll() {
	"$STOCKADE" audit status --socket "$SOCK" |
	    "$PY" -c 'import json, sys; print(json.load(sys.stdin)["busy_poll"][sys.argv[1]])' "$1"
}
stream() { "$LOAD" --socket "$SOCK" --writers 1 --events 300 --window 1 >/dev/null || fail "load"; }
# 20 synchronous events, 5 ms apart, each after its ack.
paced() {
	"$PY" - "$SOCK" <<'PYEOF' || fail "paced writer"
import json, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
f = s.makefile("rb")
for i in range(20):
    m = json.dumps({"type": "append", "id": i + 1, "event": {"event":
        "operator_note", "principal": "user:test", "message": "hi"}}).encode()
    s.sendall(struct.pack(">I", len(m)) + m)
    r = json.loads(f.read(struct.unpack(">I", f.read(4))[0]))
    assert r["type"] == "ack", r
    time.sleep(0.005)
PYEOF
}

[ "$(nproc)" -ge 2 ] || { echo "SKIP: one CPU: polling is off by design"; exit 77; }
make_conf
start_auditd
[ "$(poll enabled)" = True ] && [ "$(poll us)" = 100 ] ||
	fail "default: busy_poll $(poll enabled) $(poll us), want enabled, 100 us"
paced
[ "$(poll polls)" = 0 ] || fail "a writer 5 ms apart started $(poll polls) polls"
note "a writer that pauses 5 ms between events: no poll"
stream
p=$(poll polls) c=$(poll caught)
[ "$p" -gt 0 ] && [ "$c" -gt 0 ] || fail "a streaming writer: $p polls, $c events caught"
note "a streaming synchronous writer: $c of 300 events came during $p polls"

make_conf "flush: {busy_poll_us: 0}"
kill -HUP "$AUDITD_PID"
for _ in $(seq 1 100); do [ "$(poll us)" = 0 ] && break; sleep 0.05; done
[ "$(poll enabled)" = False ] || fail "busy_poll_us 0 after SIGHUP: still enabled"
p=$(poll polls)
stream
[ "$(poll polls)" = "$p" ] || fail "busy_poll_us 0: $(( $(poll polls) - p )) more polls"
note "busy_poll_us 0 (SIGHUP): no more polls"
stop_auditd

make_conf
printf '#!/bin/sh\nexec taskset -c 0 %s "$@"\n' "$AUDITD" >"$T/pinned"
chmod 0755 "$T/pinned"
AUDITD="$T/pinned" start_auditd
[ "$(poll enabled)" = False ] || fail "a daemon on one CPU polls"
stream
[ "$(poll polls)" = 0 ] || fail "a daemon on one CPU started $(poll polls) polls"
note "a daemon with one CPU to run on: polling off"
stop_auditd

# mcp-exec.  mpoll K: stockade_loop_K from /metrics.
trap 'stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
mpoll() {
	curl -s "http://127.0.0.1:$PORT/metrics" |
	    awk -v k="stockade_loop_$1" '$1 == k { print $2 }'
}
calls() {	# calls N: N short calls, one after another, in one session
	"$PY" - "$PORT" "$HERE" "$1" <<'PYEOF' || fail "calls"
import sys
sys.path.insert(0, sys.argv[2])
from mcpclient import Http, structured
c = Http("http://127.0.0.1:%s/mcp" % sys.argv[1])
c.initialize()
sid = structured(c.tool("execute_python", {"code": "x = 0"}))["session_id"]
for _ in range(int(sys.argv[3])):
    r = structured(c.tool("execute_python", {"session_id": sid, "code": "x += 1"}))
    assert r["exit_code"] == 0, r
PYEOF
}
start_mx
calls 10
p=$(mpoll polls_total) secs=$(mpoll poll_seconds_total)
[ "${p:-0}" -gt 0 ] || fail "mcp-exec: 10 calls alone in flight, ${p:-no} polls"
note "mcp-exec: 10 calls, each alone in flight: $p polls, ${secs} s polling"
stop_mx

# A call beside another in flight: no poll for it (the polls counted are
# the first calls', made before the long one began).
start_mx
"$PY" - "$PORT" "$HERE" <<'PYEOF' || fail "calls beside another"
import json, sys, threading, time, urllib.request
sys.path.insert(0, sys.argv[2])
from mcpclient import Http, structured
port = sys.argv[1]
url = "http://127.0.0.1:%s/mcp" % port
def polls():
    for line in urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port).read().decode().splitlines():
        if line.startswith("stockade_loop_polls_total "):
            return int(line.split()[1])
a, b = Http(url), Http(url)
a.initialize(); b.initialize()
sid = structured(a.tool("execute_python", {"code": "x = 0"}))["session_id"]
t = threading.Thread(target=lambda: b.tool("execute_python",
                     {"code": "import time; time.sleep(6)", "timeout_ms": 20000}))
t.start()
time.sleep(1.5)             # its sandbox is up, its code running
p0 = polls()
for _ in range(10):
    r = structured(a.tool("execute_python", {"session_id": sid, "code": "x += 1"}))
    assert r["exit_code"] == 0, r
p1 = polls()
t.join()
assert p1 == p0, "10 calls beside a call in flight started %d polls" % (p1 - p0)
print("  mcp-exec: 10 calls beside a call in flight: no poll")
PYEOF
stop_mx

sed -i -e 's|^\(  busy_poll_us:\).*|\1 0|' "$R/mcp-exec.yaml"
grep -q "^  busy_poll_us: 0" "$R/mcp-exec.yaml" || fail "sed missed busy_poll_us"
start_mx
calls 10
[ "$(mpoll polls_total)" = 0 ] || fail "mcp-exec busy_poll_us 0: $(mpoll polls_total) polls"
note "mcp-exec busy_poll_us 0: no poll"
stop_mx
stop_auditd
verify >/dev/null || fail "audit verify"
