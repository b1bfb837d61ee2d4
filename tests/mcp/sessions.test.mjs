// Sessions under their caps (issue 11, point 1), with the official SDK
// client: clients that never pass session_id must never be refused for
// sessions nobody uses, and the caps must still hold when every session is
// busy.  Each test runs its own mcp-exec on a copy of the rules with small
// caps, in a scratch directory of its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync,
  rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectStdio, env } from "./lib.mjs";

// A copy of the test rules with server.sessions capped as given.
function cappedRules(total, perPrincipal) {
  const dir = mkdtempSync(join(tmpdir(), "stockade-sessions-"));
  chmodSync(dir, 0o711);
  cpSync(env.rules, join(dir, "rules"), { recursive: true });
  const conf = join(dir, "rules", "mcp-exec.yaml");
  const text = readFileSync(conf, "utf8")
    .replace(/^    max_total: .*$/m, `    max_total: ${total}`)
    .replace(/^    max_per_principal: .*$/m, `    max_per_principal: ${perPrincipal}`);
  assert.match(text, new RegExp(`max_total: ${total}\\n`));
  writeFileSync(conf, text);
  // No warm pool: its sandbox is nobody's session, and these tests count
  // the sessions' sandboxes.
  const prof = join(dir, "rules", "profiles", "default.yaml");
  const unpooled = readFileSync(prof, "utf8").replace(/^pool:\n  size: \d+\n/m, "");
  assert.doesNotMatch(unpooled, /^pool:/m);
  writeFileSync(prof, unpooled);
  return { dir, rules: join(dir, "rules"), state: join(dir, "state") };
}

const live = (state) => readdirSync(join(state, "sandboxes")).length;

test("100 one-shot calls from one principal all run, with at most the cap live", async () => {
  const t = cappedRules(32, 3);
  const client = await connectStdio(t.rules, t.state);
  try {
    const ids = [];
    for (let i = 0; i < 100; i++) {
      const r = await client.callTool({ name: "execute_python",
        arguments: { code: `print(${i})` } });
      assert.equal(r.isError, false, `call ${i}: ${r.content[0].text}`);
      assert.equal(r.structuredContent.stdout, `${i}\n`);
      ids.push(r.structuredContent.session_id);
      assert.ok(live(t.state) <= 3, `call ${i}: ${live(t.state)} sandboxes live`);
    }
    // The least recently used went first: the oldest are gone, the
    // newest three still answer.
    const old = await client.callTool({ name: "execute_python",
      arguments: { code: "print(1)", session_id: ids[0] } });
    assert.equal(old.isError, true);
    assert.match(old.content[0].text, /session not found/);
    for (const sid of ids.slice(-3)) {
      const r = await client.callTool({ name: "execute_python",
        arguments: { code: "print('kept')", session_id: sid } });
      assert.equal(r.structuredContent.stdout, "kept\n");
    }
    // A session in use is recent: a new call evicts another, not it.
    const keep = ids[97];
    await client.callTool({ name: "execute_python",
      arguments: { code: "x = 1", session_id: keep } });
    await client.callTool({ name: "execute_python", arguments: { code: "pass" } });
    await client.callTool({ name: "execute_python", arguments: { code: "pass" } });
    const r = await client.callTool({ name: "execute_python",
      arguments: { code: "print(x)", session_id: keep } });
    assert.equal(r.structuredContent.stdout, "1\n");
  } finally {
    await client.close();
    rmSync(t.dir, { recursive: true, force: true });
  }
});

test("20 busy sessions hold the cap; the 21st call is refused as busy", async () => {
  const t = cappedRules(20, 20);
  const client = await connectStdio(t.rules, t.state);
  const running = new Set();
  const calls = [];
  try {
    let ready;
    const allUp = new Promise((resolve) => { ready = resolve; });
    for (let i = 0; i < 20; i++)
      calls.push(client.callTool({ name: "execute_python", arguments: {
        code: "print('up', flush=True)\nimport time\ntime.sleep(55)",
        timeout_ms: 60000 } }, undefined, {
        timeout: 120000,
        onprogress: () => { running.add(i); if (running.size === 20) ready(); },
      }).catch(() => null));
    await allUp;
    assert.equal(live(t.state), 20);
    const r = await client.callTool({ name: "execute_python",
      arguments: { code: "print('one too many')" } });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text,
      /session limit reached: all 20 sessions .* are busy/);
    assert.equal(live(t.state), 20);
  } finally {
    await client.close();		// ends the sleepers with the server
    await Promise.all(calls);
    rmSync(t.dir, { recursive: true, force: true });
  }
});
