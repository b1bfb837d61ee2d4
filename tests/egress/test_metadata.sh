#!/bin/bash
# Cloud metadata endpoints at every level.  169.254.169.254 in each
# spelling inet_aton and getaddrinfo accept (dotted, hex, decimal, octal,
# v4-mapped IPv6, through python and curl) is unreachable at L1, L2 and
# L3; at L3, where everything else is open, the other clouds' endpoints
# (100.100.100.200, 168.63.129.16, 192.0.0.192, fd00:ec2::254), other
# link-local addresses and raw v4-mapped IPv6 are dropped too, each with
# its rule in egress_denied.  test_world.sh shows each spelling really
# reaches the fake metadata server when netguard is absent.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
policy loop L1
policy web L2 "$L2_ALLOW"
policy open L3 "$L3_DNS"
start_auditd
start_netguard
S1="stk-md1-$$" S2="stk-md2-$$" S3="stk-md3-$$"
sandbox "$S1" loop
sandbox "$S2" web
sandbox "$S3" open
sb_v6 "$S2"
sb_v6 "$S3"

# curl_meta NS: curl to each spelling; every one must fail.
curl_meta() {
	pids=""
	for s in $META_SPELLINGS; do
		in_ns "$1" curl -s --noproxy '*' --max-time 1 "http://$s/" \
		    >"$T/curl.$s" 2>&1 &
		pids="$pids $!"
	done
	for p in $pids; do
		! wait "$p" || fail "$1: curl got through: $(cat "$T"/curl.*)"
	done
}
targets="v6map:169.254.169.254:80"
for s in $META_SPELLINGS; do targets="$targets $s:80"; done

for ns in "$S1" "$S2" "$S3"; do
	expect_connect "$ns" fail -t 0.8 $targets
	# Every spelling was parsed to the metadata address, not looked up.
	for s in $META_SPELLINGS; do
		grep -q "^$s:80 fail 169.254.169.254 " "$T/probe.log" ||
		    fail "$s parsed wrongly: $(grep "^$s:80" "$T/probe.log" | tail -1)"
	done
	curl_meta "$ns"
done
world_never tcp 169.254.169.254 80
for ns in "$S2" "$S3"; do
	denied "$ns" metadata tcp 169.254.169.254 80
	expect_event egress_denied "session_id=s-$ns" rule=metadata family=ipv4
done
note "L1, L2, L3: 169.254.169.254 unreachable in 6 spellings (python, curl); rule metadata at L2/L3"

# L3: everything else is open, so these drops are the always-dropped set.
expect_connect "$S3" ok 198.51.100.20:80 203.0.113.10:7000
for a in 100.100.100.200 168.63.129.16 192.0.0.192; do
	expect_connect "$S3" fail -t 0.8 "$a:80"
	denied "$S3" metadata tcp "$a" 80
	world_never tcp "$a" 80
	sleep 0.3		# per-rule log rate: one event each
done
expect_connect "$S3" fail -t 0.8 "[fd00:ec2::254]:80"
expect_event egress_denied "session_id=s-$S3" rule=metadata family=ipv6 protocol=tcp \
    dst_ip=fd00:ec2::254 dst_port=80
world_never tcp fd00:ec2::254 80
note "L3: 198.51.100.20 open; 100.100.100.200, 168.63.129.16, 192.0.0.192, fd00:ec2::254 dropped (metadata)"

expect_connect "$S3" fail -t 0.8 169.254.1.1:80
denied "$S3" linklocal tcp 169.254.1.1 80
for ns in "$S2" "$S3"; do
	probe "$ns" raw6 ::ffff:169.254.169.254 80 | grep -qxE 'sent|error EPERM' ||
	    fail "raw6 from $ns"
	# Either rule may claim it: it is metadata and v4-mapped at once.
	expect_event egress_denied "session_id=s-$ns" "rule=metadata|mapped" family=ipv6 \
	    protocol=udp dst_ip=::ffff:169.254.169.254 dst_port=80
done
note "L3: 169.254.1.1 dropped (linklocal); raw IPv6 to ::ffff:169.254.169.254 dropped at L2, L3"

egress_finish
note "metadata: audit log verifies"
