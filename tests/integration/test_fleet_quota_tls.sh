#!/bin/bash
# The fleet quota store over TLS (fleet.tls): redis-server on a loopback
# TLS port that asks for client certificates.  A node with the CA and its
# certificate counts there (calls_per_minute holds); a node that trusts
# another CA, one with no client certificate, and one that speaks plain
# TCP to the TLS port each find the store unreachable (refused, recorded
# with why), never counted by a store they could not verify.  Also: a
# tls section without a CA, or on a unix socket, is refused by rules
# check.
. "$(dirname "$0")/lib.sh"

command -v redis-server >/dev/null || { echo "SKIP: no redis-server"; exit 77; }
REDIS_PID="" PIDS=""
stop_all() {
	for p in $PIDS $REDIS_PID; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}
trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_all; cleanup' EXIT

tls_certs
( cd "$T" &&
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
      -subj /CN=node-a -keyout node.key -out node.csr &&
  openssl x509 -req -in node.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
      -days 2 -out node.pem &&
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
      -days 2 -subj /CN=other-ca -keyout other.key -out other.pem ) \
    >/dev/null 2>&1 || fail "openssl"

PORT=$(free_port)
redis-server --port 0 --tls-port "$PORT" --bind 127.0.0.1 \
    --tls-cert-file "$T/server.pem" --tls-key-file "$T/server.key" \
    --tls-ca-cert-file "$T/ca.pem" --tls-auth-clients yes \
    --save '' --appendonly no --dir "$T" >>"$T/redis.log" 2>&1 &
REDIS_PID=$!
rcli() {
	redis-cli --tls --cacert "$T/ca.pem" --cert "$T/node.pem" \
	    --key "$T/node.key" -h 127.0.0.1 -p "$PORT" "$@"
}
for _ in $(seq 1 250); do
	rcli ping 2>/dev/null | grep -q PONG && break
	sleep 0.02
done
rcli ping 2>/dev/null | grep -q PONG || fail "redis-server did not answer on TLS port $PORT"

start_auditd
mcp_rules
mcp_tokens "user:p" "user:q"
cat >>"$R/principals.yaml" <<'EOF'
principals:
  - name: "user:p"
    quotas: { calls_per_minute: 2 }
EOF
sed -i '/^fleet:/,$d' "$R/mcp-exec.yaml"
T0=$(( 1800000000 - 1800000000 % 86400 + 10 ))
echo $T0 >"$T/clock"
export STOCKADE_QUOTA_TEST_CLOCK="$T/clock"

# node NAME TLS-LINES: a node on its own rules and state dir.
node() {
	cp -R "$R" "$T/rules-$1"
	printf 'fleet:\n  redis: 127.0.0.1:%s\n  node_id: %s\n%s' "$PORT" "$1" \
	    "$2" >>"$T/rules-$1/mcp-exec.yaml"
	"$STOCKADE" rules check "$T/rules-$1" >/dev/null ||
	    fail "rules check refused node $1's rules"
	local port
	port=$(free_port)
	"$MX" -v --http "127.0.0.1:$port" --rules "$T/rules-$1" \
	    --state-dir "$T/state-$1" 2>>"$T/mx.err" </dev/null &
	PIDS="$PIDS $!"
	for _ in $(seq 1 250); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && break
		sleep 0.02
	done
	eval "PORT_${1//-/_}=$port PID_${1//-/_}=$!"
}
node good "  tls:
    ca: $T/ca.pem
    cert: $T/node.pem
    key: $T/node.key
    server_name: localhost
"
node wrongca "  tls:
    ca: $T/other.pem
    cert: $T/node.pem
    key: $T/node.key
"
node nocert "  tls:
    ca: $T/ca.pem
"
node plain ""

"$PY" - "$TOKA" "$PORT_good" "$PORT_wrongca" "$PORT_nocert" "$PORT_plain" <<'EOF' || fail "quotas over TLS (see above)"
import sys
sys.path.insert(0, "tests/integration")
from mcpclient import Http
tok, good, *bad = sys.argv[1:]
def run(port):
    c = Http("http://127.0.0.1:%s/mcp" % port, tok)
    c.initialize()
    r = c.tool("execute_python", {"code": "print(1)"})
    return bool(r.get("isError")), r["content"][0]["text"]
got = [run(good) for _ in range(2)]
assert [e for e, _ in got] == [False, False], got
e, t = run(good)
assert e and "calls_per_minute (2) of principal:user:p" in t, (e, t)
print("  TLS with the CA and a client certificate: calls_per_minute 2 counted in the store")
for port in bad:
    e, t = run(port)
    assert e and "fleet quota store" in t and "unreachable" in t, (port, e, t)
print("  another CA, no client certificate, plain TCP: each refused, store unreachable")
EOF
[ "$(rcli GET "stockade:quota:principal:user:p:calls_per_minute:$(( T0 - T0 % 60 ))")" = 2 ] ||
    fail "the TLS store does not hold the 2 calls"
for n in wrongca nocert plain; do
	grep -ah '"event":"fleet_degraded"' "$LOG"/audit-*.log | grep -q "\"node_id\":\"$n\"" ||
	    fail "no fleet_degraded of node $n"
done
grep -ah '"event":"fleet_degraded"' "$LOG"/audit-*.log | grep '"node_id":"wrongca"' |
    grep -q "certificate verify failed" ||
    fail "node wrongca's fleet_degraded does not say the certificate failed"
note "each failure recorded as fleet_degraded, the wrong CA as a failed certificate"

# A reload keeps the TLS settings the node connected with, and says so.
sed -i "s#^    server_name: localhost\$#    server_name: other.example#" "$T/rules-good/mcp-exec.yaml"
grep -q "server_name: other.example" "$T/rules-good/mcp-exec.yaml" || fail "sed missed server_name"
kill -HUP "$PID_good"
for _ in $(seq 1 250); do
	grep -q "reload: fleet.tls changes at the next start" "$T/mx.err" && break
	sleep 0.02
done
grep -q "reload: fleet.tls changes at the next start" "$T/mx.err" ||
    fail "a reload changing fleet.tls did not warn"
note "SIGHUP changing fleet.tls: warns that it applies at the next start"

# rules check: a tls section needs a CA, a TCP store, and cert with key.
for bad in "  tls: { cert: $T/node.pem, key: $T/node.key }@ca: required" \
    "  tls: { ca: $T/ca.pem, cert: $T/node.pem }@cert and key go together"; do
	cp -R "$R" "$T/bad"
	printf 'fleet:\n  redis: 127.0.0.1:1\n  node_id: x\n%s\n' "${bad%@*}" >>"$T/bad/mcp-exec.yaml"
	out=$("$STOCKADE" rules check "$T/bad" 2>&1) && fail "rules check accepted: ${bad%@*}"
	echo "$out" | grep -q "${bad#*@}" || fail "rules check: no '${bad#*@}' in: $out"
	rm -rf "$T/bad"
done
cp -R "$R" "$T/bad"
printf 'fleet:\n  redis: /run/redis.sock\n  node_id: x\n  tls: { ca: %s }\n' "$T/ca.pem" >>"$T/bad/mcp-exec.yaml"
out=$("$STOCKADE" rules check "$T/bad" 2>&1) && fail "rules check accepted tls on a unix socket"
echo "$out" | grep -q "unix socket" || fail "rules check: $out"
note "rules check refuses a tls section without ca, a cert without key, tls on a unix socket"

for p in $PIDS; do kill -TERM "$p"; wait "$p" || fail "mcp-exec exit status $?"; done
PIDS=""
verify >/dev/null || fail "audit log does not verify"
