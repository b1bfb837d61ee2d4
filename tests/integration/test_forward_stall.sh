#!/bin/bash
# A SIEM collector that stalls cannot hold stockade-auditd: one that
# never answers the TLS handshake (a plain-TCP port, a hung receiver) is
# reported within seconds and why, and a stop during that handshake is
# prompt; one that answers in plain text is reported at once; one that
# stops reading holds a stop for at most the documented 5 s, and the
# writers' socket keeps serving while the forwarder tries.  Nor can a DNS
# server that never answers the collector's name.
. "$(dirname "$0")/lib.sh"

tls_certs
COLL_PID=""
DNS_PID=""
trap '[ -z "$COLL_PID" ] || kill "$COLL_PID" 2>/dev/null
    [ -z "$DNS_PID" ] || kill "$DNS_PID" 2>/dev/null; cleanup' EXIT
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# collector MODE: starts stall_collector.py, points audit.yaml at it.
collector() {
	[ -z "$COLL_PID" ] || kill "$COLL_PID"
	rm -f "$T/port" "$T/coll.log"
	"$PY" "$HERE/stall_collector.py" "$1" "$T/port" "$T/coll.log" \
	    "$T/server.pem" "$T/server.key" &
	COLL_PID=$!
	for _ in $(seq 1 100); do [ -f "$T/port" ] && break; sleep 0.05; done
	[ -f "$T/port" ] || fail "collector did not start"
	make_conf "forward:" "  - name: siem" "    address: 127.0.0.1:$(cat "$T/port")" \
	    "    ca: $T/ca.pem" "    server_name: localhost"
}
accepted() { cat "$T/coll.log" 2>/dev/null | grep -c accepted || true; }
fwd_error() {
	"$STOCKADE" audit status --socket "$SOCK" |
	    "$PY" -c 'import json,sys; print(json.load(sys.stdin)["forward"][0]["error"])'
}

# 1. Accepts TCP, never says a word.
collector silent
start_auditd
t0=$(now_ms)
for _ in $(seq 1 160); do
	err=$(fwd_error)
	[ -n "$err" ] && break
	sleep 0.05
done
took=$(( $(now_ms) - t0 ))
echo "$err" | grep -q "TLS handshake: no answer in [0-9]* s (is it a TLS port?)" ||
    fail "silent collector reported as '$err' after $took ms"
[ "$took" -lt 6000 ] || fail "silent collector reported only after $took ms"
note "a collector that never answers the handshake: '$err' after $took ms"
# Stop while the forwarder waits on a handshake (its second attempt).
for _ in $(seq 1 200); do [ "$(accepted)" -ge 2 ] && break; sleep 0.05; done
[ "$(accepted)" -ge 2 ] || fail "no second connection attempt"
t0=$(now_ms)
stop_auditd || fail "exit status $?"
took=$(( $(now_ms) - t0 ))
[ "$took" -lt 3000 ] || fail "stop during a stalled handshake took $took ms"
note "stop during that handshake: $took ms"

# 2. Answers in plain text: fails at once, saying so.
collector plain
start_auditd
t0=$(now_ms)
for _ in $(seq 1 60); do
	err=$(fwd_error)
	[ -n "$err" ] && break
	sleep 0.05
done
took=$(( $(now_ms) - t0 ))
echo "$err" | grep -q "TLS handshake: .* (is it a TLS port?)" ||
    fail "plain-text collector reported as '$err' after $took ms"
[ "$took" -lt 2000 ] || fail "plain-text collector reported only after $took ms"
note "a collector that answers in plain text: '$err' after $took ms"
stop_auditd || fail "exit status $?"

# 3. Completes the handshake, then never reads: the forwarder's writes
# stall once the socket buffers are full.
collector tls
start_auditd
for _ in $(seq 1 100); do [ "$(accepted)" -ge 1 ] && break; sleep 0.05; done
[ "$(accepted)" -ge 1 ] || fail "the forwarder did not connect: $(cat "$T/coll.log" 2>&1)"
"$LOAD" --socket "$SOCK" --writers 2 --events 2500 --window 4 >/dev/null || fail "load"
t0=$(now_ms)
kill -TERM "$AUDITD_PID"
sleep 1
echo '{"event":"operator_note","principal":"user:ops","message":"while stopping"}' |
    "$STOCKADE" audit send --socket "$SOCK" >"$T/send.out" 2>&1 ||
    fail "1 s into the stop the socket refused a writer: $(cat "$T/send.out")"
st=0; wait "$AUDITD_PID" || st=$?
AUDITD_PID=""
took=$(( $(now_ms) - t0 ))
[ $st = 0 ] || fail "exit status $st"
[ "$took" -lt 8000 ] || fail "stop with a collector that stopped reading took $took ms"
note "stop with a collector that stopped reading: $took ms (documented: up to 5 s); the socket still served 1 s in"
grep -q '"message":"while stopping"' "$LOG"/audit-*.log || fail "the event sent while stopping is not in the log"
verify >/dev/null || fail "log does not verify"

# 4. The collector's name, asked of a DNS server that never answers: the
# daemon alone sees it, through its own /etc/resolv.conf (a private mount
# namespace).
DNS=127.0.$((RANDOM % 200 + 20)).$((RANDOM % 200 + 20))
"$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
while True:
    s.recv(4096)' "$DNS" &
DNS_PID=$!
printf 'nameserver %s\noptions timeout:30 attempts:1\n' "$DNS" >"$T/resolv.conf"
cat >"$T/auditd-dns" <<EOF
#!/bin/sh
exec unshare -m sh -c 'mount --bind "$T/resolv.conf" /etc/resolv.conf && exec "$AUDITD" "\$@"' sh "\$@"
EOF
chmod +x "$T/auditd-dns"
make_conf "forward:" "  - name: siem" "    address: siem.example.test:6514" "    ca: $T/ca.pem"
AUDITD="$T/auditd-dns" start_auditd
sleep 1
t0=$(now_ms)
stop_auditd || fail "exit status $?"
took=$(( $(now_ms) - t0 ))
[ "$took" -lt 3000 ] || fail "stop while the collector's name was being looked up took $took ms"
note "stop while a DNS server sits on the collector's name: $took ms"
