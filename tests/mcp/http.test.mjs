// mcp-exec over Streamable HTTP with bearer tokens, driven by the official
// SDK client: the same tools as over stdio, SSE progress and cancellation,
// session termination, and above all that two principals never see each
// other's sessions, artifacts or MCP sessions.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { connectHttp, http, python } from "./lib.mjs";

let alice, bob;

before(async () => {
  alice = await connectHttp(http.tokenA);
  bob = await connectHttp(http.tokenB);
});
after(async () => {
  await alice.client.close();
  await bob.client.close();
});

test("a client without a token or with a wrong one is refused", async () => {
  await assert.rejects(connectHttp(undefined), /invalid_token/);
  await assert.rejects(connectHttp("not-a-token"), /invalid_token/);
  const r = await fetch(http.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(r.status, 401);
  assert.match(r.headers.get("www-authenticate"), /^Bearer /);
});

test("execute_python works over HTTP and keeps its session", async () => {
  const a = await python(alice.client, "secret = 41");
  const sid = a.structuredContent.session_id;
  const b = await python(alice.client, "print(secret + 1)", { session_id: sid });
  assert.equal(b.structuredContent.stdout, "42\n");
  await alice.client.callTool({ name: "close_session", arguments: { session_id: sid } });
});

test("progress streams over SSE", async () => {
  const seen = [];
  const r = await python(alice.client, "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.15)", {}, {
    onprogress: (p) => seen.push(p),
  });
  assert.equal(r.structuredContent.stdout, "0\n1\n2\n");
  assert.ok(seen.length >= 2, `progress notifications: ${seen.length}`);
  await alice.client.callTool({ name: "close_session", arguments: { session_id: r.structuredContent.session_id } });
});

test("cancellation over HTTP stops the call", async () => {
  const ac = new AbortController();
  const t0 = Date.now();
  const p = python(alice.client, "import time\ntime.sleep(30)", {}, { signal: ac.signal });
  setTimeout(() => ac.abort("enough"), 400);
  await assert.rejects(p);
  assert.ok(Date.now() - t0 < 5000);
});

test("principals never see each other's sessions or artifacts", async () => {
  const a = await python(alice.client, "mine = 'alice'\nopen('note.txt','w').write('alice only')");
  const sid = a.structuredContent.session_id;
  const uri = a.structuredContent.artifacts.find((x) => x.name === "note.txt").uri;
  // Bob gets the answer an unknown id gets: nothing to probe.
  const b = await python(bob.client, "print(mine)", { session_id: sid });
  assert.equal(b.isError, true);
  assert.equal(b.content[0].text, "session not found");
  const c = await bob.client.callTool({ name: "close_session", arguments: { session_id: sid } });
  assert.equal(c.isError, true);
  await assert.rejects(bob.client.readResource({ uri }),
    (e) => e instanceof McpError && e.code === -32002);
  const { resources } = await bob.client.listResources();
  assert.ok(!resources.some((r) => r.uri === uri));
  // Alice still has all of it.
  const d = await python(alice.client, "print(mine)", { session_id: sid });
  assert.equal(d.structuredContent.stdout, "alice\n");
  const res = await alice.client.readResource({ uri });
  assert.equal(res.contents[0].text, "alice only");
  await alice.client.callTool({ name: "close_session", arguments: { session_id: sid } });
});

test("an MCP session id is bound to its principal", async () => {
  const r = await fetch(http.url, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${http.tokenB}`,
      "Mcp-Session-Id": alice.transport.sessionId,
      "MCP-Protocol-Version": "2025-11-25",
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert.ok(r.status === 403 || r.status === 404, `status ${r.status}`);
});

test("terminating the MCP session ends it", async () => {
  const { client, transport } = await connectHttp(http.tokenA);
  const old = transport.sessionId;
  await transport.terminateSession();
  const r = await fetch(http.url, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${http.tokenA}`,
      "Mcp-Session-Id": old,
      "MCP-Protocol-Version": "2025-11-25",
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(r.status, 404);
  await client.close();
});
