#!/bin/bash
# Issue 32, finding 3: sandboxed code (or its client) cannot make its own
# records too big to keep.  A packages session whose code makes 1024 long
# NAME-VERSION.dist-info directories, a call that leaves 300 long-named
# artifacts, stages 16 long-named inputs and hits 200 flag patterns, and a
# refused run_command with 64 long arguments: every record lands (no
# event_rejected), keeps its exit code and hashes, and says what it cut
# (<list>_truncated, <list>_count).  netguard is a stand-in that accepts
# attaches: the mirror policy is never used to reach anything.  Last,
# `mcp-exec run` with 300 long-named artifacts: its code_execution too.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
cp -R "$R" "$T/plain"
sed -i "s|^  max_count: .*|  max_count: 1000|" "$T/plain/profiles/default.yaml"
# The packages profile's network and layer, on the default profile; room
# for many artifacts; 200 flag rules the second call's code all hits.
sed -i -e "s|^network:.*|network: mirror|" -e "s|^  max_count: .*|  max_count: 1000|" \
    "$R/profiles/default.yaml"
printf 'packages:\n  install: true\n  index: https://pypi.org/simple\n' >>"$R/profiles/default.yaml"
grep -q '^  max_count: 1000$' "$R/profiles/default.yaml" || fail "sed missed max_count"
for i in $(seq -w 1 200); do
	printf '  - id: BUDGET-%s\n    description: a hit for the record budget\n    severity: low\n    action: flag\n    regex: "budget_hit_%s_"\n' "$i" "$i"
done >>"$R/patterns.yaml"
"$STOCKADE" rules check "$R" >/dev/null || fail "rules check: $("$STOCKADE" rules check "$R" 2>&1)"

# Every request gets {"ok": true}; a netns descriptor sent along is
# dropped with the ancillary data a plain read leaves unread.
cat >"$T/ng.py" <<'EOF'
import socketserver, struct, sys

class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        while len(hdr := self.rfile.read(4)) == 4:
            self.rfile.read(struct.unpack(">I", hdr)[0])
            self.wfile.write(struct.pack(">I", 12) + b'{"ok": true}')

class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

Server(sys.argv[1], Handler).serve_forever()
EOF
"$PY" "$T/ng.py" "$T/ng.sock" 2>>"$T/ng.err" &
NG_PID=$!
trap 'kill $NG_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -S "$T/ng.sock" ] && break; sleep 0.02; done
[ -S "$T/ng.sock" ] || fail "stand-in netguard did not start"

"$PY" - "$HERE" "$MX" "$R" "$S" "$T/ng.sock" "$T/mx.err" "$LOG" <<'PYEOF' || fail "records within budget (see above)"
import glob, json, sys, time
sys.path.insert(0, sys.argv[1])
from mcpclient import Stdio, structured
mx, rules, state, ng, err, log = sys.argv[2:8]
c = Stdio([mx, "--stdio", "--rules", rules, "--state-dir", state,
           "--netguard-socket", ng], stderr=open(err, "a"))
c.initialize()

def records(event):
    out = []
    for f in sorted(glob.glob(log + "/audit-*.log")):
        for l in open(f).read().split("\0", 1)[0].splitlines():
            r = json.loads(l)
            if r["event"] == event:
                out.append(r)
    return out

def wait_record(event, pred):
    for _ in range(250):
        got = [r for r in records(event) if pred(r)]
        if got:
            return got[0]
        time.sleep(0.02)
    raise AssertionError("no %s record; rejected: %s" % (event, records("event_rejected")))

# 1. A packages session's layer with 1024 long dist-info names.
code = """import os, sysconfig
site = sysconfig.get_path("purelib", "posix_user", vars={"userbase": os.environ["PYTHONUSERBASE"]})
for i in range(1024):
    os.makedirs("%s/p%04d%s-%s.dist-info" % (site, i, "a" * 115, "1" * 115))
raise SystemExit(3)"""
s = structured(c.tool("execute_python", {"code": code}))
assert s["exit_code"] == 3, s
sid = s["session_id"]
rec = wait_record("code_execution", lambda r: r["session_id"] == sid)
assert rec["exit_code"] == 3 and rec["code_hash"].startswith("sha256:"), rec
assert rec["packages_truncated"] is True and rec["packages_count"] == 1024, \
    {k: v for k, v in rec.items() if k != "packages"}
assert 0 < len(rec["packages"]) < 1024, len(rec["packages"])
assert rec["packages"][0]["name"] == "p0000" + "a" * 115, rec["packages"][0]
print("  packages: 1024 long dist-info names, the record lands: exit code, code hash, "
      "%d listed, packages_count 1024, packages_truncated" % len(rec["packages"]))

# 2. 300 long-named artifacts, 16 long-named inputs, 200 flag hits.
hits = " ".join("budget_hit_%03d_" % i for i in range(1, 201))
code = """# %s
for i in range(300):
    open("%%03d%%s.txt" %% (i, "n" * 200), "w").write("x")
""" % hits
files = [{"name": "%02d%s.txt" % (i, "i" * 200), "content": "in"} for i in range(16)]
s = structured(c.tool("execute_python", {"code": code, "inline_files": files}))
assert s["exit_code"] == 0 and len(s["artifacts"]) == 300, (s["exit_code"], len(s["artifacts"]))
sid = s["session_id"]
started = wait_record("execution_started", lambda r: r["session_id"] == sid)
rec = wait_record("code_execution", lambda r: r["session_id"] == sid)
for r in (started, rec):
    assert r["pattern_hits_truncated"] is True and r["pattern_hits_count"] == 200, r["event"]
    assert 0 < len(r["pattern_hits"]) < 200, len(r["pattern_hits"])
    assert r["inputs_truncated"] is True and r["inputs_count"] == 16, r["event"]
    assert 0 < len(r["inputs"]) < 16, len(r["inputs"])
assert rec["artifacts_truncated"] is True and rec["artifacts_count"] == 300, rec["artifacts_count"]
assert 0 < len(rec["artifacts"]) < 300, len(rec["artifacts"])
byname = {a["name"]: a["sha256"] for a in s["artifacts"]}
assert all(byname[a["name"]] == a["sha256"] for a in rec["artifacts"]), rec["artifacts"][0]
print("  artifacts 300 (%d listed), inputs 16 (%d), pattern hits 200 (%d): each cut with "
      "its count, hashes as delivered" % (len(rec["artifacts"]), len(rec["inputs"]),
                                          len(rec["pattern_hits"])))

# 3. A refused run_command with 64 arguments of 4 KiB.
args = ["%02d" % i + "z" * 4094 for i in range(64)]
r = c.tool("run_command", {"command": "no-such-" + "c" * 5000, "args": args})
assert r["isError"], r
ref = wait_record("call_refused", lambda r: r.get("tool") == "run_command")
assert ref["argv"]["args_truncated"] is True and ref["argv"]["args_count"] == 64, ref["argv"].keys()
assert ref["argv"]["command_truncated"] is True, ref["argv"].keys()
print("  a refused run_command's 64 x 4 KiB args and 5 KiB name: argv cut, with args_count")
assert c.close() == 0
rej = records("event_rejected")
assert not rej, rej
PYEOF

"$MX" run --rules "$T/plain" --state-dir "$S" --audit-socket "$SOCK" --artifacts "$T/art" -- \
    /usr/bin/python3 -c 'for i in range(300): open("/workspace/%03d%s.txt" % (i, "n" * 200), "w").write("x")' \
    >"$T/run.json" || fail "mcp-exec run: $(tail -3 "$T/run.json")"
stop_auditd
"$PY" - "$LOG" "$T/run.json" <<'PYEOF' || fail "mcp-exec run's record (see above)"
import glob, json, sys
sid = "run-" + json.load(open(sys.argv[2]))["sandbox"]["id"]
recs = [json.loads(l) for f in sorted(glob.glob(sys.argv[1] + "/audit-*.log"))
        for l in open(f).read().split("\0", 1)[0].splitlines()]
ce = [r for r in recs if r["event"] == "code_execution" and r["session_id"] == sid]
assert len(ce) == 1 and ce[0]["exit_code"] == 0, ce
assert ce[0]["artifacts_truncated"] is True and ce[0]["artifacts_count"] == 300, ce[0].keys()
n = len([r for r in recs if r["event"] == "artifact_delivered" and r["session_id"] == sid])
assert n == 300, n
rej = [r for r in recs if r["event"] == "event_rejected"]
assert not rej, rej
print("  mcp-exec run, 300 long-named artifacts: code_execution lists %d with artifacts_count 300; "
      "300 artifact_delivered" % len(ce[0]["artifacts"]))
PYEOF
verify >/dev/null || fail "audit verify"
note "no event_rejected; the log verifies"
