"""Two sessions from a profile's warm pool, on the runtime named: each a
pool hit, its random state its own, /workspace empty, the input staged
for its call (after the sandbox started), pool.preimport (decimal) loaded.
Used by test_mcp_pool_gvisor.sh and test_mcp_pool_wasm.sh.

Usage: pool_runtime.py PORT RUNTIME"""
import json, os, re, sys, time, urllib.request
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcpclient import Http, structured

port, runtime = sys.argv[1:3]
url = "http://127.0.0.1:%s" % port


def metric(name):
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    return int(re.search(r"^%s (\d+)$" % name, text, re.M).group(1))


def wait_ready():
    for _ in range(600):
        if metric("stockade_pool_ready") == 1:
            return
        time.sleep(0.05)
    raise AssertionError("the %s pool never got ready" % runtime)


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
    assert s["exit_code"] == 0 and s["runtime"] == runtime, s
    assert metric("stockade_pool_hits_total") == hits + 1, "not served from the pool"
    r = json.loads(s["stdout"].splitlines()[0])
    assert r["workspace"] == [] and r["input"] == "staged %d" % i and r["preimported"], r
    seen.append(r)
    print("  %s session %d from the pool: %.0f ms, /workspace empty, its input staged, decimal preimported" % (runtime, i, ms))
assert seen[0]["random"] != seen[1]["random"], seen
print("  two pooled %s sessions: random state differs" % runtime)
