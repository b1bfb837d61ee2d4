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
# The good audit.yaml's text is kept beside the log, as the writers' are.
"$PY" - "$LOG" <<'EOF' || fail "the good audit.yaml's text was not kept (see above)"
import glob, json, sys
log = sys.argv[1]
recs = [json.loads(l) for f in sorted(glob.glob(log + "/audit-*.log"))
        for l in open(f).read().split("\0", 1)[0].splitlines()]
good = [r for r in recs if r["event"] == "policy_load" and r["ok"]]
f = good[0]["files"][0]
assert f.get("kept") is True and "content" not in f, f
blob = glob.glob(log + "/blobs/*/" + f["sha256"])
assert blob and open(blob[0]).read() == "writers: [root]\ncheckpoint: {every_events: 7}\n", blob
EOF
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
