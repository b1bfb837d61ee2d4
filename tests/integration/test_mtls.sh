#!/bin/bash
# mTLS on the HTTP listener: client certificates made here with openssl (a
# CA, a CRL, a foreign CA).  A good certificate is a principal by the
# rules (SAN email first, then CN); expired, revoked and foreign-CA
# certificates fail the handshake, each refusal audited with the
# certificate's sha256; no certificate, no handshake (require: true).
# SIGHUP changes the principal rule without ending a session.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT

start_auditd
mcp_rules
P="$T/pki"
mkdir -p "$P/db"
: >"$P/db/index.txt"
echo 1000 >"$P/db/serial"
echo 1000 >"$P/db/crlnumber"
cat >"$P/ca.cnf" <<EOF
[ca]
default_ca = c
[c]
database = $P/db/index.txt
serial = $P/db/serial
crlnumber = $P/db/crlnumber
new_certs_dir = $P/db
default_md = sha256
policy = p
copy_extensions = copy
default_crl_days = 30
[p]
commonName = supplied
[client]
basicConstraints = CA:FALSE
keyUsage = digitalSignature
extendedKeyUsage = clientAuth
[server]
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1
EOF
q() { "$@" >/dev/null 2>&1 || fail "openssl: $*"; }
# ca NAME SUBJ [CAKEY]: a self-signed CA.
mkca() { q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$P/$1.key" -out "$P/$1.crt" -subj "/CN=$1" -days 2; }
# leaf NAME CN EXT [start end] [SAN]: a certificate of the test CA.
leaf() {
	q openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$P/$1.key" -out "$P/$1.csr" -subj "/CN=$2" ${6:+-addext "subjectAltName=$6"}
	q openssl ca -batch -config "$P/ca.cnf" -cert "$P/${7:-ca}.crt" -keyfile "$P/${7:-ca}.key" \
	    -extensions "$3" -in "$P/$1.csr" -out "$P/$1.crt" \
	    -startdate "${4:-$(date -u -d '-1 hour' +%Y%m%d%H%M%SZ)}" \
	    -enddate "${5:-$(date -u -d '+1 day' +%Y%m%d%H%M%SZ)}"
}
mkca ca
mkca foreign
leaf server 127.0.0.1 server
leaf alice alice client "" "" "email:alice@example.com"
leaf bob bob client
leaf old old client 20200101000000Z 20200102000000Z
leaf revoked revoked client
leaf stranger stranger client "" "" "" foreign
q openssl ca -config "$P/ca.cnf" -cert "$P/ca.crt" -keyfile "$P/ca.key" -revoke "$P/revoked.crt"
q openssl ca -config "$P/ca.cnf" -cert "$P/ca.crt" -keyfile "$P/ca.key" -gencrl -out "$P/ca.crl"

cat >"$R/principals.yaml" <<EOF
mtls:
  cert_file: $P/server.crt
  key_file: $P/server.key
  ca_file: $P/ca.crt
  crl_file: $P/ca.crl
  principal:
    - { from: san_email, prefix: "mail:" }
    - { from: cn, prefix: "cert:" }
EOF
"$STOCKADE" rules check "$R" >/dev/null || fail "rules check refuses mtls"

PORT=$(free_port)
"$MX" -v --http "127.0.0.1:$PORT" --rules "$R" --state-dir "$T/mx-state" \
    2>>"$T/mx.err" </dev/null &
MX_PID=$!
for _ in $(seq 1 250); do
	grep -q "MCP over HTTP on https://" "$T/mx.err" && break
	kill -0 "$MX_PID" 2>/dev/null || fail "mcp-exec died at start"
	sleep 0.02
done

# hs NAME: the status of an initialize with NAME's certificate ("" none),
# 000 when the handshake fails.
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
hs() {
	sleep 0.2	# at most 5 refusals a second are audited
	curl -s -o "$T/body" -D "$T/head" -w '%{http_code}' --cacert "$P/ca.crt" \
	    ${1:+--cert "$P/$1.crt" --key "$P/$1.key"} -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' -d "$INIT" \
	    "https://127.0.0.1:$PORT/mcp" || true
}
st=$(hs alice); [ "$st" = 200 ] || { curl -v --cacert "$P/ca.crt" --cert "$P/alice.crt" --key "$P/alice.key" "https://127.0.0.1:$PORT/mcp" 2>&1 | tail -20; fail "a good certificate (SAN email) is refused: $st"; }
SID=$(awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}' "$T/head" | tr -d '\r')
[ "$(hs bob)" = 200 ] || fail "a good certificate (CN) is refused"
for who in old revoked stranger ""; do
	[ "$(hs "$who")" = 000 ] || fail "certificate '${who:-none}' was not refused in the handshake"
done
note "good certificates 200; expired, revoked, foreign-CA and none: no handshake"

# SIGHUP: the CN rule's prefix changes; alice's session goes on, and bob
# is now tls:bob.
sed -i 's/prefix: "cert:"/prefix: "tls:"/' "$R/principals.yaml"
kill -HUP "$MX_PID"
for _ in $(seq 1 250); do grep -q "reloaded:" "$T/mx.err" && break; sleep 0.02; done
grep -q "reloaded:" "$T/mx.err" || fail "no reload"
st=$(curl -s -o "$T/body" -w '%{http_code}' --cacert "$P/ca.crt" --cert "$P/alice.crt" \
    --key "$P/alice.key" -H 'Content-Type: application/json' -H 'Accept: application/json' \
    -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25' \
    -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "https://127.0.0.1:$PORT/mcp")
[ "$st" = 200 ] && grep -q execute_python "$T/body" || fail "alice's session ended by SIGHUP: $st"
[ "$(hs bob)" = 200 ] || fail "bob refused after SIGHUP"
note "SIGHUP: a live session goes on; the new rule holds for new sessions"

# SIGHUP to require: false with a static token: a client without a
# certificate finishes the handshake and needs the token (401 without).
TOK=tok-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
sed -i 's/^  crl_file:/  require: false\n  crl_file:/' "$R/principals.yaml"
printf 'tokens:\n  - sha256: %s\n    principal: "user:carol"\n' \
    "$(printf %s "$TOK" | sha256sum | cut -d' ' -f1)" >>"$R/principals.yaml"
kill -HUP "$MX_PID"
for _ in $(seq 1 250); do [ "$(grep -c "reloaded:" "$T/mx.err")" = 2 ] && break; sleep 0.02; done
[ "$(grep -c "reloaded:" "$T/mx.err")" = 2 ] || fail "second reload: $(tail -3 "$T/mx.err")"
[ "$(hs "")" = 401 ] || fail "require: false, no certificate, no token: not 401"
# No OAuth issuer: a plain challenge, no metadata to send OAuth clients to.
tr -d '\r' <"$T/head" | grep -qix 'WWW-Authenticate: Bearer realm="stockade"' ||
    fail "401 over TLS without issuers: $(cat "$T/head")"
st=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$P/ca.crt" -H "Authorization: Bearer $TOK" \
    -H 'Content-Type: application/json' -H 'Accept: application/json' -d "$INIT" \
    "https://127.0.0.1:$PORT/mcp")
[ "$st" = 200 ] || fail "require: false, a token without a certificate: $st"
[ "$(hs revoked)" = 000 ] || fail "require: false let a revoked certificate through"
note "require: false: no certificate needs a token; a bad certificate still fails"

# An issuer (never reached: its keys cannot be fetched): now the 401 names
# the RFC 9728 metadata, at this listener's https address.
printf 'issuers:\n  - issuer: "http://127.0.0.1:1/idp"\n    audience: "https://127.0.0.1:%s/mcp"\n    insecure_http_loopback: true\n' \
    "$PORT" >>"$R/principals.yaml"
kill -HUP "$MX_PID"
for _ in $(seq 1 250); do [ "$(grep -c "reloaded:" "$T/mx.err")" = 3 ] && break; sleep 0.02; done
[ "$(grep -c "reloaded:" "$T/mx.err")" = 3 ] || fail "third reload: $(tail -3 "$T/mx.err")"
[ "$(hs "")" = 401 ] || fail "with an issuer, no certificate, no token: not 401"
grep -qi "^WWW-Authenticate: Bearer realm=\"stockade\", resource_metadata=\"https://127.0.0.1:$PORT/.well-known/oauth-protected-resource\"" "$T/head" ||
    fail "401 over TLS with an issuer: no https resource_metadata: $(cat "$T/head")"
curl -s --cacert "$P/ca.crt" "https://127.0.0.1:$PORT/.well-known/oauth-protected-resource" |
    "$PY" -c 'import json, sys; m = json.load(sys.stdin); assert m["authorization_servers"] == ["http://127.0.0.1:1/idp"], m' ||
    fail "metadata over TLS with an issuer"
note "401 names RFC 9728 metadata (https) only once an issuer is configured"

stop_mx || fail "mcp-exec did not stop cleanly"
verify >/dev/null
L() { cat "$LOG"/audit-*.log | tr -d '\0'; }	# the zeros ahead hold no record
L | grep '"event":"auth_accepted"' | grep '"principal":"mail:alice@example.com"' |
    grep -q '"cert_sha256":"[0-9a-f]\{64\}"' || fail "no auth_accepted for alice with the certificate hash"
L | grep '"event":"auth_accepted"' | grep -q '"principal":"cert:bob"' || fail "no auth_accepted for cert:bob"
L | grep '"event":"auth_accepted"' | grep -q '"principal":"tls:bob"' || fail "no auth_accepted for tls:bob"
for why in "certificate has expired" "certificate revoked" "unable to get local issuer certificate"; do
	L | grep '"event":"call_refused"' | grep "client certificate: $why" |
	    grep -q '"cert_sha256":"[0-9a-f]\{64\}"' || fail "no call_refused saying: $why"
done
note "acceptances and refusals audited with the certificate's sha256"
