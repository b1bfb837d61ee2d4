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
  // Instructions follow the caller's rules: cacheable, not shared.
  assert.equal(r.result.cacheScope, "private");
  assert.equal(serverInfo(r).name, "stockade-mcp-exec");
});

test("stdio: lists are cacheable and in a fixed order", async () => {
  const a = await rpc("tools/list", { _meta: meta() });
  const b = await rpc("tools/list", { _meta: meta() });
  assert.equal(a.result.resultType, "complete");
  // Tools follow the caller's rules (principals.yaml): one context's.
  assert.equal(a.result.cacheScope, "private");
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
  for (const m of ["ping", "logging/setLevel", "initialize"]) {
    r = await rpc(m, { _meta: meta() });
    assert.equal(r.error.code, -32601, m);
  }
  // Served (tasks.test.mjs), and its filter is required.
  r = await rpc("subscriptions/listen", { _meta: meta() });
  assert.equal(r.error.code, -32602);
  assert.match(r.error.message, /params\.notifications/);
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

test("stdio: initialize is legacy even with _meta; both eras on one connection", async () => {
  let r = await rpc("initialize", { protocolVersion: "2025-11-25", capabilities: {},
    clientInfo: { name: "legacy", version: "1" },
    _meta: { "io.modelcontextprotocol/protocolVersion": "2025-11-25" } });
  assert.equal(r.result.protocolVersion, "2025-11-25");
  assert.equal(r.result.resultType, undefined, "a legacy result has no resultType");
  proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  r = await rpc("tools/list", {});
  assert.equal(r.result.ttlMs, undefined);
  r = await rpc("tools/list", { _meta: meta() });
  assert.equal(r.result.resultType, "complete");
});

// ------------------------------------------------------------ HTTP

// One POST of a 2026-07-28 request; headers as a conforming client sends
// them unless overridden (null leaves one out).
async function post(method, params, { headers = {}, id = nextId++, token = http.tokenA, signal } = {}) {
  const body = { jsonrpc: "2.0", id, method, params };
  const h = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    Authorization: `Bearer ${token}`,
    "MCP-Protocol-Version": params?._meta?.["io.modelcontextprotocol/protocolVersion"] ?? MODERN,
    "Mcp-Method": method,
  };
  if (params?.name !== undefined) h["Mcp-Name"] = params.name;
  if (params?.uri !== undefined) h["Mcp-Name"] = params.uri;
  // session_id is marked x-mcp-header: a client mirrors it.
  if (method === "tools/call" && params?.arguments?.session_id != null)
    h["Mcp-Param-Session-Id"] = params.arguments.session_id;
  for (const [k, v] of Object.entries(headers)) {
    if (v === null) delete h[k];
    else h[k] = v;
  }
  const res = await fetch(http.url, { method: "POST", headers: h, body: JSON.stringify(body), signal });
  const text = await res.text();
  // An SSE reply: the response is the last data line.
  const data = res.headers.get("content-type")?.startsWith("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data: ")).pop().slice(6) : text;
  return { status: res.status, headers: res.headers, msg: JSON.parse(data) };
}

test("http: discover needs no session and mints none", async () => {
  const r = await post("server/discover", { _meta: meta() });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("mcp-session-id"), null);
  assert.equal(r.msg.result.resultType, "complete");
  assert.ok(r.msg.result.supportedVersions.includes(MODERN));
});

const b64 = (name) => Buffer.from(name).toString("base64");

test("http: headers must say what the body says (400, -32020)", async () => {
  const call = { name: "execute_python", arguments: { code: "1" }, _meta: meta() };
  const read = { name: "read_file", arguments: { session_id: "none", path: "x" }, _meta: meta() };
  const resume = { name: "execute_python", arguments: { code: "1", session_id: "sess_x" }, _meta: meta() };
  // Every session_id is mirrored into Mcp-Param-Session-Id (x-mcp-header).
  const tools = (await post("tools/list", { _meta: meta() })).msg.result.tools;
  const marked = tools.filter((t) => t.inputSchema.properties.session_id);
  assert.ok(marked.length >= 4, "tools with session_id");
  for (const t of marked)
    assert.equal(t.inputSchema.properties.session_id["x-mcp-header"], "Session-Id", t.name);
  for (const [what, method, params, headers] of [
    ["no Mcp-Method", "tools/list", { _meta: meta() }, { "Mcp-Method": null }],
    ["another Mcp-Method", "tools/list", { _meta: meta() }, { "Mcp-Method": "resources/list" }],
    ["no MCP-Protocol-Version", "tools/list", { _meta: meta() }, { "MCP-Protocol-Version": null }],
    ["another MCP-Protocol-Version", "tools/list", { _meta: meta() }, { "MCP-Protocol-Version": "2025-11-25" }],
    ["no Mcp-Name", "tools/call", call, { "Mcp-Name": null }],
    ["another Mcp-Name", "tools/call", call, { "Mcp-Name": "close_session" }],
    ["another Mcp-Name, in base64", "tools/call", call,
      { "Mcp-Name": "=?base64?" + Buffer.from("close_session").toString("base64") + "?=" }],
    ["a broken base64 Mcp-Name", "tools/call", call, { "Mcp-Name": "=?base64?%%%%?=" }],
    // What OpenSSL's decoder skips, a strict one (a gateway's) refuses:
    // the name we would run is not the name it authorized (RFC 4648 §3.3).
    ...[["spaces before", call, "    " + b64("execute_python")],
      ["tabs before", call, "\t\t\t\t" + b64("execute_python")],
      ["spaces after", read, b64("read_file") + "    "], ["a '-' after", read, b64("read_file") + "----"],
      ["no padding", call, b64("execute_python").replace(/=+$/, "")],
      ["pad bits set", call, b64("execute_python").replace(/4=$/, "5=")]]
      .map(([how, params, v]) => [`a base64 Mcp-Name with ${how}`, "tools/call", params,
        { "Mcp-Name": `=?base64?${v}?=` }]),
    ["Mcp-Param-Session-Id without session_id", "tools/call", call, { "Mcp-Param-Session-Id": "sess_x" }],
    ["session_id without Mcp-Param-Session-Id", "tools/call", resume, { "Mcp-Param-Session-Id": null }],
    ["another Mcp-Param-Session-Id", "tools/call", resume, { "Mcp-Param-Session-Id": "sess_y" }],
    ["another Mcp-Param-Session-Id, in base64", "tools/call", resume,
      { "Mcp-Param-Session-Id": "=?base64?" + Buffer.from("sess_y").toString("base64") + "?=" }],
    ["Mcp-Param-Session-Id on tools/list", "tools/list", { _meta: meta() }, { "Mcp-Param-Session-Id": "sess_x" }],
  ]) {
    const r = await post(method, params, { headers });
    assert.equal(r.status, 400, what);
    assert.equal(r.msg.error.code, -32020, what);
  }
  const r = await post("tools/list", { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } });
  assert.equal(r.status, 400, "no clientCapabilities");
  assert.equal(r.msg.error.code, -32602);
});

test("http: a base64 Mcp-Name that matches is served", async () => {
  const r = await post("tools/call", { name: "execute_python", arguments: { code: "print(6 * 7)" }, _meta: meta() },
    { headers: { "Mcp-Name": "=?base64?" + Buffer.from("execute_python").toString("base64") + "?=" } });
  assert.equal(r.status, 200);
  assert.match(r.msg.result.structuredContent.stdout, /42/);
  const sid = r.msg.result.structuredContent.session_id;
  // The session is the principal's: another token cannot use it.
  const b = await post("tools/call", { name: "execute_python", arguments: { code: "1", session_id: sid }, _meta: meta() },
    { token: http.tokenB });
  assert.equal(b.msg.result.isError, true);
  const lb = await post("tools/call", { name: "list_sessions", arguments: {}, _meta: meta() }, { token: http.tokenB });
  assert.ok(!lb.msg.result.structuredContent.sessions.some((s) => s.session_id === sid),
    "another principal's sessions are not listed");
  const la = await post("tools/call", { name: "list_sessions", arguments: {}, _meta: meta() });
  assert.ok(la.msg.result.structuredContent.sessions.some((s) => s.session_id === sid));
  await post("tools/call", { name: "close_session", arguments: { session_id: sid }, _meta: meta() });
});

test("http: unsupported versions are 400 -32022, unknown methods 404", async () => {
  let r = await post("tools/list", { _meta: meta({ "io.modelcontextprotocol/protocolVersion": "1900-01-01" }) });
  assert.equal(r.status, 400);
  assert.equal(r.msg.error.code, -32022);
  assert.ok(r.msg.error.data.supported.includes(MODERN));
  r = await post("ping", { _meta: meta() });
  assert.equal(r.status, 404);
  assert.equal(r.msg.error.code, -32601);
});

test("http: the 2025-11-25 rules still hold without _meta", async () => {
  const r = await post("tools/list", {}, { headers: { "MCP-Protocol-Version": "2025-11-25" } });
  assert.equal(r.status, 400);
  assert.match(r.msg.error.message, /Mcp-Session-Id/);
});

// Over HTTP, 2026-07-28 has no sessions: inside one, a 2026-07-28 header
// is not a session's revision, and a 2025-11-25 one is not the body's.
test("http: a 2026-07-28 request inside an MCP session is refused", async () => {
  const init = await fetch(http.url, { method: "POST", headers: { "Content-Type": "application/json",
    Accept: "application/json, text/event-stream", Authorization: `Bearer ${http.tokenA}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25",
      capabilities: {}, clientInfo: { name: "s", version: "1" } } }) });
  const sid = init.headers.get("mcp-session-id");
  assert.match(sid, /^[0-9a-f]{48}$/);
  await init.text();
  let r = await post("tools/list", { _meta: meta() },
    { headers: { "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25" } });
  assert.equal(r.status, 400);
  assert.equal(r.msg.error.code, -32020);
  r = await post("tools/list", { _meta: meta() }, { headers: { "Mcp-Session-Id": sid } });
  assert.equal(r.status, 400);
  assert.match(r.msg.error.message, /MCP-Protocol-Version/);
  await fetch(http.url, { method: "DELETE", headers: { "Mcp-Session-Id": sid, Authorization: `Bearer ${http.tokenA}`,
    "MCP-Protocol-Version": "2025-11-25" } });
});

test("http: a response with a 2026-07-28 _meta is accepted, not run", async () => {
  const res = await fetch(http.url, { method: "POST", headers: { "Content-Type": "application/json",
    Accept: "application/json, text/event-stream", Authorization: `Bearer ${http.tokenA}`,
    "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 9, result: {}, params: { _meta: meta() } }) });
  assert.equal(res.status, 202);
  await res.text();
  const r = await post("server/discover", { _meta: meta() });
  assert.equal(r.status, 200, "the server is still there");
});

test("http: closing the response stream cancels the call", async () => {
  const id = `cancel-${process.pid}-${Date.now()}`;
  const ac = new AbortController();
  const started = Date.now();
  const p = post("tools/call", { name: "execute_python", arguments: { code: "import time\ntime.sleep(60)" },
    _meta: meta({ traceparent: TP }) }, { id, signal: ac.signal }).catch((e) => e);
  await records(id, "execution_started");
  ac.abort();
  assert.equal((await p).name, "AbortError");
  const [ev] = await records(id, "code_execution");
  assert.equal(ev.cancelled, true);
  assert.equal(ev.trace.traceparent, TP);
  assert.ok(Date.now() - started < 30000);
});
