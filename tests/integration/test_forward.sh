#!/bin/bash
# Forwarding to a SIEM: stockade-auditd sends its log to a real rsyslog
# over TLS on loopback (RFC 5425).  Every record arrives, in order; while
# the collector is down nothing is lost (records may repeat, never go
# missing); a restart of the daemon repeats nothing; a collector whose
# certificate does not verify gets nothing.  The collector's configuration
# is docs/operations.md's: its maxMessageSize lets a 12 KB record through
# whole (rsyslog's default of 8 KB cut it).
. "$(dirname "$0")/lib.sh"

command -v rsyslogd >/dev/null || { echo "rsyslogd not installed"; exit 77; }
ls /usr/lib/*/rsyslog/lmnsd_ossl.so >/dev/null 2>&1 ||
    { echo "rsyslog-openssl not installed"; exit 77; }

# A CA, the collector's certificate for 127.0.0.1, and a CA that signed
# nothing here.
tls_certs
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj /CN=other-ca -keyout "$T/other.key" -out "$T/other.pem" \
    >/dev/null 2>&1 || fail "openssl"
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$T/rs"
cat >"$T/rsyslog.conf" <<CONF
global(maxMessageSize="320k")
global(workDirectory="$T/rs" DefaultNetstreamDriver="ossl"
       DefaultNetstreamDriverCAFile="$T/ca.pem"
       DefaultNetstreamDriverCertFile="$T/server.pem"
       DefaultNetstreamDriverKeyFile="$T/server.key")
module(load="imtcp" StreamDriver.Name="ossl" StreamDriver.Mode="1"
       StreamDriver.AuthMode="anon")
input(type="imtcp" port="$PORT" address="127.0.0.1")
template(name="msg" type="string" string="%msgid% %msg%\n")
action(type="omfile" file="$T/siem.log" template="msg")
CONF
RS_PID=""
rs_start() {
	rsyslogd -n -f "$T/rsyslog.conf" -i "$T/rs/pid" >>"$T/rs.err" 2>&1 &
	RS_PID=$!
	for _ in $(seq 1 100); do
		"$PY" -c "import socket,sys; socket.create_connection(('127.0.0.1',$PORT),0.2)" \
		    2>/dev/null && return 0
		sleep 0.05
	done
	fail "rsyslogd did not listen: $(tail -3 "$T/rs.err")"
}
rs_stop() { kill "$RS_PID"; wait "$RS_PID" 2>/dev/null || true; RS_PID=""; }
trap '[ -z "$RS_PID" ] || kill -9 "$RS_PID" 2>/dev/null; cleanup' EXIT

make_conf "forward:" \
    "  - name: siem" "    address: 127.0.0.1:$PORT" "    ca: $T/ca.pem" \
    "    server_name: localhost" "    resend_window_s: 2" \
    "  - name: impostor" "    address: 127.0.0.1:$PORT" "    ca: $T/other.pem"

head_seq() { "$STOCKADE" audit status --socket "$SOCK" | sed -n 's/.*"durable_seq": \([0-9]*\).*/\1/p'; }
# check WHAT: every seq up to the head arrived, first copies in order;
# prints "total duplicates".
# Waits up to 30 s: after failures the forwarder backs off (1, 2, 4 s...).
check() {
	local want
	want=$(head_seq)
	for _ in $(seq 1 600); do
		grep -q "\"seq\":$want," "$T/siem.log" 2>/dev/null && break
		sleep 0.05
	done
	if ! grep -q "\"seq\":$want," "$T/siem.log" 2>/dev/null; then
		echo "$1: seq $want never reached the collector"
		grep forward "$T/auditd.err" | tail -5
		tail -5 "$T/rs.err"
		exit 1
	fi
	"$PY" - "$T/siem.log" "$want" "$1" <<'PY' || exit 1
import json, sys
path, want, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seen, order, dups = set(), [], 0
for line in open(path):
    msgid, _, msg = line.strip().partition(" ")
    rec = json.loads(msg)
    if rec["event"][:32] != msgid:
        sys.exit("%s: MSGID %s for event %s" % (what, msgid, rec["event"]))
    if rec["seq"] in seen:
        dups += 1
        continue
    seen.add(rec["seq"])
    order.append(rec["seq"])
missing = [s for s in range(1, want + 1) if s not in seen]
if missing:
    sys.exit("%s: %d records missing, first %s" % (what, len(missing), missing[:5]))
if order != sorted(order):
    sys.exit("%s: records out of order" % what)
print(dups)
PY
}

rs_start
start_auditd
"$LOAD" --socket "$SOCK" --writers 2 --events 100 --window 4 >/dev/null
x=$(head -c 4000 /dev/zero | tr '\0' x)
echo "{\"event\":\"operator_note\",\"principal\":\"user:ops\",\"message\":\"$x\",\"a\":\"$x\",\"b\":\"$x\"}" |
    "$STOCKADE" audit send --socket "$SOCK" >/dev/null || fail "send a 12 KB record"
d1=$(check "first stream") || fail "$d1"
note "rsyslog over TLS: every record of the first stream, in order ($(head_seq) records, one of 12 KB)"
# The forwarder notes the collector's acknowledgement within ~100 ms.
for _ in $(seq 1 40); do
	"$STOCKADE" status --audit-socket "$SOCK" --netguard-socket "$T/none" \
	    --mcp-state "$T/none" >"$T/status" 2>&1 || true
	grep -qE "^  forward        siem  127.0.0.1:$PORT  connected, delivered to seq $(head_seq)\$" \
	    "$T/status" && break
	sleep 0.05
done
grep -qE "^  forward        siem  127.0.0.1:$PORT  connected, delivered to seq $(head_seq)\$" "$T/status" ||
    fail "status: $(cat "$T/status")"
grep -qE "^  forward        impostor  127.0.0.1:$PORT  DOWN, delivered to seq 0: .*certificate verify failed" "$T/status" ||
    fail "status: $(cat "$T/status")"
note "stockade status: siem connected and how far it got; the impostor down, and why"

first=$(head_seq)
sleep 3			# the first stream is older than resend_window_s
rs_stop
"$LOAD" --socket "$SOCK" --writers 2 --events 150 --window 4 >/dev/null
sleep 1
rs_start
d2=$(check "after the outage") || fail "$d2"
[ "$d2" -lt "$first" ] || fail "the outage resent the whole first stream ($d2)"
note "collector down for 300 records: nothing lost, in order ($d2 repeated, none older than the resend window)"
out=$("$STOCKADE" audit status --socket "$SOCK" | "$PY" -c '
import json, sys
f = [f for f in json.load(sys.stdin)["forward"] if f["name"] == "siem"][0]
if not f["connected"] or f["error"] != "":
    sys.exit("status after the reconnect: connected %s, error %r" %
             (f["connected"], f["error"]))' 2>&1) || fail "$out"
note "reconnected: status says connected, with no stale error"

stop_auditd
start_auditd
"$LOAD" --socket "$SOCK" --writers 1 --events 50 --window 1 >/dev/null
d3=$(check "after the restart") || fail "$d3"
[ "$d3" = "$d2" ] || fail "the daemon's restart repeated $((d3 - d2)) records"
note "stockade-auditd restarted: nothing repeated"

grep -q 'forward impostor: .*certificate verify failed' "$T/auditd.err" ||
    fail "no verification failure logged for the impostor: $(grep impostor "$T/auditd.err" | head -3)"
[ ! -s "$LOG/.forward-impostor.cursor" ] || [ "$(cat "$LOG/.forward-impostor.cursor")" = 0 ] ||
    fail "something was sent to a collector that did not verify"
grep -q '"event":"checkpoint"' "$T/siem.log" || fail "no checkpoint reached the collector"
stop_auditd
rs_stop
verify >/dev/null || fail "audit log does not verify"
note "an unverified collector gets nothing; checkpoints go along; the log verifies"

# The collector's file is a fleet witness of its own: its checkpoint
# records prove the log whole, and catch the same log cut short.
out=$("$STOCKADE" audit verify --fleet --witness "$T/siem.log" \
    --pubkey "$KEYS/checkpoint.pub" "$LOG") || fail "siem as witness: $out"
echo "$out" | grep -q ": intact: " || fail "siem as witness: $out"
cp -a "$LOG" "$T/cut"
f=$(ls "$T"/cut/audit-*.log | tail -1)
head -n 3 "$f" >"$T/head" && mv "$T/head" "$f"
out=$("$STOCKADE" audit verify --fleet --witness "$T/siem.log" \
    --pubkey "$KEYS/checkpoint.pub" "$T/cut") && fail "cut log verified: $out"
echo "$out" | grep -q ": truncated: " || fail "cut log: $out"
note "rsyslog's file as a fleet witness: the log intact, the log cut short truncated"
