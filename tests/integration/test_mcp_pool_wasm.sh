#!/bin/bash
# The warm pool of a runtime: wasm profile: node and Pyodide started ahead
# (~3 s), the driver waiting with pool.preimport done; a new session is a
# pool hit; two pooled sessions differ in random state; each sees an empty
# /workspace and the inputs staged for its call (after Pyodide mounted
# /inputs); stopping leaves no sandbox behind.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
sed -i "s|^\(  driver_dir:\).*|\1 $BIN/share/stockade/driver|" "$R/mcp-exec.yaml"
sed -i 's/^  memory: .*/  memory: 768M/' "$R/profiles/default.yaml"
printf 'runtime: wasm\n\npool:\n  size: 1\n  preimport: [decimal]\n' >>"$R/profiles/default.yaml"
start_mx

"$PY" - "$PORT" "$HERE" <<'PYEOF' || fail "the wasm pool (see above)"
import json, re, sys, time, urllib.request
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
    raise AssertionError("the wasm pool never got ready")

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
    assert s["exit_code"] == 0 and s["runtime"] == "wasm", s
    assert metric("stockade_pool_hits_total") == hits + 1, "not served from the pool"
    r = json.loads(s["stdout"].splitlines()[0])
    assert r["workspace"] == [] and r["input"] == "staged %d" % i and r["preimported"], r
    seen.append(r)
    print("  wasm session %d from the pool: %.0f ms, /workspace empty, its input staged, decimal preimported" % (i, ms))
assert seen[0]["random"] != seen[1]["random"], seen
print("  two pooled wasm sessions: random state differs")
PYEOF
stop_mx || fail "mcp-exec exit status $?"
[ -z "$(ls "$T/mx-state/sandboxes" 2>/dev/null)" ] || fail "sandboxes left at stop: $(ls "$T/mx-state/sandboxes")"
note "stop: the pooled wasm sandbox torn down"
stop_auditd
verify >/dev/null || fail "audit verify"
