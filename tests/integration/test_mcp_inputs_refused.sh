#!/bin/bash
# A refused upload leaves nothing behind (issue 32, finding 2): a call whose
# inputs fail a check at their second file (too big, a bad name, bad
# base64, over the count, over the call's or the session's budget, a path
# outside the roots or missing, a name given twice) is refused with nothing
# written to the session's /inputs, and leaves a call_refused record naming
# the session and why.  Contents go in inline_files, host paths in files
# (finding 8): an old client's object in files is refused, naming
# inline_files.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
mkdir -p "$T/in"
head -c 3100 /dev/zero | tr '\0' x >"$T/in/big.csv"
printf 'a,b\n' >"$T/in/small.csv"
sed -i -e "s#^  roots: .*#  roots: [$T/in]#" -e 's/^  max_bytes: .*/  max_bytes: 3K/' \
    -e 's/^  max_files: .*/  max_files: 4/' -e 's/^  inline_max_file: .*/  inline_max_file: 1K/' \
    -e 's/^  inline_max_call: .*/  inline_max_call: 1536/' "$R/profiles/default.yaml"
grep -q '^  inline_max_call: 1536$' "$R/profiles/default.yaml" || fail "sed missed the inputs"
"$PY" - "$MX" "$R" "$S" "$T" "$HERE" <<'PYEOF' || fail "refused uploads (see above)"
import json, sys
sys.path.insert(0, sys.argv[5])
from mcpclient import McpError, Stdio, structured
mx, rules, state, tmp = sys.argv[1:5]
c = Stdio([mx, "--stdio", "--rules", rules, "--state-dir", state],
          stderr=open(tmp + "/mx.err", "a"))
c.initialize()
LIST = "import os\nprint(sorted(os.listdir('/inputs')))"

def inline(name, content, encoding=None):
    f = {"name": name, "content": content}
    if encoding:
        f["encoding"] = encoding
    return f

def call(sid, inl=(), paths=(), old=False):
    args = {"code": LIST, "session_id": sid, "files": list(paths),
            "inline_files": list(inl)}
    if old:
        args = {"code": LIST, "session_id": sid, "files": list(inl) + list(paths)}
    try:
        return c.tool("execute_python", args)
    except McpError as e:
        return {"isError": True, "content": [{"text": "fault: %s" % e}]}

a = inline("a.txt", "X")
cases = [
    ("too big", [a, inline("b.txt", "y" * 1025)], (), "more than an inline input may have"),
    ("bad name", [a, inline("../b", "y")], (), "a file name, not a path"),
    ("bad base64", [a, inline("b.bin", "not base64!", "base64")], (), "not valid base64"),
    ("over the count", [a] + [inline("n%d.txt" % i, "y") for i in range(4)], (), "more than 4 input files"),
    ("over the call's budget", [a, inline("b.txt", "y" * 1000), inline("c.txt", "z" * 1000)], (), "inline_max_call"),
    ("over the session's budget", [a], [tmp + "/in/big.csv"], "would exceed 3072 bytes in all"),
    ("outside the roots", [a], ["/etc/passwd"], "not beneath an input root"),
    ("missing", [a], [tmp + "/in/nope.csv"], "no such file"),
    ("named twice", [a, inline("small.csv", "y")], [tmp + "/in/small.csv"], "twice"),
    ("an object in files", [a], [tmp + "/in/small.csv"], "fault: arguments.files[0]: a host path; send a file's contents in inline_files"),
]
sid = structured(c.tool("execute_python", {"code": "pass"}))["session_id"]
for what, inl, paths, why in cases:
    r = call(sid, inl, paths, what == "an object in files")
    text = r["content"][0]["text"]
    assert r.get("isError") and why in text, (what, r)
    left = structured(c.tool("execute_python", {"code": LIST, "session_id": sid}))
    assert left["stdout"] == "[]\n", (what, "left in /inputs:", left["stdout"])
    print("  %s: refused (%s), nothing left in /inputs" % (what, text[:90]))
# The same inputs, within the rules, stage (the cases fail for their reason).
ok = structured(call(sid, [a, inline("b.txt", "y")], [tmp + "/in/small.csv"]))
assert ok["stdout"] == "['a.txt', 'b.txt', 'small.csv']\n", ok
json.dump({"sid": sid, "n": len(cases)}, open(tmp + "/cases.json", "w"))
assert c.close() == 0
PYEOF
stop_auditd
"$PY" - "$LOG" "$T/cases.json" <<'PYEOF' || fail "call_refused records (see above)"
import glob, json, sys
log, cases = sys.argv[1], json.load(open(sys.argv[2]))
recs = [json.loads(l) for f in sorted(glob.glob(log + "/audit-*.log")) for l in open(f)]
refused = [r for r in recs if r["event"] == "call_refused"]
assert len(refused) == cases["n"], refused
for r in refused:
    assert r["tool"] == "execute_python" and r["session_id"] == cases["sid"], r
    assert r["reason"] in ("bad arguments", "inputs not staged"), r
    assert r.get("detail") and r["code_hash"], r
# Only the last call staged anything, and its record says what: files
# first, then inline_files.
started = [r for r in recs if r["event"] == "execution_started" and "inputs" in r]
assert len(started) == 1, started
assert [i["name"] for i in started[0]["inputs"]] == ["small.csv", "a.txt", "b.txt"], started
print("  a call_refused for each (session, reason, detail); inputs only on the call that staged them")
PYEOF
verify >/dev/null || fail "audit verify"
