#!/bin/bash
# `stockade status --ready`, the node agent's readiness probe
# (deploy/kubernetes): 0 only when the audit trail writes, netguard
# answers, and an MCP server runs whose warm pool has filled once.  Each
# missing part alone keeps it at 1 and is named: no audit daemon, no
# netguard, no mcp-exec, a pool that cannot warm (its driver never says
# ready), then ready, then the audit daemon gone again.
. "$(dirname "$0")/lib.sh"

NG_PID=""
trap 'st=$?; [ $st = 0 ] || tail -n 20 "$T/mx.err" "$T/ng.err" >&2; stop_mx || true
      [ -z "$NG_PID" ] || { kill "$NG_PID"; wait "$NG_PID"; } 2>/dev/null; cleanup' EXIT

ready() {
	"$STOCKADE" status --ready --audit-socket "$SOCK" \
	    --netguard-socket "$T/ng.sock" --mcp-state "$T/mx-state"
}
# not_ready WHAT: exit 1 and a line naming WHAT.
not_ready() {
	local out st=0
	out=$(ready) || st=$?
	[ $st = 1 ] || fail "--ready exited $st with $1 ($out)"
	echo "$out" | grep -q "not ready: .*$1" || fail "--ready said \"$out\", not $1"
}

not_ready "audit trail"
start_auditd
not_ready "netguard"
mcp_rules
"$BIN/netguard" -d --rules "$R" --socket "$T/ng.sock" --audit-socket "$SOCK" \
    --state-dir "$T/ng" 2>"$T/ng.err" </dev/null &
NG_PID=$!
for _ in $(seq 1 200); do [ -S "$T/ng.sock" ] && break; sleep 0.05; done
not_ready "no mcp-exec"
note "not ready without the audit daemon, netguard, an MCP server"

# A pool that never warms: the driver it starts never says ready.
mkdir -p "$T/stuck"
printf 'import time\ntime.sleep(3600)\n' >"$T/stuck/driver.py"
cp "$R/mcp-exec.yaml" "$T/mcp-exec.yaml.good"
sed -i "s|^\(  driver_dir:\).*|\1 $T/stuck|" "$R/mcp-exec.yaml"
printf '\npool:\n  size: 1\n' >>"$R/profiles/default.yaml"
start_mx --audit-socket "$SOCK" --netguard-socket "$T/ng.sock"
for _ in 1 2 3; do not_ready "pool warming"; sleep 0.5; done
stop_mx
note "not ready while the pool has never filled"

cp "$T/mcp-exec.yaml.good" "$R/mcp-exec.yaml"
start_mx --audit-socket "$SOCK" --netguard-socket "$T/ng.sock"
for _ in $(seq 1 300); do ready >/dev/null && break; sleep 0.1; done
[ "$(ready)" = ready ] || fail "never ready: $(ready)"
curl -s "http://127.0.0.1:$PORT/metrics" | grep -qx "stockade_pool_warm 1" ||
    fail "stockade_pool_warm is not 1"
note "ready once the pool filled (stockade_pool_warm 1)"

stop_auditd
not_ready "audit trail"
note "not ready again once the audit daemon is gone"
