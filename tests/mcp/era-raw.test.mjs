// MCP 2026-07-28 beside 2025-11-25 on one mcp-exec, in raw JSON-RPC: what
// the SDK does not let a test send (bad _meta, unknown versions, trace
// context, header mismatches over HTTP) and the exact shape of results.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { env, http } from "./lib.mjs";

const MODERN = "2026-07-28";
const meta = (extra = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "era-raw", version: "7.1" },
  ...extra,
});

let proc, lines, waiting = [], nextId = 1;

function next() {
  return new Promise((resolve) => waiting.push(resolve));
}
// One request over stdio; notifications before its reply are collected.
async function rpc(method, params, notes = []) {
  const id = nextId++;
  proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  for (;;) {
    const m = JSON.parse(await next());
    if (m.id === id) return m;
    notes.push(m);
  }
}

before(() => {
  proc = spawn(env.mcpExec, ["--stdio", "--rules", env.rules, "--state-dir", env.state], {
    stdio: ["pipe", "pipe", env.stderr ? openSync(env.stderr, "a") : "inherit"],
  });
  lines = createInterface({ input: proc.stdout });
  lines.on("line", (l) => waiting.shift()?.(l));
});
after(async () => {
  proc.stdin.end();
  const code = await new Promise((r) => proc.on("exit", r));
  assert.equal(code, 0, "mcp-exec exits 0 when stdin closes");
});

const serverInfo = (r) => r.result._meta["io.modelcontextprotocol/serverInfo"];

test("stdio: server/discover without initialize", async () => {
  const r = await rpc("server/discover", { _meta: meta() });
  assert.equal(r.result.resultType, "complete");
  assert.deepEqual(r.result.supportedVersions.slice(0, 2), [MODERN, "2025-11-25"]);
  assert.ok(r.result.capabilities.tools);
  assert.match(r.result.instructions, /./);
  assert.equal(typeof r.result.ttlMs, "number");
  assert.equal(r.result.cacheScope, "public");
  assert.equal(serverInfo(r).name, "stockade-mcp-exec");
});

test("stdio: lists are cacheable and in a fixed order", async () => {
  const a = await rpc("tools/list", { _meta: meta() });
  const b = await rpc("tools/list", { _meta: meta() });
  assert.equal(a.result.resultType, "complete");
  assert.equal(a.result.cacheScope, "public");
  assert.ok(a.result.ttlMs > 0);
  assert.deepEqual(a.result.tools.map((t) => t.name), b.result.tools.map((t) => t.name));
  const res = await rpc("resources/list", { _meta: meta() });
  assert.equal(res.result.cacheScope, "private");
  assert.equal(res.result.ttlMs, 0);
  const tpl = await rpc("resources/templates/list", { _meta: meta() });
  assert.equal(tpl.result.cacheScope, "public");
});

test("stdio: unsupported versions are -32022 with the list", async () => {
  for (const v of ["1900-01-01", "2025-11-25"]) {
    const r = await rpc("tools/list", { _meta: meta({ "io.modelcontextprotocol/protocolVersion": v }) });
    assert.equal(r.error.code, -32022, v);
    assert.deepEqual(r.error.data.supported.slice(0, 2), [MODERN, "2025-11-25"]);
    assert.equal(r.error.data.requested, v);
  }
});

test("stdio: a malformed _meta is -32602; removed methods are -32601", async () => {
  let r = await rpc("tools/list", { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } });
  assert.equal(r.error.code, -32602);
  assert.match(r.error.message, /clientCapabilities/);
  r = await rpc("tools/list", { _meta: meta({ "io.modelcontextprotocol/logLevel": "loud" }) });
  assert.equal(r.error.code, -32602);
  r = await rpc("server/discover", {});
  assert.equal(r.error.code, -32602, "discover needs the version in _meta");
  for (const m of ["ping", "logging/setLevel", "initialize", "subscriptions/listen"]) {
    r = await rpc(m, { _meta: meta() });
    assert.equal(r.error.code, -32601, m);
  }
  // The legacy era is untouched: without _meta, initialize comes first.
  r = await rpc("tools/list", {});
  assert.equal(r.error.code, -32600);
});

// The records of one request id, once auditd has them.
async function records(request, event) {
  for (let i = 0; i < 100; i++) {
    const recs = readdirSync(env.auditLog).filter((f) => /^audit-.*\.log$/.test(f))
      .flatMap((f) => readFileSync(join(env.auditLog, f), "utf8").split("\n"))
      .filter((l) => l.includes(`"event":"${event}"`)).map((l) => JSON.parse(l))
      .filter((e) => e.request === String(request));
    if (recs.length > 0) return recs;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`no ${event} for request ${request}`);
}

const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

test("stdio: a call in a session, with its trace and clientInfo audited", async () => {
  const notes = [];
  let r = await rpc("tools/call", { name: "execute_python", arguments: { code: "x = 41" },
    _meta: meta({ traceparent: TP, tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
      "io.modelcontextprotocol/logLevel": "debug" }) }, notes);
  assert.equal(r.result.resultType, "complete");
  assert.equal(serverInfo(r).name, "stockade-mcp-exec");
  const sid = r.result.structuredContent.session_id;
  assert.match(sid, /^sess_[0-9a-f]{32}$/);
  const id = nextId - 1;
  r = await rpc("tools/call", { name: "execute_python", arguments: { code: "print(x + 1)", session_id: sid },
    _meta: meta({ traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01" }) });
  assert.match(r.result.structuredContent.stdout, /42/);
  const bad = nextId - 1;
  const [ev] = await records(id, "code_execution");
  assert.equal(ev.trace.traceparent, TP);
  assert.equal(ev.trace.tracestate, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
  assert.equal(ev.client.name, "era-raw");
  assert.equal(ev.client.version, "7.1");
  const [ev2] = await records(bad, "code_execution");
  assert.equal(ev2.trace, undefined, "an all-zero trace id is not W3C: not recorded");
  r = await rpc("tools/call", { name: "close_session", arguments: { session_id: sid }, _meta: meta() });
  assert.notEqual(r.result.isError, true);
});

test("stdio: an unknown resource is -32602 in 2026-07-28", async () => {
  const r = await rpc("resources/read", { uri: "stockade://sessions/sess_0/artifacts/x", _meta: meta() });
  assert.equal(r.error.code, -32602);
});
