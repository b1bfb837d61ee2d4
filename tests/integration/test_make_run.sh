#!/bin/bash
# `make run` as a newcomer uses it: dist/run.sh serves a policy directory
# itself (a copy of rules/ here, STOCKADE_RULES) with state in scratch
# (STOCKADE_STATE), and everything it prints works when pasted: the stdio
# client config, the HTTP config, the Inspector line, `stockade status`,
# `mcp-exec run`, and the verify command it prints at the end.  An edit of
# the rules plus `make reload` (dist/reload.sh) applies them: a new
# command, a new profile for new sessions while an old session keeps its
# own; a broken edit is refused and the running rules stay.
. "$(dirname "$0")/lib.sh"

RUN_PID=""
stop_run() {
	[ -n "$RUN_PID" ] || return 0
	kill -TERM "$RUN_PID" 2>/dev/null || true
	wait "$RUN_PID" || true
	RUN_PID=""
}
trap 'st=$?; [ $st = 0 ] || tail -30 "$T/run.err" >&2; stop_run; cleanup' EXIT

chmod 0711 "$T"
cp -R "$ROOT/rules" "$T/rules"
export STOCKADE_RULES="$T/rules" STOCKADE_STATE="$T/state" MCP_PORT=$(free_port)
(cd "$ROOT" && BUILD=$BUILD exec dist/run.sh >"$T/run.out" 2>"$T/run.err") &
RUN_PID=$!
for _ in $(seq 1 300); do
	grep -q "Stockade is running" "$T/run.out" 2>/dev/null && break
	kill -0 "$RUN_PID" 2>/dev/null || fail "dist/run.sh died: $(tail -5 "$T/run.err")"
	sleep 0.1
done
grep -q "Stockade is running" "$T/run.out" || fail "dist/run.sh did not come up"

reload() { (cd "$ROOT" && BUILD=$BUILD dist/reload.sh) >>"$T/reload.out" 2>&1; }
export -f reload
export ROOT BUILD T

"$PY" - "$T/run.out" "$HERE" <<'PYEOF' || fail "what make run printed (see above)"
import json, os, re, subprocess, sys, time
sys.path.insert(0, sys.argv[2])
from mcpclient import Stdio, Http, McpError, structured

out = open(sys.argv[1]).read()
T = os.environ["T"]

def block(after, before):
    """The JSON config printed between two lines of make run's message."""
    text = out[out.index(after):out.index(before)]
    return json.loads(text[text.index("{"):text.rindex("}") + 1])

def line(prefix):
    """A printed command, its continuation lines joined."""
    m = re.search(r"^ *(" + re.escape(prefix) + r".*?)$(?<!\\)", out, re.M | re.S)
    return m.group(1).replace("\\\n", " ")

def sh(cmd, timeout=60):
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, "%s: exit %d: %s" % (cmd, p.returncode,
                                                   p.stderr[-500:])
    return p.stdout

def run_py(client, code, **kw):
    return structured(client.tool("execute_python", dict(code=code, **kw)))

# The stdio config, pasted into a client.
cfg = block("Claude Desktop", "VS Code")["mcpServers"]["stockade"]
c = Stdio([cfg["command"]] + cfg["args"], stderr=open(T + "/stdio.err", "w"))
c.initialize()
r = run_py(c, "print(6 * 7)")
assert r["stdout"] == "42\n" and r["exit_code"] == 0, r
assert c.close() == 0
print("  stdio config: a call runs")

# The HTTP config.
url = block("VS Code", "MCP Inspector")["servers"]["stockade"]["url"]
h = Http(url)
h.initialize()
r = run_py(h, "x = 6 * 7\nprint(x)")
assert r["stdout"] == "42\n", r
old = r["session_id"]
print("  HTTP config: a call runs")

# The tools it says the server offers are the ones tools/list lists.
said = re.search(r"^Connect an MCP client \(tools: (.*)\):$", out, re.M)
assert said, "make run names no tools"
listed = [t["name"] for t in h.call("tools/list")["tools"]]
assert said.group(1).split(", ") == listed, (said.group(1), listed)
print("  the tools it names: all %d of tools/list" % len(listed))

# The Inspector's line (npx fetches Node 22 and the Inspector from npm).
o = sh(line("npx -y"), timeout=300)
assert '"execute_python"' in o, o[-500:]
print("  Inspector line: lists the tools")

o = sh(line(out.split("Try:")[1].split()[0] + " status"))
assert old in o, "status does not show the live session: " + o
o = sh(line(out.split("Try:")[1].split()[0].replace("stockade", "mcp-exec") + " run"))
assert json.loads(o)["stdout"] == "10\n", o
print("  stockade status shows the session; mcp-exec run runs")

def tools():
    return {t["name"]: t for t in h.call("tools/list")["tools"]}

def until(pred, what):
    for _ in range(100):
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(what)

# Edit the rules, make reload: a new command is offered.
rules = os.environ["STOCKADE_RULES"]
with open(rules + "/commands.yaml", "a") as f:
    f.write("  echo-test:\n    path: /bin/echo\n    description: echo\n"
            "    max_args: 1\n    arg_pattern: '^[a-z]{1,8}$'\n")
sh("reload")
until(lambda: "echo-test" in json.dumps(tools()["run_command"]),
      "make reload did not apply the new command")
r = structured(h.tool("run_command", {"command": "echo-test",
                                      "args": ["hello"]}))
assert r["stdout"] == "hello\n", r
print("  edit + make reload: the new command runs")

# A new profile applies to new sessions; the old session keeps its own.
p = rules + "/profiles/default.yaml"
text = open(p).read()
text = text.replace("default_ms: 10000", "default_ms: 2000")
text = text.replace("max_ms: 60000", "max_ms: 5000")
open(p, "w").write(text)
sh("reload")
until(lambda: tools()["execute_python"]["inputSchema"]["properties"]
      ["timeout_ms"]["maximum"] == 5000, "the new profile was not applied")
r = run_py(h, "print(x)", session_id=old, timeout_ms=20000)
assert r["stdout"] == "42\n", r
r = h.tool("execute_python", {"code": "1", "timeout_ms": 20000})
assert r["isError"] and "maximum of 5000" in r["content"][0]["text"], r
print("  a reloaded profile: new sessions only; the old one keeps its own")

# A broken edit: refused, recorded, and the running rules stay.
with open(rules + "/patterns.yaml", "a") as f:
    f.write("  - id: BROKEN\n    regex: '(unclosed'\n")
pid = open(os.environ["STOCKADE_STATE"] + "/run/mcp-exec.pid").read().strip()
os.kill(int(pid), 1)
def refused():
    log = "".join(open(os.path.join(dp, f)).read() for dp, _, fs in
                  os.walk(os.environ["STOCKADE_STATE"] + "/audit")
                  for f in fs if f.endswith(".log"))
    return '"program":"mcp-exec"' in log and '"ok":false' in log
until(refused, "the refused reload is not in the audit trail")
# The record names the error itself, file:line:column, not "see the log".
import re
bad = [json.loads(l) for dp, _, fs in os.walk(os.environ["STOCKADE_STATE"] + "/audit")
       for f in fs if f.endswith(".log") for l in open(os.path.join(dp, f))
       if '"policy_load"' in l and '"ok":false' in l]
assert bad and re.search(r"patterns\.yaml:\d+:\d+: ", bad[-1]["error"]), bad
assert "echo-test" in json.dumps(tools()["run_command"])
assert run_py(h, "print(x)", session_id=old)["stdout"] == "42\n"
print("  a broken edit: refused and recorded; the running rules stay")
PYEOF

stop_run
cmd=$(sed -n 's/^stopped; the log verifies with: //p' "$T/run.out")
[ -n "$cmd" ] || fail "make run printed no verify command when it stopped"
$cmd >/dev/null || fail "the printed verify command fails: $cmd"
grep -a '"event":"policy_load"' "$T"/state/audit/audit-*.log |
    grep '"program":"mcp-exec"' | grep -q '"ok":true' ||
    fail "no policy_load record of mcp-exec"
note "stopped cleanly; the printed verify command verifies the log"
