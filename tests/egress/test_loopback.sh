#!/bin/bash
# L0 and L1.  Each sandbox has a listener on its own loopback (lo set up
# before the attach, as a sandbox might).  L0: loopback goes down, nothing
# at all is reachable.  L1: loopback up and reachable, nothing else (no
# veth, no route, no resolver).
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
policy none L0
policy loop L1
start_auditd
start_netguard
S0="stk-l0-$$" S1="stk-l1-$$"
for ns in "$S0" "$S1"; do
	ns_add "$ns"
	ip -n "$ns" link set lo up
	serve "$ns" "lo-$ns" http:0.0.0.0:8080
	expect_connect "$ns" ok 127.0.0.1:8080	# the listener works before
done
attach "$S0" none
attach "$S1" loop
expect_event egress_attached "session_id=s-$S0" level=L0 policy=none
expect_event egress_attached "session_id=s-$S1" level=L1 policy=loop
# Each names the ruleset it applied (evidence bundles): L0 and L1 differ.
d0=$("$PY" "$EG/events.py" "$LOG" egress_attached "session_id=s-$S0" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["nft_sha256"])')
d1=$("$PY" "$EG/events.py" "$LOG" egress_attached "session_id=s-$S1" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["nft_sha256"])')
echo "$d0 $d1" | grep -Eq '^sha256:[0-9a-f]{64} sha256:[0-9a-f]{64}$' || fail "nft_sha256: '$d0' '$d1'"
[ "$d0" != "$d1" ] || fail "L0 and L1 rulesets have one digest"

expect_connect "$S0" fail -t 1 127.0.0.1:8080 203.0.113.10:80 allowed.test:80
ip -n "$S0" link show lo | grep -q 'state DOWN' || fail "L0: lo is not down"
! ip -n "$S0" link show eth0 2>/dev/null || fail "L0: has eth0"
[ -z "$(att "$S0" address)" ] || fail "L0 got an address: $(cat "$T/attach.$S0")"
note "L0: 127.0.0.1 unreachable (lo down), nothing else either, no veth"

expect_connect "$S1" ok 127.0.0.1:8080
grep -q '^127.0.0.1:8080 ok 127.0.0.1 world_127.0.0.1$' "$T/probe.log" ||
    grep -q '^127.0.0.1:8080 ok 127.0.0.1 world_0.0.0.0$' "$T/probe.log" ||
    fail "L1: loopback answer: $(tail -1 "$T/probe.log")"
expect_connect "$S1" fail -t 1 203.0.113.10:80 169.254.169.254:80 192.0.2.53:53 \
    allowed.test:80
! ip -n "$S1" link show eth0 2>/dev/null || fail "L1: has eth0"
[ -z "$(ip -n "$S1" route show default)" ] || fail "L1: has a default route"
world_never tcp 203.0.113.10 80
note "L1: 127.0.0.1 reachable; 203.0.113.10, 169.254.169.254, names unreachable; no veth"

egress_finish
note "loopback: audit log verifies"
