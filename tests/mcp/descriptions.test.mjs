// Tool descriptions and instructions tell the truth about the profile
// (issue 11, point 7): network level and what is reachable, limits, input
// roots, collected types.  With the official SDK client; the L2 and
// loopback servers run on copies of the rules in a scratch directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync,
  writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectStdio, env } from "./lib.mjs";

async function described(rules = env.rules, state = env.state) {
  const client = await connectStdio(rules, state);
  try {
    const { tools } = await client.listTools();
    return { py: tools.find((t) => t.name === "execute_python").description,
      rc: tools.find((t) => t.name === "run_command")?.description,
      instructions: client.getInstructions() };
  } finally {
    await client.close();
  }
}

// A copy of the test rules whose profile uses network `net`.
async function withNetwork(net, fn) {
  const dir = mkdtempSync(join(tmpdir(), "stockade-descr-"));
  chmodSync(dir, 0o711);
  try {
    cpSync(env.rules, join(dir, "rules"), { recursive: true });
    const prof = join(dir, "rules", "profiles", "default.yaml");
    const text = readFileSync(prof, "utf8").replace(/^network: .*$/m, `network: ${net}`);
    assert.match(text, new RegExp(`^network: ${net}$`, "m"));
    writeFileSync(prof, text);
    await fn(await described(join(dir, "rules"), join(dir, "state")));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the default profile: no network, its limits, roots and types", async () => {
  const d = await described();
  for (const text of [d.py, d.instructions]) {
    assert.match(text, /with network: no network/);
    assert.match(text, /512 MiB of memory/);
    assert.match(text, /timeout 10000 ms by default and at most 60000 ms/);
    assert.ok(text.includes(`host paths beneath ${env.inputs}`), text);
    assert.match(text, /one of png, jpeg, svg, csv, json, txt, html, pdf, npy, npz, parquet, xlsx, zip, md \(at most 8 MiB each\); list_files and read_file reach every other file there/);
  }
  assert.match(d.rc, /with network: no network/);
});

test("an L2 profile says what it can reach, not 'no network'", async () => {
  await withNetwork("mirror", (d) => {
    for (const text of [d.py, d.rc, d.instructions]) {
      assert.doesNotMatch(text, /no network|without network/);
      assert.match(text, /L2 \(egress policy 'mirror'\): only pypi\.org files\.pythonhosted\.org \(ports 443\)/);
    }
  });
});

test("a loopback profile says loopback only", async () => {
  await withNetwork("loopback", (d) => {
    assert.match(d.py, /with network: loopback only/);
    assert.doesNotMatch(d.instructions, /no network/);
  });
});
