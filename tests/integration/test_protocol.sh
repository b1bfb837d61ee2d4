#!/bin/bash
# Bad input from writers: every malformed frame gets a clear error reply and
# an event_rejected record; a refused uid gets forbidden and a writer_refused
# record; the daemon never crashes and the chain stays intact.
. "$(dirname "$0")/lib.sh"

make_conf "socket_mode: 0666"
chmod 0711 "$T"		# let the non-writer uid reach the socket
start_auditd

got=$(rawclient bad-inputs | tr '\n' ' ')
want="invalid invalid invalid invalid invalid invalid invalid invalid invalid invalid invalid ack too_large closed "
[ "$got" = "$want" ] || fail "replies: got '$got', want '$want'"
note "malformed frames: $got"

[ "$(rawclient partial-then-close)" = ack ] || fail "partial frame broke the daemon"

# A uid that is not a writer.
got=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" "$HERE/rawclient.py" "$SOCK" one)
[ "$got" = forbidden ] || fail "non-writer got '$got'"
# A flood of refused connections is rate-limited, not lost from view:
# at most refused_per_second (10) records in each second it spans.
t0=$(date +%s)
n=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" "$HERE/rawclient.py" "$SOCK" flood 200 |
    grep -c forbidden)
FLOOD_S=$(( $(date +%s) - t0 + 1 ))
[ "$n" = 200 ] || fail "flood: $n of 200 refused as forbidden"

kill -0 "$AUDITD_PID" || fail "daemon died"
[ "$(rawclient pipeline 50 | grep -c ack)" = 50 ] || fail "pipelined appends"
stop_auditd TERM || fail "exit status $?"

expect_records event_rejected 12
expect_records writer_refused 1
n=$(grep -ah '"event":"writer_refused"' "$LOG"/audit-*.log | wc -l)
# 1 before the flood; the flood's seconds, each at most 10 (+1: a partial one).
[ "$n" -le $(( 1 + 10 * (FLOOD_S + 1) )) ] && [ "$n" -lt 200 ] ||
    fail "writer_refused not rate-limited ($n records in ${FLOOD_S}s)"
grep -q '"writer":{"uid":65534' "$LOG"/audit-*.log || fail "refused uid not recorded"
grep -q 'required field' "$LOG"/audit-*.log || fail "rejection reason not recorded"
# The writer's raw bytes never reach the log: only their digest.
! grep -q 'this is not json' "$LOG"/audit-*.log || fail "raw rejected bytes in the log"
verify >/dev/null || fail "log does not verify"
note "refusals recorded, log verifies"
