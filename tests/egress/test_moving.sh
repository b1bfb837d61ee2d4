#!/bin/bash
# An allowed name whose address changes (moving.test, TTL 2 s, ttl_min 1):
# after re-resolution the new address is allowed; the old one is dropped
# once its pin has expired; a TCP connection opened to the old address
# before that keeps working (conntrack, not the pin, carries it).
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
ng_set ttl_min 1
policy web L2 "$L2_ALLOW"
start_auditd
start_netguard
SB="stk-mv-$$"
sandbox "$SB" web
GW=$(att "$SB" gateway)

# The pin lasts 2 s: connect at once, check the records after.
expect_dns "$SB" '^rcode=NOERROR answers=A:203.0.113.100 ttl=[12]$' "$GW" moving.test
expect_connect "$SB" ok 203.0.113.100:80
mkdir "$T/hold"
probe "$SB" hold 203.0.113.100:7000 "$T/hold" 2 >"$T/hold.out" &
hold=$!
for _ in $(seq 1 50); do grep -q . "$T/hold.out" && break; sleep 0.1; done
grep -q '^connected 203.0.113.100$' "$T/hold.out" || fail "hold: $(cat "$T/hold.out")"
expect_event dns_query decision=allow "session_id=s-$SB" name=moving.test pinned~203.0.113.100
note "moving.test -> 203.0.113.100 pinned and reachable; a flow to :7000 opened"

dns_move 203.0.113.101
sleep 3			# the old pin (2 s) and any cached answer expire
expect_connect "$SB" fail -t 1 203.0.113.100:80
denied "$SB" policy tcp 203.0.113.100 80
touch "$T/hold/go1"
for _ in $(seq 1 50); do grep -q ' 1' "$T/hold.out" && break; sleep 0.1; done
grep -q '^alive 1$' "$T/hold.out" || fail "the flow opened before expiry was cut: $(cat "$T/hold.out")"
note "after the TTL: 203.0.113.100 dropped for new connections, the open flow still works"

expect_dns "$SB" '^rcode=NOERROR answers=A:203.0.113.101 ' "$GW" moving.test
expect_connect "$SB" ok moving.test:80 203.0.113.101:80
expect_event dns_query decision=allow "session_id=s-$SB" name=moving.test pinned~203.0.113.101
grep -q '^moving.test:80 ok 203.0.113.101 world_203.0.113.101$' "$T/probe.log" ||
    fail "moving.test: $(grep '^moving' "$T/probe.log")"
touch "$T/hold/go2"
wait $hold
grep -q '^alive 2$' "$T/hold.out" || fail "flow: $(cat "$T/hold.out")"
note "re-resolved: moving.test -> 203.0.113.101 pinned and reachable"

egress_finish
note "moving: audit log verifies"
