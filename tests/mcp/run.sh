#!/bin/bash
# The MCP client suite: the official TypeScript SDK client (from npm, pinned
# in package-lock.json) against mcp-exec, with a stockade-auditd of its own;
# then the official conformance suite (conformance/run.sh: 2025-11-25, then
# 2026-07-28's scenarios) against a second mcp-exec --http without tokens.
# Afterwards the audit trail must verify.
# Between the two, the third-party clients (clients/run.sh) on the same
# servers.  With arguments (test files, e.g. sessions.test.mjs, or
# "clients" and optionally its files) only those run, and neither the
# conformance suite nor the every-event-kind check.
set -eu
: "${BUILD:=build}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tests/mcp"
B="$ROOT/$BUILD"
T=$(mktemp -d "${TMPDIR:-/tmp}/stockade-mcp.XXXXXX")
chmod 0711 "$T"
servers=""
trap 'kill $auditd $servers 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$T"' EXIT

# mcp-exec --http on a free loopback port with rules $1 and state dir $2;
# sets http_pid and http_url.  Its stderr joins mcp-exec.err, where the
# sanitizer check below looks.
http_start() {
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$B/mcp-exec" --http "127.0.0.1:$port" --rules "$1" --state-dir "$2" \
	    2>>"$T/mcp-exec.err" </dev/null &
	http_pid=$!
	http_url="http://127.0.0.1:$port/mcp"
	servers="$servers $http_pid"
	for _ in $(seq 1 250); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
		kill -0 $http_pid 2>/dev/null || break
		sleep 0.02
	done
	echo "FAIL: mcp-exec --http --rules $1 did not start"
	exit 1
}

# SIGTERM must end it, and cleanly.
http_stop() {
	kill "$1"
	wait "$1" || { echo "FAIL: mcp-exec --http did not stop cleanly"; exit 1; }
	servers=${servers/ $1/}
}

# Both SDK clients: v1 (2025-11-25) and v2 (both eras), as locked.
[ -d "$HERE/node_modules/@modelcontextprotocol/sdk" ] &&
    [ -d "$HERE/node_modules/@modelcontextprotocol/client" ] ||
	(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)

"$B/stockade" audit keygen "$T/keys" >/dev/null
printf 'writers: [root]\n' >"$T/audit.yaml"
"$B/stockade-auditd" -d -f "$T/audit.yaml" --socket "$T/auditd.sock" \
    --log-dir "$T/log" --key "$T/keys/checkpoint.key" \
    --checkpoints "$T/offhost" 2>"$T/auditd.err" &
auditd=$!
while [ ! -S "$T/auditd.sock" ]; do sleep 0.05; done

# The shipped policy, pointed at this run's auditd, driver and inputs.
cp -R "$ROOT/rules" "$T/rules"
mkdir -p "$T/inputs"
printf 'a,b\n1,2\n' >"$T/inputs/data.csv"
sed -i -e "s#^  audit_socket: .*#  audit_socket: $T/auditd.sock#" \
    -e "s#^  driver_dir: .*#  driver_dir: $ROOT/mcp-exec/driver#" \
    "$T/rules/mcp-exec.yaml"
sed -i "s#^  roots: \[\]#  roots: [$T/inputs]#" "$T/rules/profiles/default.yaml"

# No audit daemon behind this one: nothing may run.  No warm pool either,
# so that the test sees only the refused call's sandbox, or nothing.
cp -R "$T/rules" "$T/rules-noaudit"
sed -i "s#^  audit_socket: .*#  audit_socket: $T/nowhere.sock#" \
    "$T/rules-noaudit/mcp-exec.yaml"
sed -i '/^pool:$/,/^  size: [0-9]*$/d' "$T/rules-noaudit/profiles/default.yaml"

# Over HTTP: two principals, each with a bearer token (kept as sha256).
cp -R "$T/rules" "$T/rules-http"
TOKEN_A=$(openssl rand -hex 24) TOKEN_B=$(openssl rand -hex 24)
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
printf 'tokens:\n  - sha256: "%s"\n    principal: "user:alice"\n  - sha256: "%s"\n    principal: "user:bob"\n' \
    "$(sha "$TOKEN_A")" "$(sha "$TOKEN_B")" >"$T/rules-http/principals.yaml"
http_start "$T/rules-http" "$T/state-http"
mx=$http_pid mx_url=$http_url
# Without tokens, for the conformance suite: its client sends none.
http_start "$T/rules" "$T/state-conformance"
cx=$http_pid cx_url=$http_url

export MCP_EXEC="$B/mcp-exec" MCP_RULES="$T/rules" MCP_STATE="$T/state" \
    MCP_INPUTS="$T/inputs" MCP_STDERR="$T/mcp-exec.err" \
    MCP_RULES_NOAUDIT="$T/rules-noaudit" MCP_STATE_NOAUDIT="$T/state-noaudit" \
    MCP_HTTP_URL="$mx_url" MCP_TOKEN_A="$TOKEN_A" \
    MCP_TOKEN_B="$TOKEN_B" MCP_AUDIT_LOG="$T/log"
cd "$HERE"
# A bound on the whole run (the suite takes under a minute), so that a test
# that hangs fails here instead of holding CI.
suite() {
	timeout 300 node --test --test-concurrency=1 --test-reporter=spec "$@" ||
	    { st=$?; [ $st != 124 ] || echo "FAIL: the SDK suite ran over 300 s"; return $st; }
}
if [ "${1:-}" = clients ]; then
	shift
	"$HERE/clients/run.sh" "$@"
elif [ $# -gt 0 ]; then
	suite "$@"
else
	suite ./*.test.mjs
	# A client library's failure is told at the end: the conformance
	# suite and the audit checks still have their say.
	"$HERE/clients/run.sh" || clients_failed=1
	"$HERE/conformance/run.sh" "$cx_url"
	"$HERE/conformance/run.sh" "$cx_url" 2026-07-28
fi
http_stop $mx
http_stop $cx

if grep -E "Sanitizer|runtime error" "$T/mcp-exec.err"; then
	echo "FAIL: mcp-exec reported memory or undefined-behaviour errors"
	exit 1
fi
kill $auditd
wait $auditd || true
"$B/stockade" audit verify "$T/log" --pubkey "$T/keys/checkpoint.pub" \
    --checkpoints "$T/offhost" >/dev/null
[ $# -gt 0 ] && exit 0
for ev in session_created execution_started code_execution session_closed \
    session_evicted call_refused; do
	grep -q "\"event\":\"$ev\"" "$T"/log/audit-*.log || {
		echo "FAIL: no $ev event in the audit trail"; exit 1; }
done
echo "PASS mcp audit trail: verifies, all event kinds present"
[ -z "${clients_failed:-}" ] || { echo "FAIL: third-party MCP clients (above)"; exit 1; }
