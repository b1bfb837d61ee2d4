#!/bin/bash
# A hostile client against mcp-exec over stdio and over HTTP (hostile.py):
# malformed and oversize frames, wrong-typed arguments of every tool,
# pipelined and concurrent requests, slow and stalled clients, too many
# connections, cross-principal access, and a principal at its limits; a
# normal client is served after each group, and the audit log verifies.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT

start_auditd
mcp_rules
mkdir -p "$T/stdio-state"
PYTHONPATH="$HERE" "$PY" "$HERE/hostile.py" stdio "$MX" "$R" "$T/stdio-state" ||
    { tail -20 "$T/stdio-state.err" >&2; fail "hostile stdio client (see above)"; }
note "stdio: malformed and oversize frames, wrong-typed arguments, 200 pipelined requests"

mcp_tokens "user:a" "user:b"
# Small tables, so that the limits are reached in a few requests.
sed -i -e 's|^\(    max_connections:\).*|\1 16|' \
    -e 's|^\(    max_requests_per_principal:\).*|\1 2|' "$R/mcp-exec.yaml"
grep -q "max_connections: 16" "$R/mcp-exec.yaml" || fail "sed missed max_connections"
start_mx
PYTHONPATH="$HERE" "$PY" "$HERE/hostile.py" http "$PORT" "$TOKA" "$TOKB" ||
    fail "hostile HTTP client (see above)"
note "http: cross-principal sessions/artifacts, wrong-typed arguments, concurrency, slow clients, connection and per-principal limits"

stop_mx || fail "mcp-exec exit status $? at SIGTERM"
verify >/dev/null || fail "audit log does not verify"
note "audit log verifies"
