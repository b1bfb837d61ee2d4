#!/bin/bash
# A `runtime: gvisor` profile over MCP: state across calls, a timeout that
# interrupts, a loop that must be killed, artifacts, `runtime` in the
# result and in the audit record; and a host where runsc cannot run refuses
# the profile (rules check and mcp-exec start) with runsc's reason.
# (netguard policies on gVisor: tests/egress/test_gvisor.sh.)
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
P="$R/profiles/default.yaml"
printf 'runtime: gvisor\n' >>"$P"

# A runsc that is not there: refused at load, never run on the native wall.
st=0; msg=$(STOCKADE_RUNSC=/nonexistent/runsc "$STOCKADE" rules check "$R" 2>&1) || st=$?
[ $st != 0 ] || fail "rules check accepted a gvisor profile without runsc"
echo "$msg" | grep -q "default.yaml:[0-9]*:[0-9]*: runtime: gvisor cannot run on this host: /nonexistent/runsc" ||
	fail "rules check did not say why: $msg"
st=0; msg=$(STOCKADE_RUNSC=/nonexistent/runsc "$MX" --stdio --rules "$R" --state-dir "$S" \
    </dev/null 2>&1 >/dev/null) || st=$?
[ $st != 0 ] && echo "$msg" | grep -q "runtime: gvisor cannot run on this host" ||
	fail "mcp-exec started a gvisor profile without runsc (exit $st): $msg"
note "no runsc: rules check and mcp-exec refuse, naming file:line:column and why"

# This host: if runsc cannot run here, say so and skip (never silently).
gvisor_or_skip


"$PY" - "$MX" "$R" "$S" "$HERE" <<'PYEOF' || fail "gvisor session (see above)"
import json, sys, time
sys.path.insert(0, sys.argv[4])
from mcpclient import Stdio, structured
c = Stdio([sys.argv[1], "--stdio", "--rules", sys.argv[2], "--state-dir", sys.argv[3]])
c.initialize()
t0 = time.monotonic()
s = structured(c.tool("execute_python", {"code": "import os, platform\nx = 41\nprint(os.getuid(), platform.release())"}))
start = time.monotonic() - t0
assert s["runtime"] == "gvisor", s
uid, release = s["stdout"].split()
assert uid == "65534", s
sid = s["session_id"]
# matplotlib builds its font cache in each fresh sandbox: seconds on
# gVisor's ptrace platform, past the 10 s default on a slow host.
s = structured(c.tool("execute_python", {"session_id": sid, "timeout_ms": 45000, "code":
    "x += 1\nimport pandas as pd, matplotlib.pyplot as plt\n"
    "pd.DataFrame({'a': [x]}).to_csv('out.csv', index=False)\n"
    "plt.plot([1, 2]); plt.savefig('p.png'); plt.close()\nprint(x)"}))
assert s["stdout"] == "42\n" and s["exit_code"] == 0, s
names = sorted(a["name"] for a in s["artifacts"])
assert names == ["out.csv", "p.png"], s["artifacts"]
# A timeout interrupts (KeyboardInterrupt through runsc kill) and the
# session lives on with its state.
s = structured(c.tool("execute_python", {"session_id": sid, "timeout_ms": 1500,
    "code": "import time\ntry:\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    print('interrupted')\n    raise"}))
assert s["timed_out"] and s["end"] == "timeout" and "interrupted" in s["stdout"], s
assert not s["session_lost"], s
s = structured(c.tool("execute_python", {"session_id": sid, "code": "print(x)"}))
assert s["stdout"] == "42\n", s
# Code that ignores the interrupt: the whole sandbox is killed.
s = structured(c.tool("execute_python", {"session_id": sid, "timeout_ms": 1000,
    "code": "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: time.sleep(0.1)"}))
assert s["timed_out"] and s["session_lost"], s
gone = c.tool("execute_python", {"session_id": sid, "code": "print(x)"})
assert gone["isError"], gone
# Past the memory limit: the host's OOM killer ends the sandbox, sentry
# and all, and the call says so.
s = structured(c.tool("execute_python", {"code": "b = bytearray(2 << 30)\nprint(len(b))"}))
assert s["oom_killed"] and s["end"] == "oom" and s["session_lost"], s
c.close()
print("  gvisor session: start %.2fs (runsc, kernel %s); state, artifacts, interrupt, kill, OOM" % (start, release))
PYEOF
# Nothing of runsc outlives its sandbox: no gofer, sentry or stub whose
# command line names this test's state directory.
left=$(pgrep -f -- "--root=$S/sandboxes|--root $S/sandboxes" || true)
[ -z "$left" ] || fail "runsc processes left behind: $(ps -o pid,args -p $left | cut -c1-200)"
[ ! -d "$S/sandboxes" ] || [ -z "$(ls "$S/sandboxes")" ] || fail "sandbox dirs left: $(ls "$S/sandboxes")"
note "no runsc process or sandbox directory left behind"
stop_auditd
verify >/dev/null || fail "audit verify"
n=$(grep -a '"event":"code_execution"' "$LOG"/audit-*.log | grep -c '"runtime":"gvisor"')
[ "$n" -ge 6 ] || fail "$n code_execution records with sandbox.runtime gvisor, want 6"
note "the audit trail says sandbox.runtime gvisor for each call; it verifies"
