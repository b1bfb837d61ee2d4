#!/bin/bash
# stockade-auditd's busy polling (flush.busy_poll_us, docs/policy.md):
# after a durable ack to a writer whose next event came within two polls
# of its last ack, the loop polls instead of sleeping.  A synchronous
# writer that streams events is caught in polls; one that pauses 5 ms
# between events never starts one; busy_poll_us 0 turns polling off, on
# SIGHUP too; a daemon with one CPU to run on never polls.  Polling
# changes no ack: every one still follows its fdatasync (check_writer_
# inline), and the log verifies.
. "$(dirname "$0")/lib.sh"

# poll FIELD: the status reply's busy_poll.FIELD.
poll() {
	"$STOCKADE" audit status --socket "$SOCK" |
	    "$PY" -c 'import json, sys; print(json.load(sys.stdin)["busy_poll"][sys.argv[1]])' "$1"
}
stream() { "$LOAD" --socket "$SOCK" --writers 1 --events 300 --window 1 >/dev/null || fail "load"; }
# 20 synchronous events, 5 ms apart, each after its ack.
paced() {
	"$PY" - "$SOCK" <<'PYEOF' || fail "paced writer"
import json, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
f = s.makefile("rb")
for i in range(20):
    m = json.dumps({"type": "append", "id": i + 1, "event": {"event":
        "operator_note", "principal": "user:test", "message": "hi"}}).encode()
    s.sendall(struct.pack(">I", len(m)) + m)
    r = json.loads(f.read(struct.unpack(">I", f.read(4))[0]))
    assert r["type"] == "ack", r
    time.sleep(0.005)
PYEOF
}

[ "$(nproc)" -ge 2 ] || { echo "SKIP: one CPU: polling is off by design"; exit 77; }
make_conf
start_auditd
[ "$(poll enabled)" = True ] && [ "$(poll us)" = 100 ] ||
	fail "default: busy_poll $(poll enabled) $(poll us), want enabled, 100 us"
paced
[ "$(poll polls)" = 0 ] || fail "a writer 5 ms apart started $(poll polls) polls"
note "a writer that pauses 5 ms between events: no poll"
stream
p=$(poll polls) c=$(poll caught)
[ "$p" -gt 0 ] && [ "$c" -gt 0 ] || fail "a streaming writer: $p polls, $c events caught"
note "a streaming synchronous writer: $c of 300 events came during $p polls"

make_conf "flush: {busy_poll_us: 0}"
kill -HUP "$AUDITD_PID"
for _ in $(seq 1 100); do [ "$(poll us)" = 0 ] && break; sleep 0.05; done
[ "$(poll enabled)" = False ] || fail "busy_poll_us 0 after SIGHUP: still enabled"
p=$(poll polls)
stream
[ "$(poll polls)" = "$p" ] || fail "busy_poll_us 0: $(( $(poll polls) - p )) more polls"
note "busy_poll_us 0 (SIGHUP): no more polls"
stop_auditd

make_conf
printf '#!/bin/sh\nexec taskset -c 0 %s "$@"\n' "$AUDITD" >"$T/pinned"
chmod 0755 "$T/pinned"
AUDITD="$T/pinned" start_auditd
[ "$(poll enabled)" = False ] || fail "a daemon on one CPU polls"
stream
[ "$(poll polls)" = 0 ] || fail "a daemon on one CPU started $(poll polls) polls"
note "a daemon with one CPU to run on: polling off"
stop_auditd
verify >/dev/null || fail "audit verify"
