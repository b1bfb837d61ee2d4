#!/bin/bash
# Flow records: every connection a sandbox's policy allowed is recorded
# when it ends (egress_flow), with the name it was resolved from, the rule
# that allowed it, bytes and packets each way and its duration; a burst
# beyond flow_rate is counted into egress_flow_summary; a denied
# connection gets egress_denied and no flow record; a UDP flow still open
# at a detach is recorded then.
. "$(dirname "$0")/lib.sh"

need_netguard
topo_up
serve "$NS_W" blob blob:203.0.113.10:7001 blob:198.51.100.20:7001 \
    uecho:203.0.113.10:7001
policy flows L2 'allow:
  - names: [allowed.test]
    ports: [7001]
resolver:
  upstreams: [192.0.2.53]'
ng_set flow_rate 4
ng_set flow_summary_interval 1
start_auditd
start_netguard
SB="stk-flows-$$"
sandbox "$SB" flows

# flow_check LPORT SENT GOT DELAY_MS: the one egress_flow of that local
# port, with its name, rule and duration.  Byte counts are IP
# packet lengths, so each direction is the application's bytes plus one
# IPv4 header (20) and one TCP header (20 + options: 12 for timestamps,
# up to 40 on a SYN) per counted packet: [40, 60] bytes of headers each.
# (conntrack counts a GSO/GRO super-packet once, with its one header.)
flow_check() {
	"$PY" - "$LOG" "$@" <<'PY' || fail "egress_flow check: $*"
import json, sys
logdir, lport, sent, got, delay = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
import glob
recs = [json.loads(l) for p in sorted(glob.glob(logdir + "/audit-*.log")) for l in open(p).read().split("\0", 1)[0].splitlines()]
fl = [r for r in recs if r.get("event") == "egress_flow" and r.get("src_port") == lport]
assert len(fl) == 1, "want one egress_flow for port %d, have %s" % (lport, fl)
r = fl[0]
want = {"protocol": "tcp", "family": "ipv4", "dst_ip": "203.0.113.10", "dst_port": 7001,
        "name": "allowed.test", "rule": "allow[0]", "group": 0, "policy": "flows"}
for k, v in want.items():
    assert r.get(k) == v, "%s: %r, want %r (%s)" % (k, r.get(k), v, r)
for d, app in (("out", sent), ("in", got)):
    b, p = r["bytes_" + d], r["packets_" + d]
    assert p >= 2 and 40 * p <= b - app <= 60 * p, \
        "bytes_%s %d for %d application bytes in %d packets" % (d, b, app, p)
# The server waits delay ms before it answers; the record ends at the last
# packet (netguard takes conntrack's linger off), so under a second more.
assert delay <= r["duration_ms"] <= delay + 1000, "duration_ms %d, delay %d" % (r["duration_ms"], delay)
assert r["start"] < r["end"], r
print("bytes_out=%d/%d bytes_in=%d/%d packets=%d/%d duration_ms=%d" % (
    r["bytes_out"], sent, r["bytes_in"], got, r["packets_out"], r["packets_in"], r["duration_ms"]))
PY
}

# One known-size flow each way through the name: 30000 bytes up, 200000
# down, the answer 1200 ms after the request.
out=$(probe "$SB" fetch allowed.test:7001 200000 30000 1200)
read -r res lport sent got <<<"$out"
[ "$res" = ok ] && [ "$got" = 200000 ] || fail "fetch: $out"
expect_event egress_flow "session_id=s-$SB" "sandbox=sb-$SB" "src_port=$lport" name=allowed.test
note "flows: $(flow_check "$lport" "$sent" "$got" 1200)"

# A denied connection: egress_denied, no flow record.
out=$(probe "$SB" fetch -t 1 198.51.100.20:7001 10 0 0)
[ "$out" = "fail timeout" ] || fail "denied fetch: $out"
denied "$SB" policy tcp 198.51.100.20 7001
no_event egress_flow "session_id=s-$SB" dst_ip=198.51.100.20
note "flows: 198.51.100.20:7001 denied, egress_denied and no egress_flow"

# A burst of 20 short flows beyond flow_rate 4: every flow is either a
# record or counted in a summary, never both, never neither.
out=$(probe "$SB" fetch --count 20 allowed.test:7001 1000 0 0)
[ "$(grep -c '^ok ' <<<"$out")" = 20 ] || fail "burst: $out"
ports=$(awk '{print $2}' <<<"$out")
expect_event egress_flow_summary "session_id=s-$SB" "summarised?"
res=$("$PY" - "$LOG" $ports <<'PY'

import glob, json, sys, time
logdir, ports = sys.argv[1], set(int(p) for p in sys.argv[2:])
for _ in range(60):
    recs = [json.loads(l) for p in sorted(glob.glob(logdir + "/audit-*.log")) for l in open(p).read().split("\0", 1)[0].splitlines()]
    fl = [r for r in recs if r.get("event") == "egress_flow" and r.get("src_port") in ports]
    sm = [r for r in recs if r.get("event") == "egress_flow_summary"]
    n = sum(r["summarised"] for r in sm)
    if len(fl) + n >= 20:
        break
    time.sleep(0.2)
assert len(fl) + n == 20, "records %d + summarised %d != 20" % (len(fl), n)
assert n >= 20 - 4 - 2, "only %d summarised at flow_rate 4" % n
assert all(r["lost"] == 0 for r in sm), sm
assert sum(r["bytes_in"] for r in sm) >= n * 1000, sm
print("records=%d summarised=%d" % (len(fl), n))
PY
) || fail "burst accounting: $res"
note "flows: burst of 20 at flow_rate 4 -> $res"

# UDP: conntrack forgets a datagram flow 30 s after its last packet (and
# its garbage collector later still); a detach ends it at once.  One
# 4-byte datagram each way: 4 + 8 (UDP) + 20 (IPv4) = 32 bytes, exactly.
out=$(probe "$SB" udp allowed.test:7001)
[ "${out#* }" = "ok 203.0.113.10" ] || fail "udp: $out"
sleep 1			# the bucket refills after the burst
net detach --socket "$NG_SOCK" --sandbox "sb-$SB" >/dev/null || fail "detach"
expect_event egress_flow "session_id=s-$SB" protocol=udp dst_ip=203.0.113.10 \
    dst_port=7001 name=allowed.test rule=allow[0] bytes_out=32 bytes_in=32 \
    packets_out=1 packets_in=1 duration_ms?
expect_event egress_detached "session_id=s-$SB"
note "flows: a UDP exchange open at the detach is recorded then, 32 bytes each way"

egress_finish
note "flows: audit log verifies"
