#!/bin/bash
# The warm pool of a runtime: gvisor profile (issue 15): runsc's sandbox is
# started ahead with its driver waiting (and pool.preimport done), as a
# native one is.  A new session
# is a pool hit; two pooled sessions differ in random state; each sees an
# empty /workspace and the inputs staged for its call (a file made on the
# host after runsc started); the result says gvisor; stopping leaves no
# sandbox and no runsc behind.  Skipped where runsc cannot run.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
printf 'runtime: gvisor\n\npool:\n  size: 1\n  preimport: [decimal]\n' >>"$R/profiles/default.yaml"
gvisor_or_skip
start_mx

"$PY" - "$PORT" "$HERE" "$T/mx-state" <<'PYEOF' || fail "the gvisor pool (see above)"
import json, os, re, sys, time, urllib.request
sys.path.insert(0, sys.argv[2])
from mcpclient import Http, structured
url = "http://127.0.0.1:%s" % sys.argv[1]

def metric(name):
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    return int(re.search(r"^%s (\d+)$" % name, text, re.M).group(1))

def wait_ready():
    for _ in range(600):
        if metric("stockade_pool_ready") == 1:
            return
        time.sleep(0.05)
    raise AssertionError("the gvisor pool never got ready")

PROBE = """import json, os, random, sys
print(json.dumps({"random": random.random(), "workspace": os.listdir("/workspace"),
                  "input": open("/inputs/in.txt").read(), "preimported": "decimal" in sys.modules}))
open("/workspace/mine", "w").write("x")"""
c = Http(url + "/mcp")
c.initialize()
seen = []
for i in range(2):
    wait_ready()
    hits = metric("stockade_pool_hits_total")
    t0 = time.monotonic()
    s = structured(c.tool("execute_python", {"code": PROBE, "inline_files": [
        {"name": "in.txt", "content": "staged %d" % i, "encoding": "utf-8"}]}))
    ms = (time.monotonic() - t0) * 1000
    assert s["exit_code"] == 0 and s["runtime"] == "gvisor", s
    assert metric("stockade_pool_hits_total") == hits + 1, "not served from the pool"
    r = json.loads(s["stdout"].splitlines()[0])
    assert r["workspace"] == [] and r["input"] == "staged %d" % i and r["preimported"], r
    seen.append(r)
    print("  gvisor session %d from the pool: %.0f ms, /workspace empty, its input staged, decimal preimported" % (i, ms))
assert seen[0]["random"] != seen[1]["random"], seen
print("  two pooled gvisor sessions: random state differs")
PYEOF
stop_mx || fail "mcp-exec exit status $?"
[ -z "$(ls "$T/mx-state/sandboxes" 2>/dev/null)" ] || fail "sandboxes left at stop: $(ls "$T/mx-state/sandboxes")"
left=$(pgrep -f -- "--root=$T/mx-state/sandboxes|--root $T/mx-state/sandboxes" || true)
[ -z "$left" ] || fail "runsc processes left behind: $(ps -o pid,args -p $left | cut -c1-200)"
note "stop: the pooled gvisor sandbox torn down, nothing of runsc left"
stop_auditd
verify >/dev/null || fail "audit verify"
