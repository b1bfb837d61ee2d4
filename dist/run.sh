#!/bin/bash
# `make run`: the suite with the policy in rules/, state kept in ./state.
# Generates a checkpoint key on first use, starts stockade-auditd and, as
# root, netguard and the MCP server mcp-exec on 127.0.0.1:$MCP_PORT
# (default 8080), prints how to connect, and stops everything cleanly on
# Ctrl-C: mcp-exec first, then netguard, then the audit daemon, so every
# last event still reaches the trail.
set -eu
: "${BUILD:=build}"
cd "$(dirname "$0")/.."
B="$PWD/$BUILD"
S="$PWD/state"
PORT=${MCP_PORT:-8080}
mkdir -p "$S/run" "$S/audit" "$S/offhost"
# Sandbox uids must walk through to state/mcp-exec; nobody else may list.
chmod 0711 "$S"

if [ ! -f "$S/keys/checkpoint.key" ]; then
	"$B/stockade" audit keygen "$S/keys"
fi
# The shipped policy, with the invoking user added as an audit writer.
me=$(id -un)
sed "s/^writers: \[root\]/writers: [root, $me]/" rules/audit.yaml >"$S/audit.yaml"
"$B/stockade" rules check rules >/dev/null

# Daemons in sessions of their own: Ctrl-C reaches only this script, which
# stops mcp-exec first, so its last audit events still reach the daemon.
setsid "$B/stockade-auditd" -d -f "$S/audit.yaml" --socket "$S/run/auditd.sock" \
    --log-dir "$S/audit" --key "$S/keys/checkpoint.key" \
    --checkpoints "$S/offhost" &
auditd=$!
mcp="" ng=""
stop() {
	[ -z "$mcp" ] || { kill -TERM "$mcp"; wait "$mcp"; }
	[ -z "$ng" ] || { kill -TERM "$ng"; wait "$ng"; }
	kill -TERM "$auditd"
	wait "$auditd"
	echo "stopped; the log verifies with: $B/stockade audit verify $S/audit --pubkey $S/keys/checkpoint.pub --checkpoints $S/offhost"
	exit 0
}
trap stop INT TERM
while [ ! -S "$S/run/auditd.sock" ]; do
	kill -0 $auditd 2>/dev/null || exit 1
	sleep 0.05
done

# The MCP server, with the shipped policy pointed at this auditd and at the
# driver in the checkout.  It builds sandboxes: root only.
rm -rf "$S/rules"
cp -R rules "$S/rules"
sed -i -e "s#^  audit_socket: .*#  audit_socket: $S/run/auditd.sock#" \
    -e "s#^  netguard_socket: .*#  netguard_socket: $S/run/netguard.sock#" \
    -e "s#^  driver_dir: .*#  driver_dir: $PWD/mcp-exec/driver#" \
    "$S/rules/mcp-exec.yaml"
if [ "$(id -u)" = 0 ]; then
	# netguard first: mcp-exec asks it for every networked sandbox.  It
	# changes nothing on the host until a profile asks for L2 or L3.
	setsid "$B/netguard" -d --rules "$S/rules" --socket "$S/run/netguard.sock" \
	    --audit-socket "$S/run/auditd.sock" --state-dir "$S/netguard" \
	    </dev/null &
	ng=$!
	while [ ! -S "$S/run/netguard.sock" ]; do
		kill -0 $ng 2>/dev/null || { echo "netguard did not start" >&2; ng=""; stop; }
		sleep 0.05
	done
	setsid "$B/mcp-exec" -v --http "127.0.0.1:$PORT" --rules "$S/rules" \
	    --state-dir "$S/mcp-exec" </dev/null &
	mcp=$!
	ng_line="netguard         socket $S/run/netguard.sock (egress policies: rules/network/)"
	mcp_line="mcp-exec         MCP (Streamable HTTP) at http://127.0.0.1:$PORT/mcp"
else
	ng_line="netguard         not started: it needs root (network namespaces)"
	mcp_line="mcp-exec         not started: it needs root (sandboxes)"
fi

cat <<MSG

Stockade is running (Ctrl-C stops it).
  stockade-auditd  socket $S/run/auditd.sock, log $S/audit
  $ng_line
  $mcp_line

Connect an MCP client (tools: execute_python, run_command, close_session):
  Claude Desktop / Cursor (mcpServers), the server over stdio, as root:
    {"mcpServers": {"stockade": {"command": "$B/mcp-exec",
      "args": ["--stdio", "--rules", "$S/rules", "--state-dir", "$S/mcp-exec"]}}}
  VS Code (.vscode/mcp.json), over HTTP:
    {"servers": {"stockade": {"type": "http", "url": "http://127.0.0.1:$PORT/mcp"}}}
  MCP Inspector:
    npx @modelcontextprotocol/inspector --cli http://127.0.0.1:$PORT/mcp \\
        --transport http --method tools/list

Try:
  $B/stockade status --audit-socket $S/run/auditd.sock --netguard-socket $S/run/netguard.sock
  echo '{"event":"operator_note","principal":"user:$me","message":"hello"}' |
      $B/stockade audit send --socket $S/run/auditd.sock
  $B/stockade audit tail $S/audit -f
  $B/stockade audit status --socket $S/run/auditd.sock
  $B/stockade audit verify $S/audit --pubkey $S/keys/checkpoint.pub --checkpoints $S/offhost
  $B/stockade audit export $S/audit --format ecs
  $B/mcp-exec run --rules rules --state-dir $S/mcp-exec -- \\
      /usr/bin/python3 -c 'import numpy; print(numpy.arange(5).sum())'

MSG
wait
