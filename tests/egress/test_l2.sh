#!/bin/bash
# L2, connections: allowed names (through netguard's resolver) and CIDRs
# reach their hosts; any other address, port or protocol is dropped on the
# way out (a timeout, never a reset) and audited as egress_denied with the
# rule, protocol, destination and port; so are the address pool, IPv6 and
# v4-mapped IPv6.  The world's log proves nothing dropped got through.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
policy web L2 "$L2_ALLOW"
start_auditd
start_netguard
SB="stk-l2-$$"
sandbox "$SB" web
GW=$(att "$SB" gateway)
[ "$(att "$SB" address)" = 10.231.0.2 ] && [ "$GW" = 10.231.0.1 ] &&
    [ "$(att "$SB" resolver)" = 10.231.0.1 ] && [ "$(att "$SB" level)" = L2 ] ||
    fail "attach reply: $(cat "$T/attach.$SB")"
expect_event egress_attached "session_id=s-$SB" "sandbox=sb-$SB" principal=user:egress \
    policy=web level=L2 address=10.231.0.2

# Allowed: names through the resolver (plain, CNAME, wildcard), and the CIDR.
expect_connect "$SB" ok allowed.test:80 alias.test:80 www.wild.test:80 203.0.113.10:7000
for t in allowed.test alias.test www.wild.test; do
	grep -q "^$t:80 ok 203.0.113.10 world_203.0.113.10$" "$T/probe.log" ||
	    fail "$t: wrong host: $(grep "^$t" "$T/probe.log")"
done
expect_event dns_query decision=allow "session_id=s-$SB" name=allowed.test qtype=A pinned~203.0.113.10
expect_event dns_query decision=allow "session_id=s-$SB" name=alias.test pinned~203.0.113.10
expect_event dns_query decision=allow "session_id=s-$SB" name=www.wild.test pinned~203.0.113.10
grep -q '^tcp 203.0.113.10 80 192.0.2.1$' "$T/world.log" ||
    fail "not masqueraded behind the gateway: $(grep '^tcp 203.0.113.10 80' "$T/world.log")"
note "L2: allowed.test, alias.test (CNAME), www.wild.test and 203.0.113.0/28 reachable (NAT 192.0.2.1); pins audited"

# Not allowed: another address, an allowed address on another port, UDP,
# ICMP.  Each is dropped (a timeout, never a refusal) and audited.
expect_connect "$SB" fail -t 1 198.51.100.20:80 203.0.113.10:22
for t in 198.51.100.20:80 203.0.113.10:22; do
	grep -q "^$t fail [0-9.]* timeout$" "$T/probe.log" ||
	    fail "$t: not a silent drop: $(grep "^$t" "$T/probe.log")"
done
# (A drop in the output hook fails sendmsg at once for UDP and raw
# sockets: EPERM, as good as a timeout.)
out=$(probe "$SB" udp -t 1 198.51.100.20:7000)
echo "$out" | grep -qE ' fail [0-9.]+ (timeout|EPERM)$' || fail "UDP to 198.51.100.20: $out"
out=$(probe "$SB" icmp -t 1 203.0.113.10)
echo "$out" | grep -qxE 'timeout|EPERM' || fail "ICMP echo at L2: $out"
denied "$SB" policy tcp 198.51.100.20 80
denied "$SB" policy tcp 203.0.113.10 22
denied "$SB" policy udp 198.51.100.20 7000
denied "$SB" policy icmp 203.0.113.10
expect_event egress_denied "session_id=s-$SB" "sandbox=sb-$SB" principal=user:egress \
    policy=web rule=policy family=ipv4 dst_ip=198.51.100.20 dst_port=80
world_never tcp 198.51.100.20 80
world_never udp 198.51.100.20 7000
world_never tcp 203.0.113.10 22
note "L2: 198.51.100.20 (tcp, udp), 203.0.113.10:22 and ICMP dropped silently; egress_denied rule policy"

# A name outside the allowlist: NXDOMAIN, refused, never asked upstream.
expect_dns "$SB" '^rcode=NXDOMAIN answers= ' "$GW" denied.test
expect_dns "$SB" '^rcode=NXDOMAIN answers= ' --tcp "$GW" denied.test
expect_event dns_query decision=deny "session_id=s-$SB" name=denied.test reason=not_allowed
! dns_saw 'denied\.test' || fail "the resolver forwarded denied.test upstream"
expect_connect "$SB" fail denied.test:80
note "L2: denied.test is NXDOMAIN over udp and tcp, dns_query deny not_allowed, never forwarded"

# The pool: the gateway on anything but the resolver port, another /30.
expect_connect "$SB" fail -t 1 "$GW:22" 10.231.0.6:80
denied "$SB" internal tcp "$GW" 22
denied "$SB" internal tcp 10.231.0.6 80
note "L2: gateway:22 and another sandbox's /30 dropped (rule internal)"

# IPv6, as if the sandbox had it: dropped at L2 (nothing allows it).
sb_v6 "$SB"
expect_connect "$SB" fail -t 1 "[2001:db8::10]:80"
expect_event egress_denied "session_id=s-$SB" family=ipv6 protocol=tcp \
    dst_ip=2001:db8::10 dst_port=80
# v4-mapped: from an AF_INET6 socket the kernel sends IPv4 (judged as such);
# on a raw IPv6 socket it stays IPv6 on the wire (the mapped rule).
expect_connect "$SB" fail -t 1 v6map:198.51.100.20:7000
expect_event egress_denied "session_id=s-$SB" rule=policy family=ipv4 protocol=tcp \
    dst_ip=198.51.100.20 dst_port=7000
world_never tcp 198.51.100.20 7000
probe "$SB" raw6 ::ffff:198.51.100.20 7000 | grep -qxE 'sent|error EPERM' || fail "raw6"
expect_event egress_denied "session_id=s-$SB" rule=mapped family=ipv6 protocol=udp \
    dst_ip=::ffff:198.51.100.20 dst_port=7000
world_never tcp 2001:db8::10 80
note "L2: IPv6 to 2001:db8::10, v6-mapped 198.51.100.20 (sent as IPv4) and raw IPv6 to ::ffff:198.51.100.20 (rule mapped) dropped"

# A flood of denied packets is logged at a bounded rate (per rule: 20/s
# and a burst of 20), and netguard keeps up.
out=$(probe "$SB" flood --count 300 198.51.100.20:9)
sleep 2.5		# the kernel flushes NFLOG batches at least every second
n=$("$PY" "$EG/events.py" "$LOG" --count egress_denied "session_id=s-$SB" dst_port=9)
# At least nft's smallest burst (5), at most a burst and 1 s of rate, doubled.
[ "$n" -ge 5 ] && [ "$n" -le 80 ] || fail "flood of 300 ($out): $n egress_denied records"
expect_connect "$SB" ok allowed.test:80
note "L2: 300 denied datagrams ($out) -> $n egress_denied records; netguard still serves"

egress_finish
note "L2: audit log verifies"
