// mcp-exec's JSON-RPC layer over stdio, with bytes no SDK would send:
// every error code the issue names, over-long lines, batches, and that a
// malformed message never stops the server from answering the next one.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { openSync } from "node:fs";
import { createInterface } from "node:readline";
import { env } from "./lib.mjs";

let proc, lines, waiting = [];

function next() {
  return new Promise((resolve) => waiting.push(resolve));
}
async function send(text) {
  proc.stdin.write(text + "\n");
  return JSON.parse(await next());
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

const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });

test("requests before initialize are refused; ping is not", async () => {
  let r = await send('{"jsonrpc":"2.0","id":"a","method":"tools/list"}');
  assert.equal(r.error.code, -32600);
  assert.equal(r.id, "a");
  r = await send('{"jsonrpc":"2.0","id":"p","method":"ping"}');
  assert.deepEqual(r.result, {});
});

test("initialize negotiates the version", async () => {
  const r = await send(init);
  assert.equal(r.result.protocolVersion, "2025-11-25");
  proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  const old = await send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize",
    params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }));
  assert.ok(old.error || old.result.protocolVersion === "2025-03-26");
});

test("invalid JSON is -32700 with a null id", async () => {
  for (const bad of ['{"jsonrpc":', "\u00ff\u00fe", '{"a":"\\u0000"}', "[".repeat(5000)]) {
    const r = await send(bad);
    assert.equal(r.error.code, -32700, bad.slice(0, 20));
    assert.equal(r.id, null);
  }
});

test("not a request is -32600; batches are refused", async () => {
  for (const bad of ["[]", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', "42", '"x"',
    '{"jsonrpc":"1.0","id":1,"method":"ping"}', '{"id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1}', '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}']) {
    const r = await send(bad);
    assert.equal(r.error.code, -32600, bad);
  }
});

test("duplicate keys are refused", async () => {
  const r = await send('{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}');
  assert.equal(r.error.code, -32700);
});

test("unknown methods are -32601; unknown notifications are ignored", async () => {
  proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/whatever"}\n');
  const r = await send('{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage"}');
  assert.equal(r.id, 5);
  assert.equal(r.error.code, -32601);
});

test("bad params are -32602 and name the field", async () => {
  let r = await send('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":[1]}');
  assert.equal(r.error.code, -32602);
  r = await send('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_python","arguments":{"code":7}}}');
  assert.equal(r.error.code, -32602);
  assert.match(r.error.message, /arguments\.code/);
  r = await send('{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"loud"}}');
  assert.equal(r.error.code, -32602);
  assert.match(r.error.message, /level/);
});

test("a line over the message cap is refused and skipped", async () => {
  const huge = '{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"' + "x".repeat(5 << 20) + '"}}';
  const r = await send(huge);
  assert.equal(r.error.code, -32600);
  assert.match(r.error.message, /larger than/);
  const p = await send('{"jsonrpc":"2.0","id":10,"method":"ping"}');
  assert.equal(p.id, 10);
});
