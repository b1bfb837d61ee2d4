#!/bin/bash
# `stockade audit status` names only what is on disk: when a batch
# carrying a checkpoint fails on a full disk, the head rolls back and so
# do checkpoint_seq and checkpoint_ts; when one starting a new file fails,
# active_file still names the file that holds the head.
. "$(dirname "$0")/lib.sh"

mkdir -p "$LOG"
mount -t tmpfs -o size=1M tmpfs "$LOG"
# every_events 1: each event's batch carries a checkpoint of its own.
make_conf "retry_seconds: 2" "checkpoint: {every_events: 1}"
start_auditd

# status_check WHAT: the checkpoint status names is the last checkpoint
# record on disk, at or below the durable head; prints its seq.
status_check() {
	"$STOCKADE" audit status --socket "$SOCK" >"$T/status" || fail "$1: status"
	cat "$LOG"/audit-*.log | tr -d '\000' >"$T/records"
	"$PY" - "$T/status" "$T/records" "$1" <<'PY' 2>&1 || exit 1
import json, sys
st = json.load(open(sys.argv[1]))["audit"]
recs = {}
for line in open(sys.argv[2]):
    if line.strip():
        r = json.loads(line)
        recs[r["seq"]] = r
what, cp = sys.argv[3], st["checkpoint_seq"]
if cp > st["seq"] or cp > st["durable_seq"]:
    sys.exit("%s: status names checkpoint %d beyond the head (seq %d, "
             "durable_seq %d)" % (what, cp, st["seq"], st["durable_seq"]))
r = recs.get(cp)
if r is None or r["event"] != "checkpoint":
    sys.exit("%s: checkpoint_seq %d is not a checkpoint record on disk "
             "(%s)" % (what, cp, r and r["event"]))
if r["cp_ts"] != st["checkpoint_ts"]:
    sys.exit("%s: checkpoint_ts %s, the record says %s" %
             (what, st["checkpoint_ts"], r["cp_ts"]))
last = max(s for s, r in recs.items() if r["event"] == "checkpoint")
if cp != last:
    sys.exit("%s: status names checkpoint %d, the last on disk is %d" %
             (what, cp, last))
print(cp)
PY
}

echo '{"event":"operator_note","principal":"user:ops","message":"before"}' |
    "$STOCKADE" audit send --socket "$SOCK" >/dev/null || fail "send"
out=$(status_check "running") || fail "$out"
dd if=/dev/zero of="$LOG/filler" bs=4k 2>/dev/null || true
# The log file's last page may still take a few records.
for _ in $(seq 1 200); do
	out=$(echo '{"event":"operator_note","principal":"user:ops","message":"full"}' |
	    "$STOCKADE" audit send --socket "$SOCK" 2>&1) || break
done
echo "$out" | grep -q suspended || fail "send on a full disk: $out"
"$STOCKADE" audit status --socket "$SOCK" | grep -q '"state": "failed"' ||
    fail "not failed"
failed=$(status_check "disk full") || fail "$failed"
note "disk full: status still names checkpoint $failed, the last one on disk"

rm -f "$LOG/filler"
for _ in $(seq 1 100); do
	"$STOCKADE" audit status --socket "$SOCK" | grep -q '"state": "running"' && break
	sleep 0.1
done
echo '{"event":"operator_note","principal":"user:ops","message":"after"}' |
    "$STOCKADE" audit send --socket "$SOCK" >/dev/null || fail "send after resume"
after=$(status_check "resumed") || fail "$after"
[ "$after" -gt "$failed" ] || fail "no new checkpoint after resume ($after)"
note "resumed: status names checkpoint $after"
stop_auditd || fail "exit status $?"
verify >/dev/null || fail "log does not verify"

# The same for the active file: a batch that starts a new file and fails
# leaves status naming the file that holds the durable head.
rm -rf "${LOG:?}"/* "$LOG"/.[!.]* "$CP"
make_conf "retry_seconds: 60" "rotation: {max_file_bytes: 64K}"
start_auditd
x=$(head -c 4000 /dev/zero | tr '\0' x)
active() {
	"$STOCKADE" audit status --socket "$SOCK" |
	    "$PY" -c 'import json,sys; print(json.load(sys.stdin)["audit"]["active_file"])'
}
# Up to the size limit: the next batch starts a new file.
for _ in $(seq 1 40); do
	echo "{\"event\":\"operator_note\",\"principal\":\"user:ops\",\"message\":\"$x\"}" |
	    "$STOCKADE" audit send --socket "$SOCK" >/dev/null || fail "send"
	[ "$(stat -c %s "$LOG/$(active)")" -ge 65536 ] && break
done
full=$(active)
[ "$(stat -c %s "$LOG/$full")" -ge 65536 ] || fail "$full never reached 64K"
dd if=/dev/zero of="$LOG/filler" bs=4k 2>/dev/null || true
echo '{"event":"operator_note","principal":"user:ops","message":"full"}' |
    "$STOCKADE" audit send --socket "$SOCK" >/dev/null 2>&1 && fail "send on a full disk"
now=$(active)
[ "$now" = "$full" ] || fail "status names $now (failed with its batch), the head is in $full"
note "a new file that failed with its batch: status still names $full"
rm -f "$LOG/filler"
stop_auditd || fail "exit status $?"
