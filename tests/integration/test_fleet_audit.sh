#!/bin/bash
# A fleet's audit trail proven complete: three stockade-auditd nodes, each
# with its own chain and key, append their checkpoints to one witness
# folder (offhost_dir/<node_id>/).  Then one node's newest log file is
# deleted, another's log rolled back to an older copy, the third left
# alone: `verify --fleet` names each (truncated, truncated, intact), a
# node the witness knows but whose log is not given is "missing", a
# rewritten record "tampered", a forged witness line refused.
. "$(dirname "$0")/lib.sh"

NODES="a b c"
W="$T/witness"
declare -A NPID
fleet_cleanup() {
	for n in $NODES; do
		[ -z "${NPID[$n]:-}" ] || { kill -9 "${NPID[$n]}" 2>/dev/null
			wait "${NPID[$n]}" 2>/dev/null; } || true
	done
	cleanup
}
trap fleet_cleanup EXIT

# node_start N: node-N's daemon, its own key, log and socket.
node_start() {
	mkdir -p "$T/$1"
	[ -f "$T/$1/keys/checkpoint.key" ] ||
	    "$STOCKADE" audit keygen "$T/$1/keys" >/dev/null
	"$AUDITD" -d -f "$CONF" --socket "$T/$1/sock" --log-dir "$T/$1/log" \
	    --key "$T/$1/keys/checkpoint.key" --checkpoints "$W" \
	    --node-id "node-$1" 2>>"$T/$1/err" &
	NPID[$1]=$!
	for _ in $(seq 1 200); do
		[ -S "$T/$1/sock" ] && return 0
		kill -0 "${NPID[$1]}" 2>/dev/null || fail "node-$1 died: $(cat "$T/$1/err")"
		sleep 0.02
	done
	fail "node-$1 did not start"
}
node_stop() { kill -TERM "${NPID[$1]}"; wait "${NPID[$1]}" || fail "node-$1 stop"; NPID[$1]=""; }
# events N SESSION COUNT: COUNT padded executions of principal P on node-N.
events() {
	"$PY" - "$2" "$3" <<'PY' | "$STOCKADE" audit send --socket "$T/$1/sock" >/dev/null
import json, sys
s, n = sys.argv[1], int(sys.argv[2])
print(json.dumps({"event": "session_created", "principal": "user:p",
    "session_id": s, "profile": "default", "seccomp_sha256": "sha256:" + "ab" * 32}))
for i in range(n):
    print(json.dumps({"event": "code_execution", "principal": "user:p",
        "session_id": s, "code_hash": "sha256:" + "cd" * 32, "code_size": 1,
        "sandbox": {}, "limits": {}, "network": "none", "exit_code": 0,
        "duration_ms": 1, "stdout_bytes": 0, "artifacts": [],
        "decision": "allow", "pad": "x" * 12000}))
PY
}
KEYARGS=""
fleet() { "$STOCKADE" audit verify --fleet --witness "$W" $KEYARGS "$@"; }
# expect NODE STATUS OUTPUT: the node's line says STATUS.
expect() { echo "$3" | grep -q "^node-$1 .*: $2" || fail "node-$1 not $2: $3"; }

# node_id in audit.yaml is a DNS label (it names a folder on the witness).
keygen
make_conf "node_id: ../x"
"$AUDITD" -n -f "$CONF" --key "$KEYS/checkpoint.key" 2>"$T/err" && fail "node_id ../x accepted"
grep -q "node_id: a DNS label" "$T/err" || fail "node_id: $(cat "$T/err")"
make_conf "node_id: node-x"
"$AUDITD" -n -f "$CONF" --key "$KEYS/checkpoint.key" 2>"$T/err" || fail "node_id: $(cat "$T/err")"

make_conf "checkpoint: {every_events: 4}" \
    "rotation: {max_file_bytes: 64K, keep_files: 50}"
for n in $NODES; do node_start "$n"; events "$n" "s-$n-1" 12; done
# The older copy that node-b's log will be rolled back to.
cp -a "$T/b/log" "$T/b-old"
out=$("$STOCKADE" status --audit-socket "$T/a/sock" --netguard-socket "$T/none" \
    --mcp-state "$T/none" 2>&1) || true
echo "$out" | grep -q "^stockade-auditd  running, .*, node node-a$" || fail "status: $out"
note "stockade status names the node"
for n in $NODES; do events "$n" "s-$n-2" 12; node_stop "$n"; done
for n in $NODES; do
	[ -s "$W/node-$n/checkpoints.log" ] || fail "no witness file for node-$n"
	grep -q "\"node\":\"node-$n\"" "$W/node-$n/checkpoints.log" ||
	    fail "node-$n's witness lines do not name it"
	[ "$(ls "$T/$n/log"/audit-*.log | wc -l)" -ge 3 ] || fail "node-$n: too few files"
done
KEYARGS="--pubkey $T/a/keys/checkpoint.pub --pubkey $T/b/keys/checkpoint.pub --pubkey $T/c/keys/checkpoint.pub"

out=$(fleet "$T/a/log" "$T/b/log" "$T/c/log") || fail "intact fleet: $out"
for n in $NODES; do expect "$n" intact "$out"; done
echo "$out" | grep -q "fleet trail complete: 3 node" || fail "summary: $out"
note "3 nodes, 3 keys, one witness folder: intact"

# ---- the fleet at a glance: witness, heads, live sessions
mkdir -p "$T/state-c"
printf '{"pid":%d,"node":"node-c","sessions":[{"session_id":"x"},{"session_id":"y"}]}' \
    $$ >"$T/state-c/sessions-$$.json"
out=$("$STOCKADE" fleet status --witness "$W" --log "$T/a/log" --log "$T/c/log" \
    --mcp-state "$T/state-c") || fail "fleet status: $out"
echo "$out" | grep -q "^node-a  witnessed seq [0-9]* at .*; log head seq [0-9]* at " || fail "fleet status: $out"
echo "$out" | grep -q "^node-b  witnessed seq [0-9]* at [^;]*$" || fail "fleet status: $out"
echo "$out" | grep -q "^node-c  witnessed .*; log head seq [0-9]* .*; 2 live session(s)$" || fail "fleet status: $out"
echo "$out" | grep -q "^3 node(s)" || fail "fleet status: $out"
note "stockade fleet status: 3 nodes from the witness, 2 log heads, node-c's live sessions"

# ---- principal P's evidence from every node, verified offline
"$STOCKADE" audit evidence "$T/a/log" "$T/b/log" "$T/c/log" --principal user:p \
    $KEYARGS -o "$T/ev" >/dev/null || fail "fleet evidence"
for n in $NODES; do
	[ "$(grep -c '"session_id":"s-'$n'-' "$T/ev/node-$n/records.jsonl")" -eq 26 ] ||
	    fail "node-$n's bundle: $(wc -l <"$T/ev/node-$n/records.jsonl") records"
done
out=$("$STOCKADE" audit verify --fleet --bundle "$T/ev" $KEYARGS) || fail "fleet bundle: $out"
echo "$out" | grep -q "fleet bundle intact: 3 node bundle(s) of 3" || fail "fleet bundle: $out"
(cd "$T/ev" && sha256sum -c --quiet MANIFEST) || fail "sha256sum -c MANIFEST"
"$STOCKADE" audit evidence "$T/a/log" "$T/b/log" "$T/c/log" --principal user:p \
    $KEYARGS -o "$T/ev.tar" >/dev/null || fail "fleet evidence tar"
"$STOCKADE" audit verify --bundle "$T/ev.tar" >/dev/null 2>&1 || fail "fleet tar"
out=$("$STOCKADE" audit verify --fleet --bundle "$T/ev" --pubkey "$T/a/keys/checkpoint.pub" \
    --pubkey "$T/b/keys/checkpoint.pub" 2>&1) && fail "node-c's bundle checked with no key of its own"
echo "$out" | grep -q "node-c: signed by none of the given keys" || fail "wrong key: $out"
sed -i '3s/"exit_code":0/"exit_code":1/' "$T/ev/node-b/records.jsonl"
(cd "$T/ev/node-b" && find . -type f ! -name MANIFEST | sed 's|^\./||' | LC_ALL=C sort |
    xargs -d '\n' sha256sum >"$T/m.new" && mv "$T/m.new" MANIFEST)
(cd "$T/ev" && find . -type f ! -path ./MANIFEST | sed 's|^\./||' | LC_ALL=C sort |
    xargs -d '\n' sha256sum >"$T/m.new" && mv "$T/m.new" MANIFEST)
out=$("$STOCKADE" audit verify --fleet --bundle "$T/ev" $KEYARGS) && fail "edited record verified: $out"
echo "$out" | grep -q "ev: node-b: records.jsonl differs" || fail "edited record: $out"
note "evidence for P spans the 3 nodes (26 records each), verifies as a folder and a tar; a wrong key and an edited record are caught"

# ---- delete node-a's newest file, roll node-b back, leave node-c
rm "$(ls "$T"/a/log/audit-*.log | tail -1)"
rm -rf "$T/b/log" && mv "$T/b-old" "$T/b/log"
out=$(fleet "$T/a/log" "$T/b/log" "$T/c/log") && fail "damaged fleet verified: $out"
expect a truncated "$out"
expect b truncated "$out"
expect c intact "$out"
echo "$out" | grep -q "NOT proven complete" || fail "summary: $out"
note "newest file deleted: truncated; rolled back: truncated; third: intact"

# ---- the same as JSON, and a node not given is missing
js=$(fleet --json "$T/a/log" "$T/c/log") && fail "missing node verified"
echo "$js" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
st = {n["node"]: n["status"] for n in r["nodes"]}
assert r["ok"] is False, r
assert st == {"node-a": "truncated", "node-b": "missing", "node-c": "intact"}, st
m = [n for n in r["nodes"] if n["status"] == "missing"][0]
assert m["dir"] is None and m["witnessed_seq"] > 0, m
' || fail "json: $js"
note "--json: node-a truncated, node-b missing (no log given), node-c intact"

# ---- a record rewritten on node-c: tampered
f=$(ls "$T"/c/log/audit-*.log | sed -n 2p)
sed -i '5s/"exit_code":0/"exit_code":1/' "$f"
out=$(fleet "$T/c/log") && fail "rewritten record verified: $out"
expect c tampered "$out"
note "a rewritten record: tampered"

# ---- a forged witness line (signed by no node's key) is refused
l=$(tail -1 "$W/node-c/checkpoints.log" | sed 's/"seq":\([0-9]*\)/"seq":9\1/')
printf '%s\n' "$l" >>"$W/node-c/checkpoints.log"
out=$(fleet "$T/c/log" 2>&1) && fail "forged witness accepted: $out"
echo "$out" | grep -q "not signed by any given key" || fail "forgery: $out"
note "a forged witness checkpoint: refused"
echo "PASS test_fleet_audit"
