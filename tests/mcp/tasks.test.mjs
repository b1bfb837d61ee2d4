// Long calls as MCP tasks, both forms on one mcp-exec: 2025-11-25's
// experimental params.task (tasks/get, tasks/result, tasks/list,
// tasks/cancel) and 2026-07-28's io.modelcontextprotocol/tasks extension
// (tasks/get, tasks/update, tasks/cancel), in raw JSON-RPC over stdio and
// HTTP, and through the SDK v1 client's experimental tasks API.  (SDK v2
// 2.4 has no client API for the extension: its 2026 registry has no tasks.)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, cpSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { env, http, connectHttp, connectStdio } from "./lib.mjs";

const MODERN = "2026-07-28";
const EXT = "io.modelcontextprotocol/tasks";
const meta = (tasks = true) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { [EXT]: {} } } : {},
  "io.modelcontextprotocol/clientInfo": { name: "tasks-raw", version: "1" },
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const LOOP = "while True:\n    pass\n";

// One mcp-exec over stdio with a state dir of its own, spoken to raw.
class Stdio {
  constructor(state, rules = env.rules) {
    this.state = state;
    this.id = 1;
    this.waiting = new Map();
    this.seen = [];	// every message, for waitFor
    this.watchers = [];
    this.proc = spawn(env.mcpExec, ["--stdio", "--rules", rules, "--state-dir", state], {
      stdio: ["pipe", "pipe", env.stderr ? openSync(env.stderr, "a") : "inherit"],
    });
    this.exited = new Promise((r) => this.proc.on("exit", (code, sig) => r(code ?? sig)));
    createInterface({ input: this.proc.stdout }).on("line", (l) => {
      const m = JSON.parse(l);
      if (m.id !== undefined && m.method === undefined && this.waiting.has(m.id)) {
        this.waiting.get(m.id)(m);
        this.waiting.delete(m.id);
      }
      this.seen.push(m);
      for (const w of this.watchers.splice(0)) w();
    });
  }
  // Requests may be outstanding together (tasks/result blocks).
  rpc(method, params) {
    const id = this.id++;
    const p = new Promise((r) => this.waiting.set(id, r));
    this.proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    return p;
  }
  send(msg) {
    this.proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
  }
  // The first message (seen already or to come) that pred takes.
  async waitFor(pred, what, ms = 10000) {
    const end = Date.now() + ms;
    for (;;) {
      const m = this.seen.find(pred);
      if (m) return m;
      if (Date.now() > end) assert.fail(`stdio: no ${what}`);
      await new Promise((r) => { this.watchers.push(r); setTimeout(r, 100); });
    }
  }
  async init() {
    const r = await this.rpc("initialize", { protocolVersion: "2025-11-25", capabilities: {},
      clientInfo: { name: "tasks-raw", version: "1" } });
    this.proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    return r;
  }
}

// The audit records of one task, once auditd has them.
async function records(taskId, event) {
  for (let i = 0; i < 200; i++) {
    const recs = readdirSync(env.auditLog).filter((f) => /^audit-.*\.log$/.test(f))
      .flatMap((f) => readFileSync(join(env.auditLog, f), "utf8").split("\n"))
      .filter((l) => l.includes(`"event":"${event}"`) && l.includes(taskId)).map((l) => JSON.parse(l))
      .filter((e) => e.task_id === taskId);
    if (recs.length > 0) return recs;
    await sleep(50);
  }
  assert.fail(`no ${event} for task ${taskId}`);
}

// How a cancelled task's code ended: stopped while it ran (code_execution,
// cancelled), or, when the cancel beat the audit ack, never run at all
// (call_refused) -- both records name the task.
async function stopped(taskId) {
  for (let i = 0; i < 200; i++) {
    const recs = readdirSync(env.auditLog).filter((f) => /^audit-.*\.log$/.test(f))
      .flatMap((f) => readFileSync(join(env.auditLog, f), "utf8").split("\n"))
      .filter((l) => l.includes(taskId)).map((l) => JSON.parse(l))
      .filter((e) => e.task_id === taskId &&
        (e.event === "code_execution" || e.event === "call_refused"));
    if (recs.length > 0) return recs[0];
    await sleep(50);
  }
  assert.fail(`task ${taskId}: its code was not stopped`);
}

// What two results of the same code share: all but the time it took.
const same = (sc) => { const { duration_ms, ...rest } = sc; return rest; };

let dir, s;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), "stockade-tasks-"));
  chmodSync(dir, 0o711);	// sandbox uids reach their state below
  s = new Stdio(join(dir, "state"));
  await s.init();
});
after(async () => {
  if (s) {
    s.proc.stdin.end();
    assert.equal(await s.exited, 0, "mcp-exec exits 0 when stdin closes");
  }
  rmSync(dir, { recursive: true, force: true });
});

test("stdio 2025-11-25: advertised, created at once, result equals a direct call's", async () => {
  const init = await s.init();
  assert.deepEqual(init.result.capabilities.tasks,
    { list: {}, cancel: {}, requests: { tools: { call: {} } } });
  const tools = (await s.rpc("tools/list", {})).result.tools;
  const ex = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
  assert.equal(ex.execute_python, "optional");
  assert.equal(ex.close_session, undefined);

  const code = "import time\ntime.sleep(0.4)\nprint(6 * 7)";
  const direct = await s.rpc("tools/call", { name: "execute_python", arguments: { code } });
  const sid = direct.result.structuredContent.session_id;
  const created = await s.rpc("tools/call", { name: "execute_python",
    arguments: { code, session_id: sid }, task: { ttl: 60000 } });
  const task = created.result.task;
  assert.match(task.taskId, /^[0-9a-f]{32}$/);
  assert.equal(task.status, "working");
  assert.equal(task.ttl, 60000);
  assert.ok(task.pollInterval > 0);
  assert.ok(!Number.isNaN(Date.parse(task.createdAt)));
  const got = await s.rpc("tasks/get", { taskId: task.taskId });
  assert.equal(got.result.status, "working");
  const res = await s.rpc("tasks/result", { taskId: task.taskId });
  assert.deepEqual(same(res.result.structuredContent), same(direct.result.structuredContent));
  assert.deepEqual(res.result.content.length, direct.result.content.length);
  assert.equal(res.result._meta["io.modelcontextprotocol/related-task"].taskId, task.taskId);
  // The optional notifications/tasks/status, on the connection that made
  // the task: the whole task, without related-task (the spec's SHOULD NOT).
  const st = await s.waitFor((m) => m.method === "notifications/tasks/status" &&
    m.params.taskId === task.taskId, "notifications/tasks/status");
  assert.equal(st.params.status, "completed");
  assert.equal(st.params.ttl, 60000);
  assert.equal(st.params._meta, undefined);
  assert.equal((await s.rpc("tasks/get", { taskId: task.taskId })).result.status, "completed");
  const list = await s.rpc("tasks/list", {});
  assert.ok(list.result.tasks.some((t) => t.taskId === task.taskId));
  const bad = await s.rpc("tasks/list", { cursor: "nope" });
  assert.equal(bad.error.code, -32602);
  // The record is on disk, bound to its principal.
  const rec = JSON.parse(readFileSync(join(s.state, "tasks", task.taskId), "utf8"));
  assert.equal(rec.status, "completed");
  assert.equal(rec.tool, "execute_python");
  const [ev] = await records(task.taskId, "code_execution");
  assert.equal(ev.session_id, sid);
  // A tool that does not run as a task says so.
  const no = await s.rpc("tools/call", { name: "close_session", arguments: { session_id: sid }, task: {} });
  assert.equal(no.error.code, -32601);
  await s.rpc("tools/call", { name: "close_session", arguments: { session_id: sid } });
});

test("stdio 2025-11-25: tasks/cancel stops the code, audited with the task id", async () => {
  const created = await s.rpc("tools/call", { name: "execute_python", arguments: { code: LOOP }, task: {} });
  const id = created.result.task.taskId;
  assert.equal(created.result.task.ttl, 3600000, "no ttl asked: the server's longest");
  const [started] = await records(id, "execution_started");
  assert.equal(started.task_id, id);
  await sleep(300);	// running by now, as a rule
  const waiting = s.rpc("tasks/result", { taskId: id });
  const c = await s.rpc("tasks/cancel", { taskId: id });
  assert.equal(c.result.status, "cancelled");
  const r = await waiting;
  assert.equal(r.error.code, -32603);
  assert.match(r.error.message, /cancelled/);
  const st = await s.waitFor((m) => m.method === "notifications/tasks/status" &&
    m.params.taskId === id, "notifications/tasks/status");
  assert.equal(st.params.status, "cancelled");
  assert.match(st.params.statusMessage, /cancelled/);
  const done = await stopped(id);
  if (done.event === "code_execution") assert.equal(done.cancelled, true, "the loop was stopped");
  else assert.equal(done.reason, "cancelled before it ran");
  assert.equal((await s.rpc("tasks/get", { taskId: id })).result.status, "cancelled");
  const again = await s.rpc("tasks/cancel", { taskId: id });
  assert.equal(again.error.code, -32602);
  assert.match(again.error.message, /terminal status 'cancelled'/);
});

test("stdio 2025-11-25: a task goes when its ttl has passed", async () => {
  const created = await s.rpc("tools/call", { name: "run_command",
    arguments: { command: "python-version", args: ["--version"] }, task: { ttl: 1000 } });
  const id = created.result.task.taskId;
  assert.equal(created.result.task.ttl, 1000);
  await s.rpc("tasks/result", { taskId: id });
  await sleep(1100);
  const r = await s.rpc("tasks/get", { taskId: id });
  assert.equal(r.error.code, -32602);
  assert.equal(r.error.message, "Failed to retrieve task: Task not found");
});

test("stdio: a task whose ttl runs out while its code runs is reported, and its listener ends", async () => {
  const created = await s.rpc("tools/call", { name: "execute_python",
    arguments: { code: LOOP }, task: { ttl: 1000 } });
  const id = created.result.task.taskId;
  const waiting = s.rpc("tasks/result", { taskId: id });
  s.send({ id: "exp-1", method: "subscriptions/listen",
    params: { notifications: { taskIds: [id] }, _meta: meta() } });
  const ack = await s.waitFor((x) => x.method === "notifications/subscriptions/acknowledged" &&
    subOf(x) === "exp-1", "ack");
  assert.deepEqual(ack.params.notifications, { taskIds: [id] });
  // The sweep runs every 5 s: the task is reported within one round.
  const note = await s.waitFor((x) => x.method === "notifications/tasks" && subOf(x) === "exp-1",
    "the expired task's notification", 15000);
  assert.equal(note.params.taskId, id);
  assert.equal(note.params.status, "failed");
  assert.match(note.params.statusMessage, /ttl ran out/);
  // Its only task has ended: the subscription ends too, not at max_lifetime_s.
  const closing = await s.waitFor((x) => x.id === "exp-1" && x.method === undefined, "closing result");
  assert.equal(closing.result.resultType, "complete");
  assert.match((await waiting).error.message, /ttl ran out/);
  const gone = await s.rpc("tasks/get", { taskId: id });
  assert.equal(gone.error.message, "Failed to retrieve task: Task not found");
});

test("stdio 2026-07-28: the extension's task, polled to its result; without it, a direct answer", async () => {
  const d = await s.rpc("server/discover", { _meta: meta() });
  assert.deepEqual(d.result.capabilities.extensions[EXT], {});
  const code = "print(6 * 7)";
  const direct = await s.rpc("tools/call", { name: "execute_python", arguments: { code }, _meta: meta(false) });
  assert.equal(direct.result.resultType, "complete");
  const sid = direct.result.structuredContent.session_id;
  const created = await s.rpc("tools/call", { name: "execute_python",
    arguments: { code, session_id: sid }, _meta: meta() });
  assert.equal(created.result.resultType, "task");
  assert.equal(created.result.status, "working");
  assert.ok(created.result.ttlMs > 0 && created.result.pollIntervalMs > 0);
  const id = created.result.taskId;
  let t;
  for (let i = 0; i < 100; i++) {
    t = (await s.rpc("tasks/get", { taskId: id, _meta: meta() })).result;
    assert.equal(t.resultType, "complete");
    if (t.status !== "working") break;
    await sleep(100);
  }
  assert.equal(t.status, "completed");
  assert.deepEqual(same(t.result.structuredContent), same(direct.result.structuredContent));
  const u = await s.rpc("tasks/update", { taskId: id, inputResponses: {}, _meta: meta() });
  assert.equal(u.result.resultType, "complete");
  // Not a 2025-11-25 method in this era.
  assert.equal((await s.rpc("tasks/result", { taskId: id, _meta: meta() })).error.code, -32601);

  const loop = await s.rpc("tools/call", { name: "execute_python", arguments: { code: LOOP }, _meta: meta() });
  const lid = loop.result.taskId;
  await records(lid, "execution_started");
  await sleep(300);
  const c = await s.rpc("tasks/cancel", { taskId: lid, _meta: meta() });
  assert.equal(c.result.resultType, "complete");
  assert.equal((await s.rpc("tasks/get", { taskId: lid, _meta: meta() })).result.status, "cancelled");
  // This era pushes only what a subscription asked for: no tasks/status.
  assert.ok(!s.seen.some((m) => m.method?.startsWith("notifications/tasks") &&
    [id, lid].includes(m.params.taskId)), "2026-07-28 tasks are not pushed unasked");
  const done = await stopped(lid);
  assert.ok(done.cancelled === true || done.reason === "cancelled before it ran");
  await s.rpc("tools/call", { name: "close_session", arguments: { session_id: sid }, _meta: meta() });
});

test("stdio: a restart fails the tasks that were running, with the reason", async () => {
  const state = join(dir, "state-restart");
  let one = new Stdio(state);
  await one.init();
  const created = await one.rpc("tools/call", { name: "execute_python",
    arguments: { code: "import time\ntime.sleep(60)" }, task: {} });
  const id = created.result.task.taskId;
  await records(id, "execution_started");
  // Stopped as a client stops it (stdin closes) while the task runs.
  one.proc.stdin.end();
  assert.equal(await one.exited, 0);
  one = new Stdio(state);
  await one.init();
  const t = (await one.rpc("tasks/get", { taskId: id })).result;
  assert.equal(t.status, "failed");
  assert.match(t.statusMessage, /restarted/);
  const r = await one.rpc("tasks/result", { taskId: id });
  assert.equal(r.error.code, -31004);	// lost with its node, typed
  assert.equal(r.error.data.reason, "lost_with_node");
  assert.match(r.error.message, /restarted/);
  one.proc.stdin.end();
  assert.equal(await one.exited, 0);
});

test("stdio: past server.tasks.max_per_principal a task is refused, saying which limit", async () => {
  const rules = join(dir, "rules-limit");
  cpSync(env.rules, rules, { recursive: true });
  const conf = join(rules, "mcp-exec.yaml");
  const text = readFileSync(conf, "utf8");
  assert.match(text, /^  tasks:$/m);
  writeFileSync(conf, text.replace(/^(    max_per_principal:) \d+(\s+# tasks kept for one principal)$/m, "$1 1$2"));
  const one = new Stdio(join(dir, "state-limit"), rules);
  await one.init();
  const call = { name: "run_command", arguments: { command: "python-version", args: ["--version"] }, task: {} };
  const first = await one.rpc("tools/call", call);
  assert.equal(first.result.task.status, "working");
  const second = await one.rpc("tools/call", call);
  assert.equal(second.error.code, -32600);
  assert.match(second.error.message, /too many tasks of yours \(1\)/);
  one.proc.stdin.end();
  assert.equal(await one.exited, 0);
});

// ------------------------------------------------------------ SDK v1

test("SDK v1 (stdio): callToolStream runs a task to the direct call's result", async () => {
  const client = await connectStdio(env.rules, join(dir, "state-sdk"));
  try {
    await client.listTools();	// learns execution.taskSupport
    // The SDK takes 2025-11-25's optional status push as what it is.
    const pushed = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => pushed.push(n.params));
    const code = "print(sum(range(10)))";
    const direct = await client.callTool({ name: "execute_python", arguments: { code } });
    const sid = direct.structuredContent.session_id;
    const seen = [];
    let result;
    for await (const m of client.experimental.tasks.callToolStream(
      { name: "execute_python", arguments: { code, session_id: sid } }, undefined, { task: { ttl: 30000 } })) {
      seen.push(m.type);
      if (m.type === "result") result = m.result;
      if (m.type === "error") throw m.error;
    }
    assert.equal(seen[0], "taskCreated");
    for (let i = 0; i < 50 && pushed.length === 0; i++) await sleep(20);
    assert.equal(pushed[0]?.status, "completed", "notifications/tasks/status reached the SDK client");
    assert.deepEqual(same(result.structuredContent), same(direct.structuredContent));
    const { tasks } = await client.experimental.tasks.listTasks();
    assert.ok(tasks.length >= 1 && tasks.every((t) => /^[0-9a-f]{32}$/.test(t.taskId)));
    await client.callTool({ name: "close_session", arguments: { session_id: sid } });
  } finally {
    await client.close();
  }
});

test("SDK v1 (HTTP): tasks of one principal are unknown to another", async () => {
  const a = await connectHttp(http.tokenA);
  const b = await connectHttp(http.tokenB);
  try {
    await a.client.listTools();
    let id;
    for await (const m of a.client.experimental.tasks.callToolStream(
      { name: "run_command", arguments: { command: "python-version", args: ["--version"] } }, undefined, { task: {} })) {
      if (m.type === "taskCreated") id = m.task.taskId;
      if (m.type === "error") throw m.error;
      if (m.type === "result") assert.match(m.result.structuredContent.stdout, /Python/);
    }
    assert.equal((await a.client.experimental.tasks.getTask(id)).status, "completed");
    const unknown = await b.client.experimental.tasks.getTask("0".repeat(32)).catch((e) => e);
    for (const op of [
      () => b.client.experimental.tasks.getTask(id),
      () => b.client.experimental.tasks.getTaskResult(id),
      () => b.client.experimental.tasks.cancelTask(id),
    ]) {
      const e = await op().catch((err) => err);
      assert.equal(e.code, -32602);
      assert.equal(e.message, unknown.message, "no oracle: as an unknown id");
    }
    const { tasks } = await b.client.experimental.tasks.listTasks();
    assert.ok(!tasks.some((t) => t.taskId === id));
  } finally {
    await a.client.close();
    await b.client.close();
  }
});

// ------------------------------------------------------------ HTTP raw

async function post(method, params, token = http.tokenA) {
  const h = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    Authorization: `Bearer ${token}`,
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": method,
  };
  if (params.name !== undefined) h["Mcp-Name"] = params.name;
  if (params.taskId !== undefined) h["Mcp-Name"] = params.taskId;
  const res = await fetch(http.url, { method: "POST", headers: h,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const text = await res.text();
  const data = res.headers.get("content-type")?.startsWith("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data: ")).pop().slice(6) : text;
  return { status: res.status, msg: JSON.parse(data) };
}

test("HTTP 2026-07-28: a task outlives its request; another principal cannot see it", async () => {
  const created = await post("tools/call", { name: "run_command",
    arguments: { command: "python-version", args: ["--version"] }, _meta: meta() });
  assert.equal(created.status, 200);
  assert.equal(created.msg.result.resultType, "task");
  const id = created.msg.result.taskId;
  let t;
  for (let i = 0; i < 100; i++) {
    t = (await post("tasks/get", { taskId: id, _meta: meta() })).msg.result;
    if (t.status !== "working") break;
    await sleep(100);
  }
  assert.equal(t.status, "completed");
  assert.match(t.result.structuredContent.stdout, /Python/);
  // The extension's methods are for clients that declare it.
  const undeclared = await post("tasks/get", { taskId: id, _meta: meta(false) });
  assert.equal(undeclared.status, 400);
  assert.equal(undeclared.msg.error.code, -32021);
  assert.deepEqual(undeclared.msg.error.data.requiredCapabilities, { extensions: { [EXT]: {} } });
  const unknown = await post("tasks/get", { taskId: "f".repeat(32), _meta: meta() }, http.tokenB);
  for (const m of ["tasks/get", "tasks/cancel", "tasks/update"]) {
    const r = await post(m, { taskId: id, inputResponses: {}, _meta: meta() }, http.tokenB);
    assert.deepEqual(r.msg.error, unknown.msg.error, m);
  }
});

// ------------------------------------------------------------ subscriptions/listen

const SUB = "io.modelcontextprotocol/subscriptionId";
const subOf = (m) => (m.params ?? m.result)?._meta?.[SUB];

// A subscriptions/listen POST read as its SSE stream comes: msgs fills
// as events arrive; next(pred) waits for one; close() is the client's
// cancel (the stream closing); done resolves when the server ends it.
async function listenHttp(notifications, { token = http.tokenA, id = "sub-1", m = meta(),
  accept = "application/json, text/event-stream" } = {}) {
  const ac = new AbortController();
  const res = await fetch(http.url, { method: "POST", signal: ac.signal, headers: {
    "Content-Type": "application/json", Accept: accept, Authorization: `Bearer ${token}`,
    "MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "subscriptions/listen",
      params: { notifications, _meta: m } }) });
  const l = { status: res.status, msgs: [], watchers: [], close: () => ac.abort() };
  const wake = () => { for (const w of l.watchers.splice(0)) w(); };
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
    l.msgs.push(JSON.parse(await res.text()));
    l.done = Promise.resolve();
  } else {
    l.done = (async () => {
      const dec = new TextDecoder();
      let buf = "";
      try {
        for await (const chunk of res.body) {
          buf += dec.decode(chunk, { stream: true });
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const ev = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const data = ev.split("\n").find((x) => x.startsWith("data: "));
            if (data) l.msgs.push(JSON.parse(data.slice(6)));
            wake();
          }
        }
      } catch (e) {
        if (e.name !== "AbortError") throw e;
      }
      l.ended = true;
      wake();
    })();
  }
  l.next = async (pred, what, ms = 10000) => {
    const end = Date.now() + ms;
    for (;;) {
      const x = l.msgs.find(pred);
      if (x) return x;
      if (l.ended || Date.now() > end) assert.fail(`listen: no ${what}; got ${JSON.stringify(l.msgs)}`);
      await new Promise((r) => { l.watchers.push(r); setTimeout(r, 100); });
    }
  };
  return l;
}

const QUICK = { name: "run_command", arguments: { command: "python-version", args: ["--version"] } };

test("HTTP 2026-07-28: a listener hears its own tasks complete and get cancelled, never another's", async () => {
  const mine = (await post("tools/call", { ...QUICK, _meta: meta() })).msg.result.taskId;
  const loop = (await post("tools/call", { name: "execute_python", arguments: { code: LOOP },
    _meta: meta() })).msg.result.taskId;
  const theirs = (await post("tools/call", { ...QUICK, _meta: meta() }, http.tokenB)).msg.result.taskId;
  assert.ok(mine && loop && theirs);

  const open = [];	// closed whatever happens: an open stream keeps node running
  try {
    const l = await listenHttp({ taskIds: [mine, loop, theirs, "0".repeat(32)], toolsListChanged: true });
    open.push(l);
    assert.equal(l.status, 200);
    const ack = await l.next((x) => x.method === "notifications/subscriptions/acknowledged", "ack");
    assert.equal(l.msgs[0], ack, "the acknowledgement comes first");
    assert.equal(subOf(ack), "sub-1");
    // Only the caller's own live tasks; list kinds are not served: omitted.
    assert.deepEqual(ack.params.notifications, { taskIds: [mine, loop] });
    const done = await l.next((x) => x.method === "notifications/tasks" && x.params.taskId === mine, "completion");
    assert.equal(subOf(done), "sub-1");
    assert.equal(done.params.status, "completed");
    assert.match(done.params.result.structuredContent.stdout, /Python/);
    assert.ok(done.params.ttlMs > 0 && done.params.pollIntervalMs > 0);

    // Another principal listening for this one's task is told of none.
    const b = await listenHttp({ taskIds: [loop] }, { token: http.tokenB, id: 7 });
    open.push(b);
    assert.deepEqual((await b.next((x) => x.method !== undefined, "ack")).params.notifications, {});
    // Their task ends (before ours is cancelled): nothing of it here.
    for (let i = 0; i < 100; i++) {
      if ((await post("tasks/get", { taskId: theirs, _meta: meta() }, http.tokenB)).msg.result.status !== "working") break;
      await sleep(100);
    }
    await records(loop, "execution_started");
    assert.equal((await post("tasks/cancel", { taskId: loop, _meta: meta() })).msg.result.resultType, "complete");
    const cancelled = await l.next((x) => x.params?.taskId === loop, "cancellation");
    assert.equal(cancelled.params.status, "cancelled");
    // Every task of it has ended: the server closes it, gracefully.
    const closing = await l.next((x) => x.id === "sub-1", "closing result");
    assert.deepEqual([closing.result.resultType, subOf(closing)], ["complete", "sub-1"]);
    await l.done;
    assert.ok(!JSON.stringify(l.msgs).includes(theirs), "another principal's task never shows");
    assert.ok(!JSON.stringify(b.msgs).includes(loop));
    b.close();
    await b.done;

    // The reply is a stream: a client that takes only JSON is told so.
    const json = await listenHttp({}, { accept: "application/json" });
    assert.equal(json.status, 406);
    assert.match(json.msgs[0].error.message, /text\/event-stream/);
  } finally {
    for (const x of open) x.close();
    await Promise.all(open.map((x) => x.done));
  }
});

test("stdio 2026-07-28: listen on stdout, the listener cap, unserved kinds, cancel, shutdown", async () => {
  const rules = join(dir, "rules-listen");
  cpSync(env.rules, rules, { recursive: true });
  const conf = join(rules, "mcp-exec.yaml");
  const text = readFileSync(conf, "utf8");
  assert.match(text, /^  listen:/m);
  writeFileSync(conf, text.replace(/^(    max_per_principal:) \d+(\s+# open streams of one principal)$/m, "$1 1$2"));
  const one = new Stdio(join(dir, "state-listen"), rules);
  try {
    const listen = (id, notifications, m = meta()) =>
      one.send({ id, method: "subscriptions/listen", params: { notifications, _meta: m } });
    const reply = (id) => one.waitFor((x) => x.id === id && x.method === undefined, `reply to ${id}`);

    // Kinds we do not serve are left out of the acknowledgement (our lists
    // never change); the stream stays open all the same.
    listen("s-1", { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true,
      resourceSubscriptions: ["stockade://sessions"] });
    const ack = await one.waitFor((x) => x.method === "notifications/subscriptions/acknowledged" &&
      subOf(x) === "s-1", "ack");
    assert.deepEqual(ack.params.notifications, {});
    // Past server.listen.max_per_principal: refused, naming the limit.
    listen("s-2", {});
    const full = await reply("s-2");
    assert.equal(full.error.code, -32600);
    assert.match(full.error.message, /too many open subscriptions\/listen streams of yours \(1, server\.listen\.max_per_principal\)/);
    // Task notifications are for who declares the extension.
    listen("s-3", { taskIds: ["0".repeat(32)] }, meta(false));
    const undeclared = await reply("s-3");
    assert.equal(undeclared.error.code, -32021);
    assert.deepEqual(undeclared.error.data.requiredCapabilities, { extensions: { [EXT]: {} } });
    // Cancelling s-1 frees its place, without a reply to it.
    one.send({ method: "notifications/cancelled", params: { requestId: "s-1" } });
    const t = (await one.rpc("tools/call", { ...QUICK, _meta: meta() })).result.taskId;
    listen("s-4", { taskIds: [t] });
    const note = await one.waitFor((x) => x.method === "notifications/tasks" && subOf(x) === "s-4", "task");
    assert.equal(note.params.status, "completed");
    assert.equal((await reply("s-4")).result._meta[SUB], "s-4");
    assert.equal(one.seen.find((x) => x.id === "s-1"), undefined, "a cancelled listen is not answered");
    // Open at shutdown: the closing result comes before mcp-exec exits.
    listen("s-5", {});
    await one.waitFor((x) => subOf(x) === "s-5", "ack of s-5");
    one.proc.kill("SIGTERM");
    assert.equal(await one.exited, 0);
    assert.equal(one.seen.find((x) => x.id === "s-5")?.result?.resultType, "complete");
  } finally {
    one.proc.kill("SIGKILL");	// gone already when all went well
  }
});
