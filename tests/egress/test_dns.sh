#!/bin/bash
# DNS at L2: the resolver is the only way out.  Queries straight to the
# upstream (udp and tcp) and DoT are dropped (rule dns) and never reach
# dnsmasq; a tunnelling-looking TXT query under an allowed wildcard is
# refused and flagged without being forwarded; an allowed name whose
# answer is a private or metadata address is not pinned, so connecting
# to the answer is dropped.  DoT is also dropped at L3, where nothing
# else on 203.0.113.10 is.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
policy web L2 "$L2_ALLOW"
policy open L3 "$L3_DNS"
start_auditd
start_netguard
SB="stk-dns-$$"
S3="stk-dns3-$$"
sandbox "$SB" web
sandbox "$S3" open
GW=$(att "$SB" gateway)

# The resolver itself answers allowed names over udp and tcp.
expect_dns "$SB" '^rcode=NOERROR answers=A:203.0.113.10 ' "$GW" allowed.test
expect_dns "$SB" '^rcode=NOERROR answers=A:203.0.113.10 ' --tcp "$GW" allowed.test

# Straight to the upstream: dropped, audited, and dnsmasq saw nothing.
expect_dns "$SB" '^(timeout|EPERM)$' -t 1 192.0.2.53 directudp.test
expect_dns "$SB" '^(timeout|ConnectionResetError)$' -t 1 --tcp 192.0.2.53 directtcp.test
denied "$SB" dns udp 192.0.2.53 53
denied "$SB" dns tcp 192.0.2.53 53
! dns_saw 'direct(udp|tcp)\.test' || fail "a direct query reached dnsmasq"
note "L2: DNS to 192.0.2.53 over udp and tcp dropped (rule dns), not seen upstream"

# DoT, at L2 and at L3 (where 203.0.113.10:7000 is open, 853 is not).
expect_connect "$SB" fail -t 1 203.0.113.10:853 192.0.2.53:853
expect_connect "$S3" ok 203.0.113.10:7000
expect_connect "$S3" fail -t 1 203.0.113.10:853 192.0.2.53:853
denied "$SB" dns tcp 203.0.113.10 853
denied "$S3" dns tcp 203.0.113.10 853
denied "$S3" dns tcp 192.0.2.53 853
world_never tcp 203.0.113.10 853
world_never tcp 192.0.2.53 853
note "L2 and L3: DoT (tcp 853) to 203.0.113.10 and 192.0.2.53 dropped (rule dns)"

# Tunnelling: a long random label, TXT, under the allowed *.wild.test.
label=$("$PY" -c 'import random,string; print("".join(random.choice(string.ascii_lowercase+string.digits) for _ in range(60)))')
expect_dns "$SB" '^rcode=NXDOMAIN' --type TXT "$GW" "$label.wild.test"
expect_event dns_tunnel_suspected "session_id=s-$SB" "name=$label.wild.test" qtype=TXT score?
expect_event dns_query decision=deny "session_id=s-$SB" "name=$label.wild.test" reason=tunnelling
! dns_saw "$label" || fail "the tunnelling query was forwarded upstream"
# The same zone, a plain name, still resolves.
expect_dns "$SB" '^rcode=NOERROR answers=TXT:stockade test ' --type TXT "$GW" txt.wild.test
note "L2: TXT $label.wild.test refused NXDOMAIN, dns_tunnel_suspected, not forwarded"

# Allowed names whose answer is not a public address: not pinned.
probe "$SB" dns "$GW" private.test >>"$T/probe.log"
probe "$SB" dns "$GW" meta.test >>"$T/probe.log"
expect_connect "$SB" fail -t 1 10.0.0.5:80 169.254.169.254:80 private.test:80 meta.test:80
denied "$SB" policy tcp 10.0.0.5 80
denied "$SB" metadata tcp 169.254.169.254 80
no_event dns_query decision=allow name=private.test pinned~10.0.0.5
no_event dns_query decision=allow name=meta.test pinned~169.254.169.254
"$PY" "$EG/events.py" "$LOG" dns_query decision=allow name=private.test unpinned~10.0.0.5 >/dev/null ||
    "$PY" "$EG/events.py" "$LOG" dns_query decision=deny name=private.test >/dev/null ||
    event_fail "private.test's answer left no dns_query (allow with unpinned, or deny)"
world_never tcp 10.0.0.5 80
world_never tcp 169.254.169.254 80
note "L2: private.test (10.0.0.5) and meta.test (169.254.169.254) answers not pinned; connects dropped"

egress_finish
note "dns: audit log verifies"
