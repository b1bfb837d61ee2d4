#!/bin/bash
# The life of an attachment: `netguard -n` checks the rules; attach puts
# the sandbox's table, the veth pair and the resolver in place and is
# audited; `stockade net status` lists it; bad attaches are refused;
# detach removes the veth (both ends), the table and the resolver and is
# audited; the /30 is reused; SIGTERM removes the gateway's NAT table.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
policy web L2 "$L2_ALLOW"

out=$("$NETGUARD" -n --rules "$R" 2>&1) || fail "netguard -n: $out"
echo "$out" | grep -qx "configuration OK" || fail "netguard -n: $out"
mkdir -p "$T/bad/network"
cp "$R/netguard.yaml" "$T/bad/"
printf 'level: L2\nallow:\n  - cidrs: [203.0.113.0/33]\n' >"$T/bad/network/broken.yaml"
out=$("$NETGUARD" -n --rules "$T/bad" 2>&1) && fail "netguard -n accepted a /33"
echo "$out" | grep -q "broken.yaml:3:" || fail "netguard -n error without file:line: $out"
note "netguard -n: configuration OK; a /33 refused at broken.yaml:3"

start_auditd
start_netguard
expect_event daemon_start program=netguard
! has_table "$NS_G" ip netguard_nat || fail "a NAT table before any L2/L3 sandbox"
SB="stk-lc-$$"
sandbox "$SB" web
expect_event egress_attached "session_id=s-$SB" "sandbox=sb-$SB" policy=web level=L2 \
    address=10.231.0.2
has_table "$SB" inet netguard || fail "no table inet netguard in the sandbox"
ip -n "$NS_G" -o link show | grep -q 'ngv0@' || fail "no ngv0 in the gateway"
ip -n "$SB" -o addr show dev eth0 | grep -q 'inet 10.231.0.2/30' || fail "eth0 address"
ip -n "$SB" route show default | grep -q 'via 10.231.0.1 dev eth0' || fail "default route"
net status --socket "$NG_SOCK" >"$T/status" || fail "status: $(cat "$T/status")"
"$PY" - "$T/status" "sb-$SB" "s-$SB" <<'EOF' || fail "status: $(cat "$T/status")"
import json, sys
st = json.load(open(sys.argv[1]))
a = [x for x in st["attached"] if x["sandbox"] == sys.argv[2]]
assert len(a) == 1, st
a = a[0]
assert (a["session_id"], a["policy"], a["level"], a["address"]) == \
    (sys.argv[3], "web", "L2", "10.231.0.2"), a
assert "web" in [p["name"] for p in st["policies"]], st
EOF
expect_connect "$SB" ok allowed.test:80
note "attach: table, veth ngv0<->eth0 10.231.0.2/30, route, resolver; status lists it"

# Refusals: an unknown policy, the same namespace twice.
ns_add "stk-lc2-$$"
net attach --socket "$NG_SOCK" --netns "/run/netns/stk-lc2-$$" --policy nosuch \
    --sandbox x >/dev/null 2>"$T/err" && fail "attach with an unknown policy"
grep -q nosuch "$T/err" || fail "unknown policy message: $(cat "$T/err")"
net attach --socket "$NG_SOCK" --netns "/run/netns/$SB" --policy web \
    --sandbox other >/dev/null 2>"$T/err" && fail "attached the same namespace twice"
[ -s "$T/err" ] || fail "no reason on stderr for a double attach"
! ip -n "stk-lc2-$$" link show eth0 2>/dev/null || fail "refused attach left eth0"
note "attach refused for an unknown policy and for a namespace already attached"

net detach --socket "$NG_SOCK" --netns "/run/netns/$SB" >/dev/null || fail "detach"
expect_event egress_detached "session_id=s-$SB" "sandbox=sb-$SB"
! ip -n "$SB" link show eth0 2>/dev/null || fail "eth0 left after detach"
! ip -n "$NS_G" -o link show | grep -q 'ngv0@' || fail "ngv0 left after detach"
! has_table "$SB" inet netguard || fail "table left after detach"
expect_dns "$NS_G" '^(timeout|ConnectionRefusedError)$' -t 0.5 10.231.0.1 allowed.test
net status --socket "$NG_SOCK" | grep -q "sb-$SB" && fail "status still lists it"
net detach --socket "$NG_SOCK" --netns "/run/netns/$SB" >/dev/null 2>&1 &&
    fail "a second detach succeeded"
note "detach: veth, table and resolver gone, egress_detached audited"

attach "$SB" web
[ "$(att "$SB" address)" = 10.231.0.2 ] || fail "the /30 was not reused"
expect_connect "$SB" ok allowed.test:80
net detach --socket "$NG_SOCK" --netns "/run/netns/$SB" >/dev/null || fail "detach"
stop_netguard || fail "netguard exit status $? on SIGTERM"
! has_table "$NS_G" ip netguard_nat || fail "NAT table left after the last detach and SIGTERM"
[ -z "$(ls "$T/ngstate")" ] || fail "state left: $(ls "$T/ngstate")"
expect_event daemon_stop program=netguard
note "re-attach reuses 10.231.0.2; with nothing attached SIGTERM removes the NAT table and state"

egress_finish
note "lifecycle: audit log verifies"
