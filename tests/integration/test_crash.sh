#!/bin/bash
# SIGKILL the daemon at random moments under load, 24 times: after each
# restart every acknowledged event is present and the chain verifies
# (recovery cuts torn tails and records the cut).
. "$(dirname "$0")/lib.sh"

make_conf "rotation: {max_file_bytes: 256K, keep_files: 1000}" \
    "checkpoint: {every_events: 500, every_seconds: 1}"
rounds=24
for i in $(seq 1 $rounds); do
	start_auditd
	"$LOAD" --socket "$SOCK" --writers 4 --events 100000 --window 8 \
	    --acked "$T/acked" >/dev/null 2>&1 &
	load=$!
	sleep "0.$(( RANDOM % 40 + 5 ))"
	stop_auditd KILL || true
	wait $load || true
done
start_auditd
stop_auditd
n=$("$PY" "$HERE/acked_present.py" "$LOG" "$T/acked") || fail "$n"
[ "$n" -gt 1000 ] || fail "only $n events acked across $rounds rounds"
out=$(verify) || fail "log does not verify after $rounds kills: $out"
note "$rounds kills: $n acknowledged events all present; $(ls "$LOG" | wc -l) files"
note "$(cat "$LOG"/audit-*.log | grep -c '"event":"recovery"') recovery records"
