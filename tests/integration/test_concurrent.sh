#!/bin/bash
# Eight writers at once, synchronous acks: every ack is in the log exactly
# where it says, seqs are unique, and the chain verifies.
. "$(dirname "$0")/lib.sh"

start_auditd
"$LOAD" --socket "$SOCK" --writers 8 --events 1500 --window 4 \
    --acked "$T/acked" >"$T/load.out" || fail "load: $(cat "$T/load.out")"
note "$(cat "$T/load.out")"
stop_auditd
n=$("$PY" "$HERE/acked_present.py" "$LOG" "$T/acked") || fail "$n"
[ "$n" = 12000 ] || fail "acked $n"
[ "$(awk '{print $3}' "$T/acked" | sort -u | wc -l)" = 12000 ] || fail "duplicate seqs"
verify >/dev/null || fail "log does not verify"
note "12000 acked events present, unique, verified"
