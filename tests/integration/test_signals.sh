#!/bin/bash
# SIGTERM: every acked event durable and a final signed checkpoint, also
# off-host.  SIGHUP: a good config is applied and audited, a bad one is
# refused, audited, and the old one kept.
. "$(dirname "$0")/lib.sh"

start_auditd
"$LOAD" --socket "$SOCK" --writers 2 --events 100 --acked "$T/acked" >/dev/null
make_conf "checkpoint: {every_events: 7}"
kill -HUP "$AUDITD_PID"
sleep 0.3
printf 'limits: [\n' >"$CONF"
kill -HUP "$AUDITD_PID"
sleep 0.3
kill -0 "$AUDITD_PID" || fail "bad reload killed the daemon"
"$LOAD" --socket "$SOCK" --writers 1 --events 30 --acked "$T/acked" >/dev/null
stop_auditd TERM || fail "exit status $?"
grep -q '"event":"policy_load".*"ok":true' "$LOG"/audit-*.log || fail "good reload not audited"
grep -q '"event":"policy_load".*"ok":false' "$LOG"/audit-*.log || fail "bad reload not audited"
# The record carries the error itself, file:line:column as printed.
grep '"event":"policy_load".*"ok":false' "$LOG"/audit-*.log |
    grep -q "\"error\":\"$CONF:[0-9]*:[0-9]*: " ||
    fail "bad reload's error text: $(grep '"ok":false' "$LOG"/audit-*.log)"
"$PY" "$HERE/acked_present.py" "$LOG" "$T/acked" >/dev/null || fail "acked events missing"
last=$(tail -n 1 "$LOG"/audit-*.log)
echo "$last" | grep -q '"event":"checkpoint"' || fail "no final checkpoint: $last"
prev=$(tail -n 2 "$LOG"/audit-*.log | head -1)
echo "$prev" | grep -q '"event":"daemon_stop"' || fail "no daemon_stop"
# every_events: 7 applied after the reload: many checkpoints in the last 30.
n=$(tail -n 40 "$LOG"/audit-*.log | grep -c '"event":"checkpoint"')
[ "$n" -ge 4 ] || fail "reloaded checkpoint interval not applied ($n)"
out=$(verify) || fail "$out"
echo "$out" | grep -q '0 record(s) after the last one' || fail "final checkpoint not signed: $out"
note "SIGTERM and SIGHUP ok"
