#!/bin/bash
# `make run`: the suite with the policy in rules/, state kept in ./state.
# Generates a checkpoint key on first use, starts what exists of the suite
# (stockade-auditd, and as root the MCP server mcp-exec on 127.0.0.1:
# $MCP_PORT, default 8765), prints how to use it, and stops everything
# cleanly on Ctrl-C.
set -eu
: "${BUILD:=build}"
cd "$(dirname "$0")/.."
B="$PWD/$BUILD"
S="$PWD/state"
PORT=${MCP_PORT:-8765}
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
mcp=""
stop() {
	[ -z "$mcp" ] || { kill -TERM "$mcp"; wait "$mcp"; }
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
    -e "s#^  driver_dir: .*#  driver_dir: $PWD/mcp-exec/driver#" \
    "$S/rules/mcp-exec.yaml"
if [ "$(id -u)" = 0 ]; then
	setsid "$B/mcp-exec" -v --http "127.0.0.1:$PORT" --rules "$S/rules" \
	    --state-dir "$S/mcp-exec" </dev/null &
	mcp=$!
	mcp_line="mcp-exec         MCP (Streamable HTTP) at http://127.0.0.1:$PORT/mcp"
else
	mcp_line="mcp-exec         not started: it needs root (sandboxes)"
fi

cat <<MSG

Stockade is running (Ctrl-C stops it).
  stockade-auditd  socket $S/run/auditd.sock, log $S/audit
  $mcp_line

Point an MCP client at http://127.0.0.1:$PORT/mcp, or have a client start
  $B/mcp-exec --stdio --rules $S/rules --state-dir $S/mcp-exec
(tools: execute_python, run_command, close_session; docs/operations.md).

Try:
  echo '{"event":"operator_note","principal":"user:$me","message":"hello"}' |
      $B/stockade audit send --socket $S/run/auditd.sock
  $B/stockade audit tail $S/audit -f
  $B/stockade audit status --socket $S/run/auditd.sock
  $B/stockade audit verify $S/audit --pubkey $S/keys/checkpoint.pub --checkpoints $S/offhost
  $B/stockade audit export $S/audit --format ecs
  $B/mcp-exec run --rules rules --state-dir $S/mcp-exec -- \
      /usr/bin/python3 -c 'import numpy; print(numpy.arange(5).sum())'

MSG
wait
