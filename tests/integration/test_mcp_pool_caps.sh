#!/bin/bash
# The warm pool at the edges (issue 15): a pooled sandbox whose driver died
# while waiting is thrown away as soon as it dies (counted as discarded) and
# built again, so the next session is still a hit; at server.sessions.max_total the pooled
# sandbox goes before an idle session does, and the idle one lives on; a
# pool that cannot refill (the cap) is a counted miss in /metrics and in
# `stockade status`, and the session is still built; a refill does not
# build while a call is in flight.  Two profiles: the
# default one pooled (pool: {size: 1}), "plain" without a pool.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
sed -i -e 's/^    max_total: .*/    max_total: 2/' -e 's/^    max_per_principal: .*/    max_per_principal: 2/' \
    "$R/mcp-exec.yaml"
grep -q '^    max_total: 2$' "$R/mcp-exec.yaml" || fail "sed missed max_total"
cp "$R/profiles/default.yaml" "$R/profiles/plain.yaml"
sed -i 's/^description:.*/description: the default, with no pool/' "$R/profiles/plain.yaml"
printf '\npool:\n  size: 1\n' >>"$R/profiles/default.yaml"
cat >"$R/principals.yaml" <<'EOF'
tokens: []
principals:
  - name: "user:local"
    profiles: [default, plain]
    choose_profile: true
EOF
start_mx

"$PY" - "$PORT" "$HERE" "$T/mx-state" "$BIN/stockade" <<'PYEOF' || fail "the pool at the edges (see above)"
import os, re, signal, subprocess, sys, time, urllib.request
sys.path.insert(0, sys.argv[2])
from mcpclient import Http, structured, McpError
port, state, stockade = sys.argv[1], sys.argv[3], sys.argv[4]
url = "http://127.0.0.1:%s" % port

def metrics():
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    return {k: int(v) for k, v in re.findall(r"^(stockade_pool_\w+) (\d+)$", text, re.M)}

def wait_ready(n, what):
    for _ in range(300):
        if metrics()["stockade_pool_ready"] == n:
            return
        time.sleep(0.05)
    raise AssertionError("pool never held %d (%s): %s" % (n, what, metrics()))

def sandboxes():
    return set(os.listdir(os.path.join(state, "sandboxes")))

def status_pool():
    out = subprocess.run([stockade, "status", "--mcp-state", state],
                         capture_output=True, text=True).stdout
    m = re.search(r"^  pool +(\d+) ready, (\d+) hits, (\d+) misses", out, re.M)
    assert m, out
    return [int(x) for x in m.groups()]

def delta(before, after):
    return {k[len("stockade_pool_"):]: after[k] - before.get(k, 0)
            for k in after if after[k] != before.get(k, 0)}

c = Http(url + "/mcp")
c.initialize()

# 1. The waiting driver dies (its whole sandbox, as an OOM or a stray
# kill would): the loop sees its control socket close, throws it away and
# builds another (after 1 s: no build loop for drivers that keep dying).
wait_ready(1, "at start")
(dead,) = sandboxes()
def cgroup_of(pid):
    try:
        return open("/proc/%s/cgroup" % pid).read()
    except OSError:
        return ""	# gone meanwhile (the machine is shared)
pids = [p for p in os.listdir("/proc") if p.isdigit() and "stockade-" + dead in cgroup_of(p)]
assert pids, "no process in the pooled sandbox's cgroup"
m0 = metrics()		# before the kill: the loop may count it at once
for p in pids:
    os.kill(int(p), signal.SIGKILL)
for _ in range(300):
    if dead not in sandboxes() and metrics()["stockade_pool_ready"] == 1:
        break
    time.sleep(0.05)
else:
    raise AssertionError(("the dead sandbox not replaced", dead, sandboxes(), metrics()))
m1 = metrics()
s = structured(c.tool("execute_python", {"code": "print(6 * 7)"}))
assert s["exit_code"] == 0 and s["stdout"] == "42\n", s
d = delta(m0, metrics())
assert d.get("discarded_total") == 1 and d.get("hits_total") == 1 and \
    "misses_total" not in d, ("a dead pooled sandbox not replaced ahead", d)
c.tool("close_session", {"session_id": s["session_id"]})
print("  a pooled sandbox whose driver died waiting: discarded at once (%s), counted, replaced; the next session a hit" % dead)

# 2. max_total 2: one idle session and one pooled sandbox fill it.  A new
# session of the other profile makes room: the pooled sandbox goes, the
# idle session lives on (its state with it).
wait_ready(1, "after the close")
a = structured(c.tool("execute_python", {"code": "kept = 'still here'"}))
assert a["exit_code"] == 0, a
wait_ready(1, "refilled beside one session")
m0 = metrics()
before = sandboxes()
b = structured(c.tool("execute_python", {"code": "print('plain')", "profile": "plain"}))
assert b["exit_code"] == 0 and b["stdout"] == "plain\n", b
assert metrics()["stockade_pool_ready"] == 0, metrics()
assert len(before - sandboxes()) == 1, ("no pooled sandbox went", before, sandboxes())
r = structured(c.tool("execute_python", {"session_id": a["session_id"], "code": "print(kept)"}))
assert r["stdout"] == "still here\n", ("the idle session went instead of the pooled sandbox", r)
time.sleep(0.3)
assert metrics()["stockade_pool_ready"] == 0, ("refilled past max_total", metrics())
print("  at max_total: the pooled sandbox evicted (%s), the idle session kept its state" % (before - sandboxes()).pop())

# 3. Two sessions hold the cap, so the pool cannot refill: a new session
# of the pooled profile is a miss, counted in /metrics and in `stockade
# status`, and still built (the least recently used idle session goes).
m0, st0 = metrics(), status_pool()
assert m0["stockade_pool_misses_total"] == 0, m0
s = structured(c.tool("execute_python", {"code": "print('built')"}))
assert s["exit_code"] == 0 and s["stdout"] == "built\n", s
d = delta(m0, metrics())
assert d.get("misses_total") == 1 and "hits_total" not in d, ("no miss counted", d)
st1 = status_pool()
assert st1[2] == st0[2] + 1 and st1[1] == st0[1], ("stockade status: misses", st0, st1)
print("  pool empty at the cap: a miss (/metrics misses %d -> %d, stockade status %d -> %d), the session built"
      % (m0["stockade_pool_misses_total"], m0["stockade_pool_misses_total"] + 1, st0[2], st1[2]))

# 4. A refill holds the loop for a build: not while a call is in flight
# (up to POOL_DEFER_MAX_MS, 500 ms).  A pooled session runs 0.8 s; 0.3 s
# in, no other sandbox has been started.
for x in (a, s):
    c.tool("close_session", {"session_id": x["session_id"]})
wait_ready(1, "after closing every session")
import threading
out = {}
t0 = time.monotonic()
th = threading.Thread(target=lambda: out.update(r=structured(
    c.tool("execute_python", {"code": "import time; time.sleep(0.8)"}))))
th.start()
time.sleep(0.3)
during = sandboxes()
th.join()
assert out["r"]["exit_code"] == 0, out
assert len(during) == 1, ("a build while a call was in flight", during)
wait_ready(1, "after the call")
print("  a refill waits for the call in flight: 0.3 s into a 0.8 s call, one sandbox (%.1f s in all)" % (time.monotonic() - t0))
PYEOF
stop_mx || fail "mcp-exec exit status $?"
stop_auditd
verify >/dev/null || fail "audit verify"
