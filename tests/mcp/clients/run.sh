#!/bin/bash
# Third-party MCP clients (LangChain's adapters, OpenAI Agents, mcp-remote,
# the Vercel AI SDK, Mastra; npm, pinned in package-lock.json) against
# mcp-exec over stdio and HTTP, on the Node 22 the conformance suite pins
# (the AI SDK's and Mastra's packages need it).  Run by tests/mcp/run.sh, whose environment
# (MCP_EXEC, MCP_RULES, MCP_HTTP_URL, tokens...) says what to test.
# Usage: run.sh [FILE.test.mjs...]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
conf="$HERE/../conformance"
node="$conf/node_modules/.bin/node"
: "${MCP_EXEC:?run me from tests/mcp/run.sh}"

[ -x "$node" ] || (cd "$conf" && npm ci --no-audit --no-fund --loglevel=error)
[ -d "$HERE/node_modules/@mastra/mcp" ] ||
	(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)

# Loopback only, in every Node process here (loopback-only.mjs), and the
# libraries' own telemetry and tracing off besides; mcp-remote keeps its
# OAuth state in a directory of this run's.
T=$(mktemp -d "${TMPDIR:-/tmp}/stockade-clients.XXXXXX")
trap 'rm -rf "$T"' EXIT
export NODE_OPTIONS="--import=$HERE/loopback-only.mjs" \
    MASTRA_TELEMETRY_DISABLED=1 OPENAI_AGENTS_DISABLE_TRACING=1 \
    LANGCHAIN_TRACING_V2=false LANGSMITH_TRACING=false \
    MCP_REMOTE_CONFIG_DIR="$T/mcp-remote"
cd "$HERE"
[ $# -gt 0 ] || set -- ./*.test.mjs
# Bounds on each test and on the whole run, so that a client that hangs
# fails here.
timeout 180 "$node" --test --test-concurrency=1 --test-timeout=60000 \
    --test-reporter=spec "$@" ||
    { st=$?; [ $st != 124 ] || echo "FAIL: the client suite ran over 180 s"; exit $st; }
