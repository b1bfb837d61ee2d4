#!/bin/bash
# The admin CLI end to end: keygen, send, status, tail, export, rules check
# (every policy file, shipped and broken) and verify's exit codes on an
# intact and on a tampered log.
. "$(dirname "$0")/lib.sh"

# --help and -h, for every program and where a subcommand's options are:
# the usage on stdout, exit 0, nothing done (keygen once wrote its keys
# to a folder named --help).
(cd "$T" && for cmd in "$BIN/mcp-exec --help" "$BIN/mcp-exec -h" "$BIN/mcp-exec run --help" \
    "$BIN/mcp-exec run -h" "$BIN/stockade-auditd --help" "$BIN/netguard --help" \
    "$STOCKADE --help" "$STOCKADE audit --help" "$STOCKADE audit keygen --help" \
    "$STOCKADE audit verify -h" "$STOCKADE rules check --help" "$STOCKADE status --help" \
    "$STOCKADE net status --help"; do
	out=$($cmd 2>"$T/help.err") || fail "$cmd: exit $?: $(cat "$T/help.err")"
	echo "$out" | grep -q "^usage: " || fail "$cmd: no usage on stdout: $out"
	[ ! -s "$T/help.err" ] || fail "$cmd: said on stderr: $(cat "$T/help.err")"
done; [ ! -e "$T/--help" ]) || fail "--help (see above)"
note "--help and -h: the usage, exit 0, for every program and subcommand"

start_auditd
out=$(printf '%s\n' \
    '{"event":"operator_note","principal":"user:ops","message":"maintenance"}' \
    '{"event":"session_created","principal":"user:a","session_id":"s-1","profile":"default"}' \
    '{"event":"session_created","principal":"user:a"}' \
    'not json' | "$STOCKADE" audit send --socket "$SOCK") && fail "send should report the bad lines"
[ "$(echo "$out" | wc -l)" = 2 ] || fail "send printed: $out"
"$STOCKADE" audit status --socket "$SOCK" | grep -q '"state": "running"' || fail "status"
"$STOCKADE" audit tail "$LOG" -n 0 -f --event operator_note >"$T/follow" &
follower=$!
sleep 0.5
echo '{"event":"operator_note","principal":"user:ops","message":"followed"}' |
    "$STOCKADE" audit send --socket "$SOCK" >/dev/null
for _ in $(seq 1 40); do grep -q followed "$T/follow" && break; sleep 0.1; done
kill $follower
grep -q followed "$T/follow" || fail "tail -f missed the new event"
[ "$(wc -l <"$T/follow")" = 1 ] || fail "tail -f printed old or filtered lines"
stop_auditd

"$STOCKADE" audit tail "$LOG" -n 3 | grep -q daemon_stop || fail "tail"
[ "$("$STOCKADE" audit tail "$LOG" --session s-1 | wc -l)" = 1 ] || fail "tail --session"
"$STOCKADE" audit export "$LOG" --format ecs | "$PY" -c '
import json, sys
docs = [json.loads(l) for l in sys.stdin]
assert all("@timestamp" in d and d["event"]["dataset"] == "stockade.audit" for d in docs), docs
assert any(d["event"]["action"] == "session_created" for d in docs)'
"$STOCKADE" audit export "$LOG" --format ocsf | "$PY" -c '
import json, sys
assert all("class_uid" in json.loads(l) for l in sys.stdin)'
"$STOCKADE" audit export "$LOG" --format hec | "$PY" -c '
import json, sys
assert all(json.loads(l)["sourcetype"] == "stockade:audit" for l in sys.stdin)'
"$STOCKADE" audit export "$LOG" --format xml 2>/dev/null && fail "export accepted xml"

out=$("$STOCKADE" rules check "$ROOT/rules") || fail "rules check of the shipped policy"
for f in audit.yaml mcp-exec.yaml profiles/default.yaml; do
	echo "$out" | grep -qx "$ROOT/rules/$f: OK" || fail "rules check skipped $f: $out"
done
n=$(grep -c '^  - id:' "$ROOT/rules/patterns.yaml")
echo "$out" | grep -qx "$ROOT/rules/patterns.yaml: OK, $n rules" ||
    fail "rules check skipped patterns.yaml: $out"
echo "$out" | grep -qx "$ROOT/rules/commands.yaml: OK, [0-9]* commands" ||
    fail "rules check skipped commands.yaml: $out"
echo "$out" | grep -qx "$ROOT/rules/principals.yaml: OK, [0-9]* tokens" ||
    fail "rules check skipped principals.yaml: $out"
echo "$out" | tail -1 | grep -qx "configuration OK" || fail "rules check: $out"

mkdir "$T/badrules"
printf 'rotation:\n  keep_files: zero\n' >"$T/badrules/audit.yaml"
out=$("$STOCKADE" rules check "$T/badrules" 2>&1) && fail "bad rules accepted"
echo "$out" | grep -q 'audit.yaml:2:15:' || fail "rules check message: $out"

# mcp-exec's lists, each broken alone: exit 1, the error at
# file:line:column, and no "configuration OK".
rules_bad() {	# DIR EXPECTED: sets $out
	st=0; out=$("$STOCKADE" rules check "$1" 2>&1) || st=$?
	[ $st = 1 ] || fail "rules check $1: exit $st: $out"
	echo "$out" | grep -qF "$2" || fail "rules check $1 said: $out"
	if echo "$out" | grep -q "configuration OK"; then
		fail "rules check $1 said OK: $out"
	fi
}
mkdir "$T/badpat" "$T/badcmd" "$T/badtok" "$T/badall"
cat >"$T/badpat/patterns.yaml" <<'EOF'
rules:
  - id: BAD-REGEX
    description: an unbalanced group
    severity: high
    action: deny
    regex: '(unclosed'
EOF
rules_bad "$T/badpat" "$T/badpat/patterns.yaml:6:12: rule 'BAD-REGEX': regex: missing closing parenthesis"
cat >"$T/badcmd/commands.yaml" <<'EOF'
commands:
  ls:
    path: bin/ls
    max_args: 2
EOF
rules_bad "$T/badcmd" "$T/badcmd/commands.yaml:3:11: ls: path: an absolute path is required"
cat >"$T/badtok/principals.yaml" <<'EOF'
tokens:
  - sha256: "0123456789abcdef"
    principal: user:alice@example.com
EOF
rules_bad "$T/badtok" "$T/badtok/principals.yaml:2:13: sha256: 64 lowercase hex digits"
# All three at once, beside a valid file: every error in one run, and the
# valid file still reported.
cp "$T"/badpat/* "$T"/badcmd/* "$T"/badtok/* "$ROOT/rules/mcp-exec.yaml" "$T/badall/"
rules_bad "$T/badall" "$T/badall/patterns.yaml:6:12:"
echo "$out" | grep -q "^$T/badall/commands.yaml:3:11:" || fail "rules check, all broken: $out"
echo "$out" | grep -q "^$T/badall/principals.yaml:2:13:" || fail "rules check, all broken: $out"
echo "$out" | grep -qx "$T/badall/mcp-exec.yaml: OK" || fail "rules check, all broken: $out"
note "rules check: shipped policy OK; bad regex, relative command path, bad sha256 refused at file:line:column"

verify >/dev/null || fail "intact log"
f=$(ls "$LOG"/audit-*.log | head -1)
sed -i '3s/"uid":0/"uid":1/' "$f"
st=0; out=$(verify) || st=$?
[ $st = 1 ] || fail "tampered log: exit $st"
echo "$out" | grep -q ':3 seq 3: hash mismatch' || fail "verify said: $out"
st=0; "$STOCKADE" audit verify "$T/nowhere" 2>/dev/null || st=$?
[ $st = 2 ] || fail "missing dir: exit $st"
"$STOCKADE" audit keygen "$KEYS" 2>/dev/null && fail "keygen overwrote a key"
note "cli ok"
