#!/bin/bash
# netguard restarting: SIGTERM leaves every sandbox under its policy (table,
# veth, NAT stay; only the resolver pauses); the next netguard restores
# each sandbox still alive at the same address; a sandbox that went away
# meanwhile is cleaned up at start, one that goes away while netguard runs
# within the reaper's interval; and nothing is left behind.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
policy web L2 "$L2_ALLOW"
start_auditd
start_netguard
SA="stk-ra-$$" SB="stk-rb-$$" SC="stk-rc-$$"
sandbox "$SA" web
sandbox "$SB" web
addr_a=$(att "$SA" address)
expect_connect "$SA" ok allowed.test:80

stop_netguard || fail "netguard exit status $? on SIGTERM"
has_table "$SA" inet netguard || fail "SIGTERM took the sandbox's table"
ip -n "$SA" link show eth0 >/dev/null 2>&1 || fail "SIGTERM took the sandbox's eth0"
has_table "$NS_G" ip netguard_nat || fail "SIGTERM took the NAT table"
expect_connect "$SA" ok 203.0.113.10:80
expect_connect "$SA" fail -t 1 198.51.100.20:80
note "SIGTERM: tables, veths and NAT stay; the allowlist still holds, and still only it"

# B goes away while netguard is down: nothing but netguard's record holds it.
ip netns del "$SB"
start_netguard
expect_event egress_attached "session_id=s-$SA" restored=true "address=$addr_a"
expect_event cleanup program=netguard "removed~attachment sb-$SB (session s-$SB): sandbox gone"
no_event cleanup program=netguard "removed~veth ngv0"
[ "$(net status --socket "$NG_SOCK" | "$PY" -c 'import json,sys; print(" ".join(a["sandbox"] for a in json.load(sys.stdin)["attached"]))')" = "sb-$SA" ] ||
    fail "status after restart: $(net status --socket "$NG_SOCK")"
expect_connect "$SA" ok allowed.test:80
[ ! -e "$T/ngstate/sb-$SB.json" ] || fail "B's record left"
note "restart: A restored at $addr_a (resolver answers again), B's leftovers removed and audited"

# C goes away while netguard runs: the reaper notices.
sandbox "$SC" web
ip netns del "$SC"
WAIT_EVENT=15 expect_event egress_detached "session_id=s-$SC" "reason=sandbox gone"
[ ! -e "$T/ngstate/sb-$SC.json" ] || fail "C's record left"
note "a sandbox gone while netguard runs is detached within the reaper's interval"

net detach --socket "$NG_SOCK" --sandbox "sb-$SA" >/dev/null || fail "detach A"
egress_finish
! has_table "$NS_G" ip netguard_nat || fail "NAT table left with nothing attached"
[ -z "$(ls "$T/ngstate")" ] || fail "state left: $(ls "$T/ngstate")"
! ip -n "$NS_G" -o link show | grep -q 'ngv' || fail "veths left: $(ip -n "$NS_G" -o link show)"
note "restart: nothing left behind; audit log verifies"
