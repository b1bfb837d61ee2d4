// Honest failures (issue 11, point 5), with the official SDK client: an
// OOM, a timeout, a cancellation and a crash of the interpreter each come
// back, and go in the audit record, as what they are.  Runs its own
// mcp-exec on a copy of the rules with a small memory limit.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync,
  rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectStdio, env } from "./lib.mjs";

let client, dir;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "stockade-failures-"));
  chmodSync(dir, 0o711);
  cpSync(env.rules, join(dir, "rules"), { recursive: true });
  const prof = join(dir, "rules", "profiles", "default.yaml");
  const text = readFileSync(prof, "utf8").replace(/^  memory: .*$/m, "  memory: 96M");
  assert.match(text, /memory: 96M/);
  writeFileSync(prof, text);
  client = await connectStdio(join(dir, "rules"), join(dir, "state"));
});
after(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

const py = (code, extra = {}, options = {}) =>
  client.callTool({ name: "execute_python", arguments: { code, ...extra } },
    undefined, options);

// The code_execution record of a session's last call, once auditd has it.
async function audited(sid) {
  for (let i = 0; i < 100; i++) {
    const recs = readdirSync(env.auditLog).filter((f) => /^audit-.*\.log$/.test(f))
      .flatMap((f) => readFileSync(join(env.auditLog, f), "utf8").split("\n"))
      .filter((l) => l.includes(sid) && l.includes('"code_execution"'))
      .map((l) => JSON.parse(l));
    if (recs.length > 0) return recs[recs.length - 1];
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`no code_execution for ${sid} in the audit trail`);
}

test("an OOM says the code ran out of memory, with the limit", async () => {
  const r = await py("x = b'\\x01' * (400 << 20)\nprint(len(x))");
  const s = r.structuredContent;
  assert.equal(r.isError, true);
  assert.equal(s.oom_killed, true);
  assert.equal(s.end, "oom");
  assert.equal(s.memory_limit_mb, 96);
  assert.match(s.message, /ran out of memory: the sandbox's memory limit is 96 MiB/);
  assert.ok(r.content.some((c) => /ran out of memory/.test(c.text)));
  assert.ok(!r.content.some((c) => /did not stop when interrupted/.test(c.text)));
  const a = await audited(s.session_id);
  assert.equal(a.oom_killed, true);
  assert.equal(a.end, "oom");
  assert.equal(a.memory_limit_mb, 96);
  assert.equal(a.reason, "the code ran out of memory");
  const again = await py("print(1)", { session_id: s.session_id });
  assert.match(again.content[0].text, /session not found/);
});

test("a timeout says so, whether or not the code stopped", async () => {
  const r = await py("import time\nwhile True: time.sleep(0.05)", { timeout_ms: 600 });
  const s = r.structuredContent;
  assert.equal(s.end, "timeout");
  assert.equal(s.oom_killed, false);
  assert.equal(s.session_lost, false);
  assert.match(s.message, /ran past its timeout of 600 ms and was interrupted/);
  assert.equal((await audited(s.session_id)).end, "timeout");
  const k = await py("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass",
    { timeout_ms: 300 });
  assert.equal(k.structuredContent.end, "timeout");
  assert.equal(k.structuredContent.session_lost, true);
  assert.match(k.structuredContent.message, /timeout of 300 ms and did not stop when interrupted/);
  const a = await audited(k.structuredContent.session_id);
  assert.equal(a.end, "timeout");
  assert.equal(a.session_lost, true);
});

test("a crash of the interpreter is reported as a crash", async () => {
  const r = await py("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)");
  const s = r.structuredContent;
  assert.equal(r.isError, true);
  assert.equal(s.end, "crash");
  assert.equal(s.oom_killed, false);
  assert.match(s.message, /Python interpreter crashed \(killed by signal 11\)/);
  const a = await audited(s.session_id);
  assert.equal(a.end, "crash");
  assert.equal(a.crash_status, 128 + 11);
  assert.equal(a.reason, "the session's Python process ended");
});

test("a cancelled call is audited as cancelled", async () => {
  const first = await py("w = 1");
  const sid = first.structuredContent.session_id;
  const ac = new AbortController();
  const p = py("import time\ntime.sleep(30)", { session_id: sid }, { signal: ac.signal });
  setTimeout(() => ac.abort("changed my mind"), 500);
  await assert.rejects(p);
  for (let i = 0; i < 100; i++) {
    const a = await audited(sid);
    if (a.end === "cancelled") {
      assert.equal(a.cancelled, true);
      assert.equal(a.oom_killed, false);
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail("the cancelled call was not audited as cancelled");
});
