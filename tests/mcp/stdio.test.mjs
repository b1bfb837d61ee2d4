// mcp-exec over stdio, driven by the official MCP TypeScript SDK client:
// the lifecycle, every tool, sessions, timeouts, cancellation, progress,
// artifacts through resources/read, and the error paths.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { McpError, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { readdirSync } from "node:fs";
import { connectStdio, python, closeSessions, env } from "./lib.mjs";

let client;

before(async () => { client = await connectStdio(); });
afterEach(async () => { await closeSessions(client); });
after(async () => { await client.close(); });

test("initialize reports the server and its capabilities", () => {
  const info = client.getServerVersion();
  assert.equal(info.name, "stockade-mcp-exec");
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools && caps.resources && caps.logging);
  assert.match(client.getInstructions(), /sandbox/);
});

test("tools/list describes every tool with schemas", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["close_session", "execute_python", "list_files",
    "list_sessions", "read_file", "run_command"]);
  const py = tools.find((t) => t.name === "execute_python");
  assert.deepEqual(py.inputSchema.required, ["code"]);
  assert.equal(py.inputSchema.properties.timeout_ms.maximum, 60000);
  assert.ok(py.outputSchema.properties.artifacts);
  assert.equal(py.annotations.openWorldHint, false);
  const rc = tools.find((t) => t.name === "run_command");
  assert.ok(rc.inputSchema.properties.command.enum.includes("wc"));
});

test("execute_python returns structured output", async () => {
  const r = await python(client, "print('hello'); import sys; print('oops', file=sys.stderr)");
  assert.equal(r.isError, false);
  const s = r.structuredContent;
  assert.equal(s.stdout, "hello\n");
  assert.equal(s.stderr, "oops\n");
  assert.equal(s.exit_code, 0);
  assert.equal(s.timed_out, false);
  assert.match(s.session_id, /^sess_[0-9a-f]{32}$/);
  assert.deepEqual(JSON.parse(r.content[0].text), s);
});

test("a session keeps variables, imports and files", async () => {
  const a = await python(client, "import numpy as np\nx = np.arange(5)\nopen('/workspace/n.txt','w').write('kept')");
  const sid = a.structuredContent.session_id;
  const b = await python(client, "print(int(x.sum()), open('n.txt').read())", { session_id: sid });
  assert.equal(b.structuredContent.stdout, "10 kept\n");
  await client.callTool({ name: "close_session", arguments: { session_id: sid } });
  const c = await python(client, "print(x)", { session_id: sid });
  assert.equal(c.isError, true);
  assert.match(c.content[0].text, /session not found/);
});

test("outputs of calls never mix", async () => {
  const a = await python(client, "print('one')");
  const sid = a.structuredContent.session_id;
  const b = await python(client, "print('two')", { session_id: sid });
  assert.equal(b.structuredContent.stdout, "two\n");
});

test("an exception is a tool error with the traceback", async () => {
  const r = await python(client, "1/0");
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.exit_code, 1);
  assert.match(r.structuredContent.stderr, /ZeroDivisionError/);
});

test("a timeout interrupts and the session survives", async () => {
  const a = await python(client, "y = 7");
  const sid = a.structuredContent.session_id;
  const t0 = Date.now();
  const r = await python(client, "import time\nwhile True: time.sleep(0.05)", { session_id: sid, timeout_ms: 700 });
  assert.ok(Date.now() - t0 < 3000);
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.timed_out, true);
  const b = await python(client, "print(y)", { session_id: sid });
  assert.equal(b.structuredContent.stdout, "7\n");
});

test("code that ignores the interrupt loses its session", async () => {
  const a = await python(client, "z = 1");
  const sid = a.structuredContent.session_id;
  const r = await python(client, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass", { session_id: sid, timeout_ms: 300 });
  assert.equal(r.structuredContent.timed_out, true);
  assert.ok(r.content.some((c) => /session's variables and files are gone/.test(c.text ?? "")));
  const b = await python(client, "print(z)", { session_id: sid });
  assert.match(b.content[0].text, /session not found/);
});

test("cancellation stops the call", async () => {
  const a = await python(client, "w = 3");
  const sid = a.structuredContent.session_id;
  const ac = new AbortController();
  const p = python(client, "import time\ntime.sleep(30)", { session_id: sid }, { signal: ac.signal });
  setTimeout(() => ac.abort("changed my mind"), 500);
  await assert.rejects(p);
  // The interrupted call frees the session quickly.
  let b;
  for (let i = 0; i < 40; i++) {
    b = await python(client, "print(w)", { session_id: sid });
    if (!/another call/.test(b.content[0].text)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(b.structuredContent.stdout, "3\n");
});

test("output streams as progress notifications", async () => {
  const seen = [];
  const r = await python(client, "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.2)", {}, {
    onprogress: (p) => seen.push(p),
  });
  assert.equal(r.structuredContent.stdout, "tick 0\ntick 1\ntick 2\n");
  assert.ok(seen.length >= 2, `progress notifications: ${seen.length}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress);
  assert.match(seen.map((p) => p.message).join(""), /tick 0/);
});

test("artifacts come back as resource links and read as resources", async () => {
  const r = await python(client, "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1,3,2])\nplt.savefig('chart.png')\nopen('t.csv','w').write('a,b\\n1,2\\n3,4\\n')");
  const arts = r.structuredContent.artifacts;
  // The figure left open is also shown, as Jupyter would: figure_1.png.
  assert.deepEqual(arts.map((a) => a.name).sort(), ["chart.png", "figure_1.png", "t.csv"]);
  const png = arts.find((a) => a.name === "chart.png");
  assert.equal(png.mime, "image/png");
  assert.match(png.sha256, /^[0-9a-f]{64}$/);
  assert.ok(r.content.some((c) => c.type === "resource_link" && c.uri === png.uri));
  assert.ok(r.content.some((c) => c.type === "image" && c.mimeType === "image/png"));
  const res = await client.readResource({ uri: png.uri });
  const bytes = Buffer.from(res.contents[0].blob, "base64");
  assert.equal(bytes.length, png.size);
  assert.equal(bytes.subarray(1, 4).toString(), "PNG");
  const csv = await client.readResource({ uri: arts.find((a) => a.name === "t.csv").uri });
  assert.equal(csv.contents[0].text, "a,b\n1,2\n3,4\n");
  const { resources } = await client.listResources();
  assert.ok(resources.some((x) => x.uri === png.uri));
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.match(resourceTemplates[0].uriTemplate, /^stockade:\/\/sessions\/\{session_id\}\/artifacts\/\{name\}$/);
});

test("only new or changed artifacts are reported again", async () => {
  const a = await python(client, "open('a.txt','w').write('one')");
  const sid = a.structuredContent.session_id;
  assert.deepEqual(a.structuredContent.artifacts.map((x) => x.name), ["a.txt"]);
  const b = await python(client, "x = 1", { session_id: sid });
  assert.deepEqual(b.structuredContent.artifacts, []);
  const c = await python(client, "import os\nopen('a.txt','w').write('two')\nos.makedirs('sub', exist_ok=True)\nopen('sub/b.txt','w').write('bee')", { session_id: sid });
  const names = c.structuredContent.artifacts.map((x) => x.name).sort();
  assert.deepEqual(names, ["a.txt", "sub/b.txt"]);
  const uri = c.structuredContent.artifacts.find((x) => x.name === "a.txt").uri;
  assert.equal((await client.readResource({ uri })).contents[0].text, "two");
  const d = await python(client, "open('sub/b.txt','w').write('bee')", { session_id: sid });
  assert.deepEqual(d.structuredContent.artifacts, [], "same content: not again");
});

test("an unknown or foreign artifact is not found", async () => {
  await assert.rejects(
    client.readResource({ uri: "stockade://sessions/sess_00000000000000000000000000000000/artifacts/x.png" }),
    (e) => e instanceof McpError && e.code === -32002);
  await assert.rejects(client.readResource({ uri: "file:///etc/passwd" }),
    (e) => e instanceof McpError && e.code === -32002);
});

test("run_command runs an allowlisted command without a shell", async () => {
  const r = await client.callTool({ name: "run_command", arguments: { command: "python-version", args: ["--version"] } });
  assert.equal(r.isError, false);
  assert.match(r.structuredContent.stdout, /^Python 3\./);
  const bad = await client.callTool({ name: "run_command", arguments: { command: "wc", args: ["/etc/passwd; id"] } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /arg_pattern/);
});

test("input files are staged read-only", async () => {
  const r = await python(client, "print(open('/inputs/data.csv').read(), end='')", { files: [`${env.inputs}/data.csv`] });
  assert.equal(r.structuredContent.stdout, "a,b\n1,2\n");
  const bad = await python(client, "pass", { files: ["/etc/passwd"] });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /not beneath an input root/);
});

test("a deny pattern refuses the code", async () => {
  const r = await python(client, "import base64\nexec(base64.b64decode('cHJpbnQoMSk='))");
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /refused/);
});

test("bad arguments are protocol errors naming the field", async () => {
  await assert.rejects(client.callTool({ name: "execute_python", arguments: {} }),
    (e) => e instanceof McpError && e.code === -32602 && /arguments\.code/.test(e.message));
  await assert.rejects(client.callTool({ name: "execute_python", arguments: { code: "1", colour: "red" } }),
    (e) => e instanceof McpError && e.code === -32602 && /colour/.test(e.message));
  await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }),
    (e) => e instanceof McpError && e.code === -32602);
  const r = await python(client, "1", { timeout_ms: 10 ** 7 });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /maximum/);
  const s = await python(client, "1", { session_id: "sess_deadbeef" });
  assert.match(s.content[0].text, /^session not found$/);
});

test("flagged code runs and is reported as notifications/message at the set level", async () => {
  const seen = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => seen.push(n.params));
  await client.ping();
  await client.setLoggingLevel("warning");
  const r = await python(client, "import ctypes\nprint('ran')");
  assert.equal(r.structuredContent.stdout, "ran\n");
  const hit = seen.find((p) => p.data.rule === "PY-NATIVE-001");
  assert.ok(hit, JSON.stringify(seen));
  assert.equal(hit.level, "warning");
  assert.equal(hit.data.line, 1);
  seen.length = 0;
  await client.setLoggingLevel("error");
  await python(client, "import ctypes");
  assert.deepEqual(seen, []);
  await assert.rejects(client.setLoggingLevel("loud"), (e) => e instanceof McpError && e.code === -32602);
});

test("with the audit daemon unreachable, no code runs", async () => {
  const c = await connectStdio(env.rulesNoAudit, env.stateNoAudit);
  const seen = [];
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => seen.push(n.params));
  const r = await c.callTool({ name: "execute_python", arguments: { code: "open('/workspace/ran','w').write('x')" } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /^not run: the audit trail is unavailable/);
  assert.ok(seen.some((p) => p.level === "error" && /no code runs/.test(p.data.message)));
  // The sandbox built for the call went with it (issue 19: a refused call
  // leaks no hidden session), so nothing is left that the code touched.
  assert.deepEqual(readdirSync(`${env.stateNoAudit}/sandboxes`), []);
  await c.close();
});
