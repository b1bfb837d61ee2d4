#!/bin/bash
# Node to node (issue 34, fleet.peer): two mcp-exec --http nodes, "2" and
# "3", with peer listeners on 127.0.0.2 and 127.0.0.3 (one port; the URL
# template https://127.0.0.{node}:PORT/mcp needs no name service) and
# certificates of a test CA naming them.  A sandbox made on node 2 is
# reached through node 3 by a 2025 client in node 3's MCP session (also
# with a body past the router's 64 KiB) and by 2026-07-28 requests: node
# 3 forwards, node 2 answers, and node 2's records say forwarded_by 3.
# The peer listener takes only a certificate of the CA that names the
# Stockade-Forwarded-By node; the main listener refuses that header;
# another principal's token gets node 2's not found; forwards count with
# the principal's open requests; a caller hanging up cancels the call on
# node 2; a caller known by its client certificate only (node 4, mTLS) is
# not forwarded.  Node 2 killed, or an impostor in its place, node 3
# answers -31001.  NO_PEER=1 runs it without fleet.peer: -31003, the
# behaviour before forwarding.
. "$(dirname "$0")/lib.sh"

declare -A NPID NPORT
IMP=""
trap 'st=$?; [ $st = 0 ] || tail -n 12 "$T"/node-*.err >&2
	for p in ${NPID[@]} $IMP; do kill -9 "$p" 2>/dev/null &&
	    wait "$p" 2>/dev/null; done; cleanup' EXIT

# node_cert FILE NAME [CA]: $T/FILE.key and a certificate naming NAME
# (CN and SAN DNS), signed by $T/CA.pem (the test's CA).
node_cert() {
	( cd "$T" &&
	  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	      -subj "/CN=$2" -keyout "$1.key" -out "$1.csr" &&
	  printf 'subjectAltName=DNS:%s\n' "$2" >"$1.ext" &&
	  openssl x509 -req -in "$1.csr" -CA "${3:-ca}.pem" \
	      -CAkey "${3:-ca}.key" -CAcreateserial -days 2 \
	      -extfile "$1.ext" -out "$1.pem" ) >/dev/null 2>&1 ||
	    fail "openssl: $1"
}
tls_certs
node_cert 2 2
node_cert 3 3
node_cert 4 4
# A CA nobody trusts, and nodes 2 and 3 it vouches for.
( cd "$T" && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
    -nodes -days 2 -subj /CN=rogue-ca -keyout rogue.key -out rogue.pem ) \
    >/dev/null 2>&1 || fail "openssl: rogue CA"
node_cert fake2 2 rogue
node_cert fake3 3 rogue

start_auditd
mcp_rules
mcp_tokens "user:alice" "user:bob"
PP=$(free_port)

# node_up N [mtls]: node N; mtls: its main listener also takes client
# certificates of the test's CA (CN carol is cert:carol).
node_up() {
	local n=$1 r="$T/rules-$1" scheme=http
	cp -R "$R" "$r"
	if [ -n "${2:-}" ]; then
		scheme=https
		cat >>"$r/principals.yaml" <<EOT
mtls:
  cert_file: $T/server.pem
  key_file: $T/server.key
  ca_file: $T/ca.pem
  require: false
  principal:
    - { from: cn, prefix: "cert:" }
EOT
	fi
	# Node 3 lets a principal hold 2 open requests: forwards count.
	sed -i -e "s/^  first: .*/  first: $((300000 + n * 1000))/" \
	    -e "/max_requests_per_principal:/s/64/$([ "$n" = 3 ] && echo 2 || echo 64)/" \
	    "$r/mcp-exec.yaml"
	grep -q "max_requests_per_principal: $([ "$n" = 3 ] && echo 2 || echo 64) " \
	    "$r/mcp-exec.yaml" || fail "sed missed max_requests_per_principal"
	[ -n "${NO_PEER:-}" ] || cat >>"$r/mcp-exec.yaml" <<EOT
  peer:
    listen: 127.0.0.$n:$PP
    url: https://127.0.0.{node}:$PP/mcp
    ca: $T/ca.pem
    cert: $T/$n.pem
    key: $T/$n.key
EOT
	"$STOCKADE" rules check "$r" >/dev/null || fail "rules check $r"
	NPORT[$n]=$(free_port)
	"$MX" -v --http "127.0.0.1:${NPORT[$n]}" --rules "$r" \
	    --state-dir "$T/state-$n" --node-id "$n" 2>>"$T/node-$n.err" \
	    </dev/null &
	NPID[$n]=$!
	for _ in $(seq 1 250); do
		curl -sk -o /dev/null "$scheme://127.0.0.1:${NPORT[$n]}/" && return
		kill -0 "${NPID[$n]}" 2>/dev/null || fail "node $n died: $(tail -3 "$T/node-$n.err")"
		sleep 0.02
	done
	fail "node $n did not listen"
}
node_up 2
node_up 3
node_up 4 mtls
node_cert carol carol
note "nodes 2, 3 and 4 up${NO_PEER:+, without fleet.peer}"

client() {
	(cd "$HERE" && "$PY" fleet_forward.py "$1" "$T/fwd.json" \
	    "http://127.0.0.1:${NPORT[2]}/mcp" "http://127.0.0.1:${NPORT[3]}/mcp" \
	    "$TOKA" "$TOKB") || fail "fleet_forward.py $1 (see above)"
}
client serve
client share

LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}'
# peer ARGS...: a POST to node 2's peer listener; prints the HTTP status
# (000: no TLS session).  curl reads the name "2" as an address: -k.
peer() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 -k \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' \
	    -d "$LIST" "$@" "https://127.0.0.2:$PP/mcp" || true
}
st=$(peer -H "Authorization: Bearer $TOKA" -H 'Stockade-Forwarded-By: 3')
[ "$st" = 000 ] || fail "peer listener without a client certificate: $st"
st=$(peer --cert "$T/fake3.pem" --key "$T/fake3.key" \
    -H "Authorization: Bearer $TOKA" -H 'Stockade-Forwarded-By: 3')
[ "$st" = 000 ] || fail "peer listener, a certificate of another CA: $st"
st=$(peer --cert "$T/3.pem" --key "$T/3.key" \
    -H "Authorization: Bearer $TOKA" -H 'Stockade-Forwarded-By: 4')
[ "$st" = 403 ] || fail "peer listener, node 3's certificate as node 4: $st"
st=$(peer --cert "$T/3.pem" --key "$T/3.key" -H 'Stockade-Forwarded-By: 3')
[ "$st" = 401 ] || fail "peer listener, no caller's Authorization: $st"
st=$(peer --cert "$T/3.pem" --key "$T/3.key" \
    -H "Authorization: Bearer $TOKA" -H 'Stockade-Forwarded-By: 3')
[ "$st" = 200 ] || fail "peer listener, node 3 with a caller's token: $st"
note "peer listener: no certificate or another CA's, no TLS; a name not the certificate's, 403"
st=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKA" \
    -H 'Stockade-Forwarded-By: 3' -H 'Content-Type: application/json' \
    -H 'Accept: application/json' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/list' -d "$LIST" \
    "http://127.0.0.1:${NPORT[2]}/mcp")
[ "$st" = 400 ] || fail "Stockade-Forwarded-By on the main listener: $st"
note "Stockade-Forwarded-By on the main listener: 400"

# Node 2's records of the forwarded calls say so; node 3 wrote none of them.
"$PY" - "$LOG" "${NPID[2]}" "$(cut -d'"' -f4 "$T/fwd.json")" <<'EOT' || fail "forwarded_by records (see above)"
import glob, json, sys
log, pid2, sid = sys.argv[1:]
fwd = 0
for path in sorted(glob.glob(log + "/audit-*.log")):
    for line in open(path):
        r = json.loads(line)
        by = json.dumps(r).count('"forwarded_by": "3"')
        if by and str(r["peer"]["pid"]) != pid2:
            sys.exit("FAIL: %s with forwarded_by from pid %s" % (r["event"], r["peer"]["pid"]))
        if by and r["event"] == "code_execution" and r.get("session_id") == sid:
            fwd += 1
if fwd < 4:
    sys.exit("FAIL: %d code_execution records of node 2 say forwarded_by 3" % fwd)
print("  node 2 wrote %d code_execution records with forwarded_by 3" % fwd)
EOT

# A caller that hangs up: node 2's call ends cancelled, long before its
# 60 s, and its record says it was forwarded.
client leave
"$PY" - "$LOG" "${NPID[2]}" "$(cut -d'"' -f4 "$T/fwd.json")" <<'EOT' || fail "the hung-up call (see above)"
import glob, json, sys, time
log, pid2, sid = sys.argv[1:]
for _ in range(200):
    for path in sorted(glob.glob(log + "/audit-*.log")):
        for line in open(path):
            r = json.loads(line)
            if r["event"] == "code_execution" and \
                    r.get("session_id") == sid and r.get("cancelled"):
                if str(r["peer"]["pid"]) != pid2 or '"forwarded_by": "3"' \
                        not in json.dumps(r):
                    sys.exit("FAIL: not node 2's forwarded call: %s" % line[:400])
                print("  node 2 cancelled the call whose caller hung up on node 3")
                sys.exit(0)
    time.sleep(0.1)
sys.exit("FAIL: no cancelled call on node 2 within 20 s")
EOT

# A caller known by its client certificate only: nothing to send on.
sid=$(cut -d'"' -f4 "$T/fwd.json")
out=$(curl -sk --cert "$T/carol.pem" --key "$T/carol.key" \
    -H 'Content-Type: application/json' -H 'Accept: application/json' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' \
    -H 'Mcp-Name: execute_python' -H "Mcp-Param-Session-Id: $sid" \
    -d '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_python","arguments":{"code":"print(w)","session_id":"'"$sid"'"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}' \
    "https://127.0.0.1:${NPORT[4]}/mcp")
echo "$out" | grep -q '"code":-31003.*client certificate proves' ||
    fail "a certificate-only caller of node 4: $out"
note "a caller known by its client certificate only: -31003, saying why"

{ kill -9 "${NPID[2]}"; wait "${NPID[2]}"; } 2>/dev/null || true
client gone

# impostor NAME [CERT]: in node 2's place on its peer address; node 3
# must not shake hands with it, let alone send it the caller's token.
impostor() {
	rm -f "$T/imp.got.up"
	"$PY" "$HERE/fleet_forward.py" impostor 127.0.0.2 "$PP" "$T/imp.got" \
	    ${2:+"$T/$2.pem" "$T/$2.key"} 2>>"$T/node-imp.err" &
	IMP=$!
	for _ in $(seq 1 250); do [ -f "$T/imp.got.up" ] && break; sleep 0.02; done
	(cd "$HERE" && "$PY" fleet_forward.py gone "$T/fwd.json" - \
	    "http://127.0.0.1:${NPORT[3]}/mcp" "$TOKA" - "$1" 30) ||
	    fail "fleet_forward.py gone: $1 (see above)"
	kill "$IMP"; wait "$IMP" 2>/dev/null || true; IMP=""
	[ ! -s "$T/imp.got" ] || fail "$1: node 3 sent it: $(head -c 200 "$T/imp.got")"
}
impostor "an impostor with node 3's certificate" 3
impostor "an impostor with another CA's certificate for node 2" fake2
impostor "a peer port that never shakes hands"
# Forwards leave nothing behind (ASan checks leaks at exit).
for n in 3 4; do
	kill -TERM "${NPID[$n]}"
	st=0; wait "${NPID[$n]}" || st=$?
	[ $st = 0 ] || fail "node $n exited $st at SIGTERM"
	unset "NPID[$n]"
done
stop_auditd
verify >/dev/null || fail "the audit log does not verify"
note "the shared audit log verifies"
