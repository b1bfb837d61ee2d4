#!/bin/bash
# A host left as found: netguard changes the uplink's ip_forward and adds
# its NAT table only for L2/L3 sandboxes, records each change (was, now)
# before making it, shows it in `stockade status`, and puts each back when
# the last L2/L3 sandbox is gone: on detach, across a restart that keeps
# sandboxes attached, and at a start that finds their sandboxes gone.  A
# setting that already had the value netguard wants is left alone.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
policy web L2 "$L2_ALLOW"
policy quiet L1
start_auditd
fwd() { ip netns exec "$NS_G" cat /proc/sys/net/ipv4/ip_forward; }
status() { "$STOCKADE" status --audit-socket "$SOCK" --netguard-socket "$NG_SOCK" \
    --mcp-state "$T/none" 2>&1 || true; }
as_found() {	# as_found WHAT: the uplink as it was before netguard
	[ "$(fwd)" = 0 ] || fail "$1: ip_forward is $(fwd), was 0"
	! has_table "$NS_G" ip netguard_nat || fail "$1: NAT table left"
	[ ! -e "$T/ngstate/.host-settings" ] || fail "$1: record left"
}
detach() { net detach --socket "$NG_SOCK" --sandbox "sb-$1" >/dev/null || fail "detach $1"; }

ip netns exec "$NS_G" sysctl -qw net.ipv4.ip_forward=0
start_netguard
S1="stk-h1-$$" S2="stk-h2-$$" S3="stk-h3-$$" S4="stk-h4-$$"
sandbox "$S1" quiet
as_found "L1 attached"
status | grep -q "host           nothing changed" || fail "status: $(status)"

sandbox "$S2" web
[ "$(fwd)" = 1 ] || fail "L2 attached: ip_forward $(fwd)"
has_table "$NS_G" ip netguard_nat || fail "L2 attached: no NAT table"
status | grep -q "host           net.ipv4.ip_forward: 1 (was 0)" || fail "status: $(status)"
status | grep -q "host           nftables table ip netguard_nat" || fail "status: $(status)"
expect_connect "$S2" ok allowed.test:80
detach "$S2"
as_found "the last L2 sandbox detached"
note "L1 changes nothing; L2 sets ip_forward and NAT, shown in status; the last detach puts both back"

# A restart keeps sandboxes attached, and so what they need; the next
# netguard knows what the host was and puts it back when they go.
sandbox "$S3" web
stop_netguard || fail "netguard exit status $? on SIGTERM"
[ "$(fwd)" = 1 ] && has_table "$NS_G" ip netguard_nat || fail "SIGTERM with S3 attached took its forwarding"
start_netguard
expect_connect "$S3" ok allowed.test:80
detach "$S3"
as_found "after a restart, the last detach"
# Its sandbox gone while netguard is down: the start puts the host back.
sandbox "$S4" web
stop_netguard || fail "netguard exit status $? on SIGTERM"
ip netns del "$S4"
start_netguard
as_found "a start that found the L2 sandbox gone"
note "across restarts: kept while needed, put back with the last L2 sandbox (also one gone while down)"

# Already forwarding: nothing to change, nothing put back.
ip netns exec "$NS_G" sysctl -qw net.ipv4.ip_forward=1
S5="stk-h5-$$"
sandbox "$S5" web
status | grep -q "host           net.ipv4.ip_forward" && fail "ip_forward recorded though unchanged"
detach "$S5"
[ "$(fwd)" = 1 ] || fail "ip_forward changed from the 1 it was"
detach "$S1"
egress_finish
! has_table "$NS_G" ip netguard_nat || fail "NAT table left after stop"
note "a setting already as needed is left alone; stop leaves nothing"
