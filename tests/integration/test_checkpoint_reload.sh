#!/bin/bash
# Time-based checkpoints survive reloads: configuration management that
# sends SIGHUP more often than checkpoint.every_seconds must not keep
# records unsigned.  The deadline runs from the last checkpoint, so a
# reload never pushes it back, and a new every_seconds counts from there.
. "$(dirname "$0")/lib.sh"

# No checkpoint by count: every one in the window below is time-based.
make_conf "checkpoint: {every_events: 100000, every_seconds: 2}"
start_auditd
# SIGHUP every ~0.3 s for ~6 s while records arrive (each reload records
# a policy_load too).
end=$(( $(date +%s%N) / 1000000 + 6000 ))
while [ $(( $(date +%s%N) / 1000000 )) -lt "$end" ]; do
	echo '{"event":"operator_note","principal":"user:ops","message":"tick"}' |
	    "$STOCKADE" audit send --socket "$SOCK" >/dev/null || fail "send"
	kill -HUP "$AUDITD_PID"
	sleep 0.3
done
# every_seconds 30 from a checkpoint up to 2 s old: none in the next second.
make_conf "checkpoint: {every_events: 100000, every_seconds: 30}"
kill -HUP "$AUDITD_PID"
sleep 1
echo '{"event":"operator_note","principal":"user:ops","message":"late"}' |
    "$STOCKADE" audit send --socket "$SOCK" >/dev/null || fail "send"
# Back to 1 s: the last checkpoint is older than that, so one comes at once.
make_conf "checkpoint: {every_events: 100000, every_seconds: 1}"
kill -HUP "$AUDITD_PID"
sleep 0.5
echo '{"event":"operator_note","principal":"user:ops","message":"marker"}' |
    "$STOCKADE" audit send --socket "$SOCK" >/dev/null || fail "send"
stop_auditd || fail "exit status $?"

cat "$LOG"/audit-*.log | tr -d '\000' | "$PY" -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin if l.strip()]
loads = [i for i, r in enumerate(recs) if r["event"] == "policy_load"]
# The HUP loop: from the first reload to the one that set 30 s.
first, last = loads[0], loads[-3]
n = sum(1 for r in recs[first:last] if r["event"] == "checkpoint")
if n < 2:
    sys.exit("%d time-based checkpoint(s) in ~6 s of SIGHUPs every 0.3 s "
             "at every_seconds 2 (want >= 2)" % n)
print("time-based checkpoints during the reload loop:", n)
late = next(i for i, r in enumerate(recs) if r.get("message") == "late")
marker = next(i for i, r in enumerate(recs) if r.get("message") == "marker")
if any(r["event"] == "checkpoint" for r in recs[loads[-2]:late]):
    sys.exit("every_seconds 30 still signed within a second")
if not any(r["event"] == "checkpoint" for r in recs[late:marker]):
    sys.exit("every_seconds 1 after a 1.5 s old checkpoint: none within 0.5 s")
' >"$T/out" 2>&1 || fail "$(cat "$T/out")"
note "$(cat "$T/out") (every_seconds 2, SIGHUP every 0.3 s for 6 s)"
note "a changed every_seconds counts from the last checkpoint"
verify >/dev/null || fail "log does not verify"
