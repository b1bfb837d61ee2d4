#!/bin/bash
# `mcp-exec run` builds its sandbox while execution_started's ack is on its
# way, and the command waits for that ack: an audit daemon that answers
# late sees the sandbox built but no command; one that refuses gets no
# command at all, and nothing is left behind.  The daemon here is a fake
# (a socket speaking the frame protocol) that holds its first ack.
. "$(dirname "$0")/lib.sh"

mcp_rules
FAKE="$T/fake.sock"
MARK="gate-mark-$$"
# fake.py MODE: holds the first append's reply 0.5 s, looking meanwhile
# for a sandbox directory (built) and for the command (a python3 with
# $MARK in argv); then acks (ok) or refuses it.  Later appends: acked.
cat >"$T/fake.py" <<'PY'
import json, os, socket, struct, sys, time
path, mode, mark, sbdir, report = sys.argv[1:6]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path); srv.listen(4)
open(report + ".ready", "w").close()
def frames(c):
    buf = b""
    while True:
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
            d = c.recv(65536)
            if not d:
                return
            buf += d
        n = struct.unpack(">I", buf[:4])[0]
        yield json.loads(buf[4:4 + n]); buf = buf[4 + n:]
def command_running():
    for p in os.listdir("/proc"):
        # Not this script, whose own argv holds the mark.
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            a = open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")
        except OSError:
            continue
        if a[0] == b"/usr/bin/python3" and mark.encode() in a:
            return True
    return False
def send(c, msg):
    b = json.dumps(msg).encode(); c.sendall(struct.pack(">I", len(b)) + b)
c, _ = srv.accept()
seen = {"built": False, "ran_early": False, "events": []}
for m in frames(c):
    seen["events"].append(m["event"]["event"])
    if len(seen["events"]) == 1:
        end = time.time() + 0.5
        while time.time() < end:
            seen["built"] |= bool(os.listdir(sbdir)) if os.path.isdir(sbdir) else False
            seen["ran_early"] |= command_running()
            time.sleep(0.01)
        if mode == "refuse":
            send(c, {"type": "error", "id": m["id"], "error": "suspended",
                     "message": "disk full"})
            continue
    send(c, {"type": "ack", "id": m["id"], "seq": len(seen["events"]),
             "hash": "0" * 64, "durable": True})
json.dump(seen, open(report, "w"))
PY
fake() {
	rm -f "$FAKE" "$T/report" "$T/report.ready"
	"$PY" "$T/fake.py" "$FAKE" "$1" "$MARK" "$S/sandboxes" "$T/report" &
	FAKE_PID=$!
	for _ in $(seq 1 250); do [ -f "$T/report.ready" ] && return 0; sleep 0.02; done
	fail "the fake audit daemon did not start"
}
run() { "$MX" run --rules "$R" --state-dir "$S" --audit-socket "$FAKE" "$@"; }
report() { wait "$FAKE_PID"; "$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))$1)" "$T/report"; }

fake ok
out=$(run -- /usr/bin/python3 -I -S -c 'print("ran")' "$MARK") || fail "run: $out"
echo "$out" | grep -q '"stdout":"ran\\n"' || fail "the command did not run: $out"
[ "$(report '["ran_early"]')" = False ] || fail "the command ran before its record was acked"
[ "$(report '["built"]')" = True ] || fail "the sandbox was not built while the ack was awaited"
[ "$(report '["events"]')" = "['execution_started', 'code_execution']" ] ||
    fail "records: $(report '["events"]')"
note "execution_started acked late: sandbox built meanwhile, command after the ack"

fake refuse
st=0; msg=$(run -- /usr/bin/python3 -I -S -c 'print("ran")' "$MARK" 2>&1) || st=$?
[ $st = 1 ] || fail "a refused record: exit $st ($msg)"
echo "$msg" | grep -q "not run: the audit trail is unavailable (suspended: disk full)" ||
    fail "message: $msg"
echo "$msg" | grep -q ran && fail "the command ran: $msg"
[ "$(report '["ran_early"]')" = False ] || fail "the command ran before a refusal"
[ "$(report '["events"]')" = "['execution_started']" ] || fail "records: $(report '["events"]')"
[ -z "$(ls "$S/sandboxes")" ] || fail "sandbox left behind: $(ls "$S/sandboxes")"
note "execution_started refused: no command, no record after it, nothing left"
