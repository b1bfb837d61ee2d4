#!/bin/bash
# SIGHUP: a policy edited from L3 to L2 applies to flows already open.
# A long-lived flow to 198.51.100.20 (which L2 forbids) is cut, one to
# 203.0.113.10:7000 (which L2 allows) goes on; the reload is audited as
# policy_load with the file's new sha256.  A broken policy file is
# refused on SIGHUP (policy_load ok false) and the old policy stays.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
policy flex L3 "$L3_DNS"
start_auditd
start_netguard
SB="stk-rl-$$"
sandbox "$SB" flex
expect_event policy_load program=netguard ok=true "files~$R/network/flex.yaml"

mkdir "$T/cut" "$T/keep"
probe "$SB" hold 198.51.100.20:7000 "$T/cut" 2 >"$T/cut.out" &
cut=$!
probe "$SB" hold 203.0.113.10:7000 "$T/keep" 2 >"$T/keep.out" &
keep=$!
touch "$T/cut/go1" "$T/keep/go1"
for _ in $(seq 1 50); do
	grep -q '^alive 1' "$T/cut.out" && grep -q '^alive 1' "$T/keep.out" && break
	sleep 0.1
done
grep -q '^alive 1$' "$T/cut.out" || fail "L3 flow to 198.51.100.20: $(cat "$T/cut.out")"
grep -q '^alive 1$' "$T/keep.out" || fail "L3 flow to 203.0.113.10: $(cat "$T/keep.out")"
note "L3: flows to 198.51.100.20:7000 and 203.0.113.10:7000 open"

policy flex L2 "$L2_ALLOW"
sum=$(sha256sum "$R/network/flex.yaml" | cut -d' ' -f1)
kill -HUP "$NG_PID"
expect_event policy_load program=netguard ok=true "files~$sum"
# The text of each version is kept beside the log (written before the
# record), so a report can diff L3 against L2.
kept=$(ls "$LOG"/blobs/*/"$sum" 2>/dev/null | head -1)
[ -n "$kept" ] && cmp -s "$kept" "$R/network/flex.yaml" ||
	fail "netguard's new policy text was not kept beside the log"
for _ in $(seq 1 50); do has_table "$SB" inet netguard && break; sleep 0.1; done
touch "$T/cut/go2" "$T/keep/go2"
wait $cut $keep
grep -q '^cut 2 timeout$' "$T/cut.out" || fail "flow L2 forbids not cut: $(cat "$T/cut.out")"
grep -q '^alive 2$' "$T/keep.out" || fail "flow L2 allows was cut: $(cat "$T/keep.out")"
denied "$SB" policy tcp 198.51.100.20 7000
expect_connect "$SB" fail -t 1 198.51.100.20:80
expect_connect "$SB" ok allowed.test:80
[ "$(net status --socket "$NG_SOCK" | "$PY" -c 'import json,sys
print([a["level"] for a in json.load(sys.stdin)["attached"]])')" = "['L2']" ] ||
    fail "status after reload: $(net status --socket "$NG_SOCK")"
note "SIGHUP L3 -> L2: the 198.51.100.20 flow is cut (rule policy), 203.0.113.10:7000 kept; policy_load has the new sha256, its text kept"

cp "$R/network/flex.yaml" "$T/flex.good"
printf 'level: L9\nallow: [\n' >"$R/network/flex.yaml"
kill -HUP "$NG_PID"
expect_event policy_load program=netguard ok=false "error~$R/network/flex.yaml:3:1: did not find expected node content"
kill -0 "$NG_PID" || fail "a broken policy killed netguard"
expect_connect "$SB" ok allowed.test:80
expect_connect "$SB" fail -t 1 198.51.100.20:80
note "SIGHUP with a broken file: policy_load ok false, L2 stays in force"

# The same rules at a start: netguard exits, and the record says why.
st=0; "$NETGUARD" -d --rules "$R" --socket "$T/ng2.sock" --audit-socket "$SOCK" \
    --state-dir "$T/ng2state" 2>"$T/ng2.err" || st=$?
[ $st = 1 ] || fail "netguard with broken rules: exit $st"
"$PY" "$EG/events.py" "$LOG" --min 2 policy_load program=netguard ok=false \
    "error~$R/network/flex.yaml:3:1: did not find expected node content" >/dev/null ||
    fail "the failed start left no policy_load with its error"
note "a start with the broken file: exit 1, policy_load ok false with the error"

egress_finish
note "reload: audit log verifies"
