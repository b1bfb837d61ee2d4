#!/bin/bash
# The warm pool of a runtime: wasm profile: node and Pyodide started ahead
# (~3 s), the driver waiting with pool.preimport done; a new session is a
# pool hit; two pooled sessions differ in random state; each sees an empty
# /workspace and the inputs staged for its call (after Pyodide mounted
# /inputs); stopping leaves no sandbox behind.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT
start_auditd
mcp_rules
sed -i "s|^\(  driver_dir:\).*|\1 $BIN/share/stockade/driver|" "$R/mcp-exec.yaml"
sed -i 's/^  memory: .*/  memory: 768M/' "$R/profiles/default.yaml"
printf 'runtime: wasm\n\npool:\n  size: 1\n  preimport: [decimal]\n' >>"$R/profiles/default.yaml"
wasm_or_skip
start_mx

"$PY" "$HERE/pool_runtime.py" "$PORT" wasm || fail "the wasm pool (see above)"
stop_mx || fail "mcp-exec exit status $?"
[ -z "$(ls "$T/mx-state/sandboxes" 2>/dev/null)" ] || fail "sandboxes left at stop: $(ls "$T/mx-state/sandboxes")"
note "stop: the pooled wasm sandbox torn down"
stop_auditd
verify >/dev/null || fail "audit verify"
