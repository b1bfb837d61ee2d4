#!/bin/bash
# A `runtime: wasm` profile over MCP: Pyodide on node inside the native
# sandbox.  State across calls, stdout/stderr bounded with truncated, exit
# codes, a timeout that interrupts (the session lives on), one that must be
# killed, files in /workspace and /inputs, artifacts, Jupyter results, the
# memory limit, run_command refused, and the audit record naming the
# engine, Pyodide and the module's sha256.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
# The build's driver directory: the checkout's has no Pyodide (make runs
# npm ci beside the installed driver).
D="$BIN/share/stockade/driver"
sed -i "s|^\(  driver_dir:\).*|\1 $D|" "$R/mcp-exec.yaml"
P="$R/profiles/default.yaml"
printf 'runtime: wasm\n' >>"$P"
sed -i 's/^  stdout_max: .*/  stdout_max: 4K/; s/^  memory: .*/  memory: 768M/' "$P"
M=$(sha256sum "$D/node_modules/pyodide/pyodide.asm.wasm" | cut -d' ' -f1)
# No node (or one too old): refused at load, never run some other way.
st=0; msg=$(STOCKADE_NODE=/nonexistent/node "$STOCKADE" rules check "$R" 2>&1) || st=$?
[ $st != 0 ] || fail "rules check accepted a wasm profile without node"
echo "$msg" | grep -q "default.yaml:[0-9]*:[0-9]*: runtime: wasm cannot run on this host: /nonexistent/node" ||
	fail "rules check did not say why: $msg"
note "no node: rules check refuses the wasm profile, naming file:line:column and why"
wasm_or_skip
IN="$T/in"; mkdir -p "$IN"; printf 'a,b\n1,2\n' >"$IN/data.csv"
sed -i "s#^  roots: .*#  roots: [$IN]#" "$P"

"$PY" - "$MX" "$R" "$S" "$HERE" "$IN/data.csv" <<'PYEOF' || fail "wasm session (see above)"
import json, sys, time
sys.path.insert(0, sys.argv[4])
from mcpclient import Stdio, structured
c = Stdio([sys.argv[1], "--stdio", "--rules", sys.argv[2], "--state-dir", sys.argv[3]])
c.initialize()
t0 = time.monotonic()
s = structured(c.tool("execute_python", {"timeout_ms": 30000, "code":
    "import sys, os\nx = 2**100\nprint(sys.platform, os.getcwd())\nx"}))
start = time.monotonic() - t0
assert s["runtime"] == "wasm" and s["exit_code"] == 0, s
assert s["stdout"] == "emscripten /workspace\n", s
assert s["results"][0]["text"] == str(2**100), s
sid = s["session_id"]
# State, stderr, the exit code of an uncaught exception and of SystemExit.
s = structured(c.tool("execute_python", {"session_id": sid, "code":
    "import sys\nprint('warn', file=sys.stderr)\nx += 1\n1/0"}))
assert s["exit_code"] == 1 and "ZeroDivisionError" in s["stderr"], s
assert s["stderr"].startswith("warn\n"), s
s = structured(c.tool("execute_python", {"session_id": sid, "code": "raise SystemExit(3)"}))
assert s["exit_code"] == 3, s
# Output past stdout_max: head and tail kept, truncated, bytes counted.
s = structured(c.tool("execute_python", {"session_id": sid, "code":
    "for i in range(20000): print(i)"}))
assert s["truncated"] and s["stdout_bytes"] == sum(len(str(i)) + 1 for i in range(20000)), s
assert s["stdout"].startswith("0\n1\n") and s["stdout"].endswith("19999\n"), s["stdout"][-40:]
# Files: /inputs read-only, /workspace written and returned as artifacts;
# the zone files of the host's tzdata.
s = structured(c.tool("execute_python", {"session_id": sid, "files": [sys.argv[5]], "code":
    "import csv, zoneinfo, datetime\nrows = list(csv.reader(open('/inputs/data.csv')))\n"
    "open('/workspace/out.csv', 'w').write('n\\n%d\\n' % len(rows))\n"
    "for p in ('/inputs/x', '/opt/stockade/driver/x', '/usr/share/zoneinfo/x'):\n"
    "    try:\n        open(p, 'w')\n    except PermissionError as e:\n        print('ro', e.errno)\n"
    "print(datetime.datetime(2024, 2, 29, 12, tzinfo=zoneinfo.ZoneInfo('America/New_York')).utcoffset())\n"
    "display({'rows': len(rows)})"}))
assert s["exit_code"] == 0, s
assert [a["name"] for a in s["artifacts"]] == ["out.csv"], s
assert "-1 day, 19:00:00" in s["stdout"] and s["stdout"].count("ro 2\n") == 3, s
assert s["results"][0].get("json") == {"rows": 2}, s
# The seed's own examples, which need only the standard library: big
# integers, dates across a leap day and a DST change, statistics, regexes.
s = structured(c.tool("execute_python", {"session_id": sid, "code":
    "import math, datetime, zoneinfo, statistics, re, fractions, decimal\n"
    "ny = zoneinfo.ZoneInfo('America/New_York')\n"
    "a = datetime.datetime(2024, 2, 28, 12, tzinfo=ny); b = datetime.datetime(2024, 3, 11, 12, tzinfo=ny)\n"
    "{'digits': len(str(math.factorial(1000))), 'mersenne': pow(3, 2**127 - 2, 2**127 - 1) == 1,\n"
    " 'days': (b - a).days, 'hours': (b.astimezone(datetime.timezone.utc) - a.astimezone(datetime.timezone.utc)) / datetime.timedelta(hours=1),\n"
    " 'leap': (datetime.date(2024, 3, 1) - datetime.date(2024, 2, 28)).days,\n"
    " 'stdev': round(statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9]), 6),\n"
    " 'emails': re.findall(r'[\\w.]+@[\\w.]+', 'a@x.org, b.c@y.net'),\n"
    " 'exact': str(fractions.Fraction(1, 3) + fractions.Fraction(1, 6)), 'dec': str(decimal.Decimal('0.1') * 3)}"}))
assert s["exit_code"] == 0, s
assert s["results"][0]["json"] == {"digits": 2568, "mersenne": True, "days": 12, "hours": 287.0,
    "leap": 2, "stdev": 2.13809, "emails": ["a@x.org", "b.c@y.net"], "exact": "1/2", "dec": "0.3"}, s["results"]
# Python reaches all of JavaScript through Pyodide's bridge: node's
# permission model holds it (no child process, no file outside the
# sandbox's, no process.binding).  The imports settle between calls.
s = structured(c.tool("execute_python", {"session_id": sid, "code":
    "from pyodide.code import run_js\n"
    "run_js(\"import('node:child_process').then(m => { try { m.execSync('id'); globalThis.cp = 'ran' } catch (e) { globalThis.cp = e.code } });"
    " import('node:fs').then(m => { try { m.readFileSync('/etc/passwd'); globalThis.fsr = 'read' } catch (e) { globalThis.fsr = e.code } });"
    " try { process.binding('spawn_sync'); globalThis.pb = 'bound' } catch (e) { globalThis.pb = e.code }\")"}))
assert s["exit_code"] == 0, s
s = structured(c.tool("execute_python", {"session_id": sid, "code":
    "import js\nprint(js.globalThis.cp, js.globalThis.fsr, js.globalThis.pb)"}))
assert s["stdout"] == "ERR_ACCESS_DENIED ERR_ACCESS_DENIED ERR_ACCESS_DENIED\n", s
# What this runtime lacks: a missing module says so, as in Python.
s = structured(c.tool("execute_python", {"session_id": sid, "code": "import numpy"}))
assert s["exit_code"] == 1 and "ModuleNotFoundError: No module named 'numpy'" in s["stderr"], s
# A timeout interrupts (Pyodide's interrupt buffer) and the session lives.
s = structured(c.tool("execute_python", {"session_id": sid, "timeout_ms": 1500,
    "code": "try:\n    while True: pass\nexcept KeyboardInterrupt:\n    print('interrupted')\n    raise"}))
assert s["timed_out"] and s["end"] == "timeout" and "interrupted" in s["stdout"], s
assert not s["session_lost"], s
s = structured(c.tool("execute_python", {"session_id": sid, "code": "print(x)"}))
assert s["stdout"] == str(2**100 + 1) + "\n", s
# Code that swallows the interrupt: the sandbox is killed with it.
s = structured(c.tool("execute_python", {"session_id": sid, "timeout_ms": 1000,
    "code": "while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass"}))
assert s["timed_out"] and s["session_lost"], s
assert c.tool("execute_python", {"session_id": sid, "code": "print(x)"})["isError"]
# run_command has no place here.
r = c.tool("run_command", {"command": "ls"})
assert r["isError"] and "not available on the wasm runtime" in json.dumps(r), r
# Past the memory limit: the cgroup's OOM killer ends the sandbox.
s = structured(c.tool("execute_python", {"timeout_ms": 30000, "code":
    "b = []\nwhile True: b.append(bytearray(64 << 20))"}))
assert s["session_lost"] and (s["oom_killed"] or s["exit_code"] != 0), s
c.close()
print("  wasm session: first call %.2fs; state, streams, truncation, files, results, interrupt, kill, memory (%s)" % (start, s["end"]))
PYEOF
[ ! -d "$S/sandboxes" ] || [ -z "$(ls "$S/sandboxes")" ] || fail "sandbox dirs left: $(ls "$S/sandboxes")"
note "wasm session: results, streams, truncation, files, the seed's examples, node's permission model, interrupt then kill, memory limit, run_command refused"
stop_auditd
verify >/dev/null || fail "audit verify"
rec=$(grep -a '"event":"code_execution"' "$LOG"/audit-*.log | grep '"runtime":"wasm"' | head -1)
[ -n "$rec" ] || fail "no code_execution record with sandbox.runtime wasm"
echo "$rec" | grep -q "\"module_sha256\":\"sha256:$M\"" || fail "record lacks the module's sha256 $M: $rec"
echo "$rec" | grep -q '"engine":"node v[0-9]' && echo "$rec" | grep -q '"pyodide":"[0-9]' ||
	fail "record lacks engine or pyodide: $rec"
note "the audit trail names sandbox.runtime wasm, node, Pyodide and the module's sha256; it verifies"
