#!/bin/bash
# The admin CLI end to end: keygen, send, status, tail, export, rules check
# and verify's exit codes on an intact and on a tampered log.
. "$(dirname "$0")/lib.sh"

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

"$STOCKADE" rules check "$ROOT/rules" >/dev/null || fail "rules check of the shipped policy"
mkdir "$T/badrules"
printf 'rotation:\n  keep_files: zero\n' >"$T/badrules/audit.yaml"
out=$("$STOCKADE" rules check "$T/badrules" 2>&1) && fail "bad rules accepted"
echo "$out" | grep -q 'audit.yaml:2:15:' || fail "rules check message: $out"

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
