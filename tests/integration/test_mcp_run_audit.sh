#!/bin/bash
# mcp-exec in the audit trail beyond tool calls (issue 14): the server's
# daemon_start / daemon_stop, and `mcp-exec run` written as a tool call is
# (execution_started acked before the command runs, then code_execution,
# the OS user as principal) with artifact_delivered for each artifact it
# copies out (issue 20).  No audit daemon and audit_required: not run.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
# The rules name a socket nobody listens on: --audit-socket must win.
sed -i "s|^\(  audit_socket:\).*|\1 $T/nobody.sock|" "$R/mcp-exec.yaml"
run() { "$MX" run --rules "$R" --state-dir "$S" "$@"; }
out=$(run --audit-socket "$SOCK" --artifacts "$T/art" -- /usr/bin/python3 -c \
    'open("/workspace/out.txt", "w").write("from the run")') ||
    fail "audited run: $out $(tail -3 "$T/mx.err" 2>/dev/null)"
[ "$(cat "$T/art/out.txt")" = "from the run" ] || fail "artifact not copied: $out"
st=0; msg=$(run -- /bin/echo ran 2>&1) || st=$?
[ $st = 1 ] || fail "unaudited run exit $st: $msg"
echo "$msg" | grep -q "not run: the audit trail is unavailable" || fail "message: $msg"
echo "$msg" | grep -q '^ran' && fail "the command ran unaudited: $msg"
note "mcp-exec run: audited through --audit-socket; refused without the audit daemon"

# The server: start and stop, with its version, transport and rules.
sed -i "s|^\(  audit_socket:\).*|\1 $SOCK|" "$R/mcp-exec.yaml"
start_mx
stop_mx || fail "mcp-exec exit status $?"
# Rules that do not load at start: refused, and the record says why.
cp -R "$R" "$T/bad"
printf '  - id: BROKEN\n    regex: "(unclosed"\n' >>"$T/bad/patterns.yaml"
st=0; "$MX" --stdio --rules "$T/bad" --state-dir "$S" </dev/null 2>"$T/bad.err" || st=$?
[ $st != 0 ] || fail "mcp-exec started with broken rules"
grep -q "patterns.yaml:[0-9]*:[0-9]*: " "$T/bad.err" || fail "no error printed: $(cat "$T/bad.err")"
"$MX" -n --rules "$T/bad" --state-dir "$S" 2>/dev/null && fail "-n passed broken rules"
stop_auditd
"$PY" - "$LOG" <<'EOF' || fail "the failed start's policy_load (see above)"
import glob, json, re, sys
recs = [json.loads(l) for f in sorted(glob.glob(sys.argv[1] + "/audit-*.log")) for l in open(f).read().split("\0", 1)[0].splitlines()]
bad = [r for r in recs if r["event"] == "policy_load" and not r["ok"]]
# One: the failed start; -n (check only) writes nothing.
assert len(bad) == 1 and bad[0]["program"] == "mcp-exec", bad
assert re.search(r"/bad/patterns\.yaml:\d+:\d+: ", bad[0]["error"]), bad
print("  a failed start: policy_load ok false with the file:line:column error")
EOF
"$PY" - "$LOG" "$out" "$R" "$T/art/out.txt" <<'EOF' || fail "run and lifecycle records (see above)"
import glob, hashlib, json, pwd, os, sys
log, out, rules, art = sys.argv[1:5]
res = json.loads(out)
recs = [json.loads(l) for f in sorted(glob.glob(log + "/audit-*.log"))
        for l in open(f).read().split("\0", 1)[0].splitlines()]
sid = "run-" + res["sandbox"]["id"]
me = "user:" + pwd.getpwuid(os.getuid()).pw_name
ev = [r["event"] for r in recs if r.get("session_id") == sid]
assert ev == ["execution_started", "code_execution", "artifact_delivered"], ev
st, ce, ad = [r for r in recs if r.get("session_id") == sid]
argv = ["/usr/bin/python3", "-c",
        'open("/workspace/out.txt", "w").write("from the run")']
for r in (st, ce):
    assert r["principal"] == me and r["tool"] == "run", r
    assert r["argv"] == argv, r
    assert r["client"]["name"] == "mcp-exec run" and r["client"]["transport"] == "cli", r
want = "sha256:" + hashlib.sha256(json.dumps(argv, separators=(",", ":")).encode()).hexdigest()
assert st["code_hash"] == ce["code_hash"] == want, (st, want)
import re
assert re.fullmatch(r"sha256:[0-9a-f]{64}", st.get("seccomp_sha256", "")), st
assert ce["exit_code"] == 0 and ce["decision"] == "allow", ce
# Output samples go along and, under hash retention, are dropped.
assert ce["output_retention"] == "none" and "stdout_sample" not in ce, ce
assert [a["name"] for a in ce["artifacts"]] == ["out.txt"], ce
data = open(art, "rb").read()
assert ad["how"] == "run_artifacts" and ad["artifact"] == "out.txt", ad
assert ad["sha256"] == "sha256:" + hashlib.sha256(data).hexdigest(), ad
assert ad["size"] == len(data) and ad["principal"] == me, ad
assert ad["dest"].startswith("file://"), ad
# The refused run left nothing: one run only.
assert len([r for r in recs if r.get("tool") == "run"]) == 2, recs
mx = [r for r in recs if r.get("program") == "mcp-exec" and
      r["event"] in ("daemon_start", "daemon_stop")]
assert [r["event"] for r in mx] == ["daemon_start", "daemon_stop"], mx
assert mx[0]["transport"] == "http" and mx[0]["rules_dir"] == rules, mx
assert mx[0]["version"] and mx[1]["version"] == mx[0]["version"], mx
print("  execution_started before code_execution, OS user, argv hashed;",
      "artifact_delivered for the copy; daemon_start/stop")
EOF
verify >/dev/null || fail "audit verify"
