#!/bin/bash
# The control: the closed world without netguard.  A hand-made veth and NAT
# (what netguard will do, minus every filter) reach each fake host, DNS
# answers directly, raw and v6 packets leave: so each "dropped" in the
# other tests is netguard's doing, not the harness's.
. "$(dirname "$0")/lib.sh"

topo_up
SB="stk-ctl-$$"
ns_add "$SB"
ip -n "$NS_G" link add ctl0 type veth peer name eth0 netns "$SB"
ip -n "$NS_G" addr add 10.231.255.1/30 dev ctl0
ip -n "$NS_G" link set ctl0 up
ip -n "$NS_G" -6 addr add 2001:db8:5b::1/64 dev ctl0 nodad
ip -n "$SB" addr add 10.231.255.2/30 dev eth0
ip -n "$SB" -6 addr add 2001:db8:5b::2/64 dev eth0 nodad
ip -n "$SB" link set eth0 up
ip -n "$SB" link set lo up
ip -n "$SB" route add default via 10.231.255.1
ip -n "$SB" -6 route add default via 2001:db8:5b::1
ip -n "$NS_W" -6 route add 2001:db8:5b::/64 via 2001:db8:ff::1
ip netns exec "$NS_G" sysctl -qw net.ipv6.conf.all.forwarding=1
ip netns exec "$NS_G" nft -f - <<'EOF'
table ip ctl_nat {
	chain post { type nat hook postrouting priority srcnat; policy accept;
		ip saddr 10.231.0.0/16 masquerade
	}
}
EOF
mkdir -p "/etc/netns/$SB"
printf 'nameserver 192.0.2.53\noptions timeout:1 attempts:1\n' >"/etc/netns/$SB/resolv.conf"

# Every fake host, by address and by name, answers with its own address.
# (The first IPv6 packets on fresh links may be lost to neighbour discovery.)
for _ in 1 2 3 4 5; do
	probe "$SB" connect -t 0.5 "[2001:db8::10]:80" | grep -q ' ok ' && break
done
targets=""
for a in $WORLD_V4; do targets="$targets $a:80"; done
for a in $WORLD_V6; do targets="$targets [$a]:80"; done
expect_connect "$SB" ok $targets allowed.test:80 alias.test:80 www.wild.test:80 \
    denied.test:80 private.test:80 meta.test:80 moving.test:80 v6.test:80 \
    203.0.113.10:853 192.0.2.53:853 198.51.100.20:7000
grep -q '^allowed.test:80 ok 203.0.113.10 world_203.0.113.10$' "$T/probe.log" ||
    fail "allowed.test did not reach its host: $(cat "$T/probe.log")"
grep -q '^\[2001:db8::10\]:80 ok 2001:db8::10 world_2001:db8::10$' "$T/probe.log" ||
    fail "no IPv6 path"
world_saw tcp 169.254.169.254 80 || fail "world.log misses the metadata connection"
note "control: every fake host reachable over v4 and v6, by address and name"

# The metadata address in each inet_aton spelling really means it.
targets="v6map:169.254.169.254:80"
for s in $META_SPELLINGS; do targets="$targets $s:80"; done
expect_connect "$SB" ok $targets
for s in $META_SPELLINGS; do
	grep -q "^$s:80 ok 169.254.169.254 world_169.254.169.254\$" "$T/probe.log" ||
	    fail "$s: $(grep "^$s:80" "$T/probe.log")"
	out=$(in_ns "$SB" curl -s --noproxy '*' --max-time 2 "http://$s/") || fail "curl $s"
	[ "$out" = "world 169.254.169.254" ] || fail "curl $s: $out"
done
note "control: 169.254.169.254 in 6 spellings reaches the metadata server (python, curl)"

# DNS straight to the upstream, udp and tcp; the zone the tests rely on.
expect_dns "$SB" '^rcode=NOERROR answers=A:203.0.113.10 ttl=300$' 192.0.2.53 allowed.test
expect_dns "$SB" '^rcode=NOERROR answers=A:203.0.113.10 ttl=300$' --tcp 192.0.2.53 allowed.test
expect_dns "$SB" '^rcode=NOERROR answers=CNAME:allowed.test,A:203.0.113.10 ' 192.0.2.53 alias.test
expect_dns "$SB" '^rcode=NOERROR answers=A:203.0.113.100 ttl=2$' 192.0.2.53 moving.test
expect_dns "$SB" '^rcode=NOERROR answers=AAAA:2001:db8::10 ' --type AAAA 192.0.2.53 v6.test
expect_dns "$SB" '^rcode=NOERROR answers=TXT:stockade test ' --type TXT 192.0.2.53 txt.test
expect_dns "$SB" '^rcode=NOERROR answers=A:203.0.113.10 ' 192.0.2.53 x9.wild.test
expect_dns "$SB" '^rcode=NXDOMAIN' 192.0.2.53 nothing.test
dns_saw 'query\[A\] allowed.test from 192.0.2.1' || fail "dnsmasq log: no NATed query"
dns_move 203.0.113.101
expect_dns "$SB" '^rcode=NOERROR answers=A:203.0.113.101 ttl=2$' 192.0.2.53 moving.test
note "control: dnsmasq zone answers over udp and tcp; moving.test moves"

# ICMP, UDP, a held flow, and a raw IPv6 packet to a v4-mapped address
# (the kernel sends it as IPv6: what netguard's "mapped" rule is for).
[ "$(probe "$SB" icmp 203.0.113.10)" = reply ] || fail "no ICMP echo reply"
probe "$SB" udp 198.51.100.20:7000 | grep -q ' ok ' || fail "no UDP echo"
[ "$(probe "$SB" raw6 ::ffff:169.254.169.254 7000)" = sent ] ||
    fail "raw IPv6 to a v4-mapped address not sent"
mkdir "$T/hold"
probe "$SB" hold 203.0.113.10:7000 "$T/hold" 1 >"$T/hold.out" &
for _ in $(seq 1 50); do grep -q connected "$T/hold.out" && break; sleep 0.1; done
touch "$T/hold/go1"
wait $!
grep -q '^alive 1$' "$T/hold.out" || fail "held flow: $(cat "$T/hold.out")"
note "control: ICMP, UDP echo, held TCP flow and raw IPv6 all leave"

# Loopback in an empty namespace is down.
ns_add "stk-lo-$$"
serve "stk-lo-$$" lo http:0.0.0.0:8080
expect_connect "stk-lo-$$" fail -t 0.5 127.0.0.1:8080
ip -n "stk-lo-$$" link set lo up
expect_connect "stk-lo-$$" ok 127.0.0.1:8080
note "control: loopback of a new namespace is down until set up"
