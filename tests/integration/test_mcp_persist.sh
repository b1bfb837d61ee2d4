#!/bin/bash
# What a call changes in state_dir is written at most every 200 ms
# (sessions/persist.c), not twice a call: 30 back-to-back calls in one
# session, with a quota on the stdio principal, replace the status file
# and quota-usage.json a handful of times (counted with inotify), and
# within the delay both show all 30 calls; a clean stop keeps the usage.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
cat >"$R/principals.yaml" <<'EOF'
tokens: []
principals:
  - name: "user:local"
    quotas:
      calls_per_minute: 1000
EOF
sed -i -e "s|^\(  local_principal:\).*|\1 user:local|" "$R/mcp-exec.yaml"
"$BIN/stockade" rules check "$R" >/dev/null || fail "rules check refuses the test's rules"

# The quota clock stands still: the minute's count cannot roll over.
echo 1900000000 >"$T/clock"
STOCKADE_QUOTA_TEST_CLOCK="$T/clock" "$PY" - "$MX" "$R" "$S" <<'EOF' || fail "coalesced state writes (see above)"
import ctypes, glob, json, os, struct, sys, time
sys.path.insert(0, "tests/integration")
from mcpclient import Stdio, structured

mx, rules, state = sys.argv[1:4]
IN_MOVED_TO = 0x80
libc = ctypes.CDLL(None, use_errno=True)

c = Stdio([mx, "--stdio", "--rules", rules, "--state-dir", state])
c.initialize()
r = c.tool("execute_python", {"code": "1+1"})
assert not r.get("isError"), r
sid = structured(r)["session_id"]
time.sleep(0.5)			# the first call's writes are out
ino = libc.inotify_init1(os.O_NONBLOCK)
assert ino >= 0 and libc.inotify_add_watch(ino, state.encode(), IN_MOVED_TO) >= 0
t0 = time.monotonic()
for i in range(30):
    r = c.tool("execute_python", {"code": "1+1", "session_id": sid})
    assert not r.get("isError"), r
took = time.monotonic() - t0
time.sleep(0.5)			# the timer's write, 200 ms after the last call
renames = {}
try:
    data = os.read(ino, 65536)
except BlockingIOError:
    data = b""
off = 0
while off < len(data):
    _wd, _mask, _cookie, n = struct.unpack_from("iIII", data, off)
    name = data[off + 16:off + 16 + n].rstrip(b"\0").decode()
    off += 16 + n
    kind = "status" if name.startswith("sessions-") else name
    renames[kind] = renames.get(kind, 0) + 1
# One write per 200 ms of calls, and the last one after them.
most = int(took / 0.2) + 2
print("  30 calls in %.2f s: status file written %d times, quota-usage.json %d (at most %d each; before: one each per call start and end)"
      % (took, renames.get("status", 0), renames.get("quota-usage.json", 0), most))
assert 1 <= renames.get("status", 0) <= most, renames
assert 1 <= renames.get("quota-usage.json", 0) <= most, renames
st = json.load(open(glob.glob(state + "/sessions-*.json")[0]))
q = [a for a in st["quotas"] if a["subject"] == "principal:user:local"][0]["quotas"]
assert q["calls_per_minute"]["used"] >= 31, q
u = [a for a in json.load(open(state + "/quota-usage.json"))["accounts"]
     if a["subject"] == "principal:user:local"][0]
assert u["minute_calls"] >= 31, u
print("  status and quota-usage.json show all 31 calls within the delay")
# One more call, then a clean stop at once: the usage is kept at exit.
r = c.tool("execute_python", {"code": "1+1", "session_id": sid})
assert c.close() == 0
u = [a for a in json.load(open(state + "/quota-usage.json"))["accounts"]
     if a["subject"] == "principal:user:local"][0]
assert u["minute_calls"] >= 32, u
print("  the last call's usage is written at exit")
EOF
stop_auditd
verify >/dev/null
