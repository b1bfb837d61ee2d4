#!/bin/bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance
# on a Node 22 of its own, both pinned in package-lock.json) against a
# running mcp-exec --http without bearer tokens: every server scenario, one
# line each.  Those in expected-failures.yaml must fail, all others pass.
# Usage: run.sh http://127.0.0.1:PORT/mcp [2026-07-28]   (tests/mcp/run.sh)
# With 2026-07-28: that revision's scenarios, from the suite pinned in
# 2026-07-28/ (with its own expected-failures.yaml), on this Node 22.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
url=${1:?usage: run.sh http://127.0.0.1:PORT/mcp [2026-07-28]}
era=${2:-}
node="$HERE/node_modules/.bin/node"
suite="$HERE${era:+/$era}"
tool="$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
out=$(mktemp -d "${TMPDIR:-/tmp}/stockade-conformance.XXXXXX")
trap 'rm -rf "$out"' EXIT

[ -x "$node" ] || (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
[ -f "$tool" ] || (cd "$suite" && npm ci --no-audit --no-fund --loglevel=error)

# An era's run: only the scenarios that name it.
"$node" "$tool" list --server | grep -e "${era:-.}" >"$out/scenarios"
t0=$(date +%s%N)
# The tool checks the baseline itself too: its exit status must agree.
rc=0
"$node" "$tool" server --url "$url" --suite all -o "$out/results" \
    ${era:+--spec-version "$era"} \
    --expected-failures "$suite/expected-failures.yaml" >"$out/log" 2>&1 ||
	rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
"$node" "$HERE/report.mjs" "$out/scenarios" "$out/results" \
    "$suite/expected-failures.yaml" "$((ms / 1000)).$((ms % 1000 / 100))" ||
	rc=1
if [ $rc -ne 0 ]; then
	# The tool's own verdict on the baseline, or how it broke down.
	grep -q '^Total:' "$out/log" && sed -n '/^Total:/,$p' "$out/log" ||
		tail -n 20 "$out/log"
	echo "FAIL: MCP conformance suite (tool exit status $rc)"
	exit 1
fi
