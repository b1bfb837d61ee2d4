#!/bin/bash
# Every refusal says which call it was and why: a pattern deny carries the
# rule, its severity, the session the call named and the hash and size of
# the code (never the code); an allowlist refusal carries run_command's argv.
. "$(dirname "$0")/lib.sh"

start_auditd
mcp_rules
mcp_serve a
code="print(open('/etc/shadow').read())"
mcp_call a 1 "{\"code\":\"$code\"}" | grep -q 'refused: the code matches rule FS-SHADOW-001' ||
    fail "the deny was not refused: $(cat "$T/a.out")"
sid=$(mcp_call a 2 '{"code":"x = 1"}' | sed -n 's/.*"session_id":"\(sess_[0-9a-f]*\)".*/\1/p' | head -1)
[ -n "$sid" ] || fail "no session: $(cat "$T/a.out")"
mcp_call a 3 "{\"code\":\"$code\",\"session_id\":\"$sid\"}" >/dev/null
printf '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"wc","args":["-l\\n"]}}}\n' >&"$IN_a"
for _ in $(seq 1 250); do grep -q '"id":4[,}]' "$T/a.out" && break; sleep 0.02; done
eval "exec $IN_a>&-"
wait "$PID_a" || fail "mcp-exec exit status $?"
stop_auditd
want=$(printf %s "$code" | sha256sum | cut -d' ' -f1)
"$PY" - "$LOG" "$want" "${#code}" "$sid" <<'PYEOF' || fail "call_refused records (see above)"
import glob, json, sys
log, want, size, sid = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
recs = [json.loads(l) for f in sorted(glob.glob(log + "/audit-*.log"))
        for l in open(f) if '"call_refused"' in l]
deny = [r for r in recs if r.get("rule_id") == "FS-SHADOW-001"]
assert len(deny) == 2, recs
for r in deny:
    assert r["severity"] == "high" and r["tool"] == "execute_python", r
    assert r["code_hash"] == "sha256:" + want and r["code_size"] == size, r
    assert "code" not in r, r
assert [r.get("session_id") for r in deny] == [None, sid], deny
cmd = [r for r in recs if r["tool"] == "run_command"]
assert len(cmd) == 1 and cmd[0]["argv"] == {"command": "wc", "args": ["-l\n"]}, cmd
assert cmd[0]["severity"] == "warning", cmd
print("  pattern denies: rule, severity, session, code hash and size; allowlist: argv")
PYEOF
verify >/dev/null || fail "audit verify"
