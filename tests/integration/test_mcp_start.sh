#!/bin/bash
# A new session's driver starts while the server serves others (issue 15).
# The sandbox's driver is a stand-in that loads the real driver.py after
# what its mode file says:
#   slow     1.5 s before the real driver: calls in another session go on
#            meanwhile (a server that waited for "ready" would hold them
#            all), and the new session's call then runs as usual;
#   exit     exits before "ready";
#   chatter  says "done" before any "ready";
# the last two fail only their own call, with "the session's Python driver
# did not start", and close the session with that reason in the audit
# trail.  A call cancelled while its driver starts never runs: no
# code_execution with end "exited", the session closed "cancelled before
# the code ran".  A sandbox that cannot be set up (its driver directory
# gone) fails only its call.  A stop while a driver starts ends cleanly.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
DRV="$T/drv"
mkdir -m 0755 "$DRV"
cp "$ROOT/mcp-exec/driver/driver.py" "$DRV/real.py"
cat >"$DRV/driver.py" <<'EOF'
import importlib.util, os, socket, sys, time
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "mode")) as f:
    mode = f.read().strip()
spec = importlib.util.spec_from_file_location("real", os.path.join(here, "real.py"))
real = importlib.util.module_from_spec(spec)
spec.loader.exec_module(real)
if mode == "slow":
    time.sleep(1.5)
elif mode == "exit":
    sys.exit(3)
elif mode == "chatter":
    real.send_frame(socket.socket(fileno=real.CONTROL_FD),
                    {"op": "done", "id": 1, "exit_code": 0})
    time.sleep(30)
real.main()
EOF
echo normal >"$DRV/mode"
chmod 0644 "$DRV"/*
sed -i -e "s|^\(  driver_dir:\).*|\1 $DRV|" "$R/mcp-exec.yaml"
grep -q "driver_dir: $DRV\$" "$R/mcp-exec.yaml" || fail "sed missed driver_dir"
start_mx

"$PY" - "$PORT" "$HERE" "$DRV/mode" "$LOG" <<'PYEOF' || fail "driver start (see above)"
import glob, json, os, sys, threading, time
sys.path.insert(0, sys.argv[2])
from mcpclient import Http, McpError, structured
url, mode_file, log = "http://127.0.0.1:%s/mcp" % sys.argv[1], sys.argv[3], sys.argv[4]

def mode(m):
    with open(mode_file, "w") as f:
        f.write(m + "\n")

def client():
    c = Http(url)
    c.initialize()
    return c

def records(event):
    out = []
    for p in sorted(glob.glob(log + "/audit-*.log")):
        for line in open(p):
            line = line.strip("\0\n")     # the zero-filled tail
            if not line:
                continue
            r = json.loads(line)
            if r.get("event") == event:
                out.append(r)
    return out

def closed_reason(sid):
    for _ in range(100):
        for r in records("session_closed"):
            if r.get("session_id") == sid:
                return r["reason"]
        time.sleep(0.05)
    raise AssertionError("no session_closed for %s" % sid)

b = client()
sid = structured(b.tool("execute_python", {"code": "x = 41"}))["session_id"]

# slow: the other session's calls are answered while the driver starts.
mode("slow")
a = client()
box = {}
t = threading.Thread(target=lambda: box.update(r=a.tool("execute_python",
                     {"code": "print(6 * 7)"})))
t.start()
time.sleep(0.2)     # its driver is starting now
n = 0
while t.is_alive():
    r = structured(b.tool("execute_python", {"code": "x += 1; print(x)",
                                             "session_id": sid}))
    assert r["exit_code"] == 0, r
    n += 1
    time.sleep(0.01)
t.join()
assert n >= 5, "only %d calls in the other session while a driver started" % n
r = structured(box["r"])
assert r["exit_code"] == 0 and r["stdout"] == "42\n", r
print("  %d calls in another session were answered while a driver took 1.5 s to start" % n)

# exit, chatter: only the new session's call fails, and says why.
for m in ("exit", "chatter"):
    mode(m)
    r = a.tool("execute_python", {"code": "print(1)"})
    assert r.get("isError"), (m, r)
    text = r["content"][0]["text"]
    assert "did not start" in text, (m, text)
    s = r.get("structuredContent", {}).get("session_id")
    if s:
        assert closed_reason(s) == "the session's Python driver did not start", m
    r = structured(b.tool("execute_python", {"code": "print(x)", "session_id": sid}))
    assert r["stdout"].strip().isdigit(), r
    why = text[text.find("did not start") - 40:text.find("did not start") + 13]
    print("  %s: the call failed: %s" % (m, why))

# cancelled while the driver starts: the code never runs.
mode("slow")
before = len(records("code_execution"))
a.next_id = 1000
def cancelled_call():
    try:
        box["c"] = a.exchange({"jsonrpc": "2.0", "id": 1000, "method":
            "tools/call", "params": {"name": "execute_python", "arguments":
            {"code": "print('ran')"}}})
    except McpError:        # cancelled: no reply, as the spec says
        box["c"] = None
t = threading.Thread(target=cancelled_call)
t.start()
time.sleep(0.3)
a.notify("notifications/cancelled", {"requestId": 1000, "reason": "test"})
t.join(timeout=30)
assert not t.is_alive(), "the cancelled call never ended"
assert box["c"] is None, box["c"]
started = [r for r in records("execution_started") if r.get("code_hash")]
sid_c = started[-1]["session_id"]
assert closed_reason(sid_c) == "cancelled before the code ran", closed_reason(sid_c)
for r in records("code_execution")[before:]:
    assert not (r.get("session_id") == sid_c and r.get("end") == "exited"), r
print("  a call cancelled while its driver started never ran; its session closed")

# The driver's directory gone: the sandbox cannot mount it, and the new
# session's call says so; the session that exists goes on.
os.rename(os.path.dirname(mode_file), os.path.dirname(mode_file) + ".gone")
r = a.tool("execute_python", {"code": "print(1)"})
text = r["content"][0]["text"]
assert r.get("isError") and "sandbox setup failed" in text, r
for _ in range(100):    # its session_closed gives init's reason too
    if "sandbox setup failed" in records("session_closed")[-1]["reason"]:
        break
    time.sleep(0.05)
else:
    raise AssertionError(records("session_closed")[-1])
r = structured(b.tool("execute_python", {"code": "print(x)", "session_id": sid}))
assert r["stdout"].strip().isdigit(), r
os.rename(os.path.dirname(mode_file) + ".gone", os.path.dirname(mode_file))
print("  a sandbox that cannot be set up fails its call: %s" % text[:90])

# A stop while a driver starts: left to the shell's SIGTERM below.
def stopped_call():
    try:
        a.tool("execute_python", {"code": "print('ran')"})
    except Exception:       # the server went away: the call's end
        pass
threading.Thread(target=stopped_call, daemon=True).start()
time.sleep(0.3)
PYEOF
stop_mx || fail "mcp-exec exited non-zero when stopped while a driver started"
verify >/dev/null || fail "audit trail does not verify"
note "driver start: off the loop, failures and cancels confined to their call"
