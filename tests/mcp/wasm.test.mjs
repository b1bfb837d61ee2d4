// The wasm runtime with the official SDK client (issue 37): a session on a
// `runtime: wasm` profile keeps its state, answers in the same shape as
// the other runtimes, and its tool description says what it can import.
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync,
  writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { connectStdio, env } from "./lib.mjs";

// The test rules with the default profile on the wasm runtime, and the
// build's driver directory, where make put Pyodide.
function wasmRules() {
  const dir = mkdtempSync(join(tmpdir(), "stockade-wasm-"));
  chmodSync(dir, 0o711);
  cpSync(env.rules, join(dir, "rules"), { recursive: true });
  const conf = join(dir, "rules", "mcp-exec.yaml");
  const driver = join(dirname(env.mcpExec), "share", "stockade", "driver");
  writeFileSync(conf, readFileSync(conf, "utf8")
    .replace(/^  driver_dir: .*$/m, `  driver_dir: ${driver}`));
  const prof = join(dir, "rules", "profiles", "default.yaml");
  writeFileSync(prof, readFileSync(prof, "utf8")
    .replace(/^pool:\n  size: \d+\n/m, "")
    .replace(/^  memory: .*$/m, "  memory: 768M") + "runtime: wasm\n");
  return { dir, rules: join(dir, "rules"), state: join(dir, "state") };
}

// The runtime needs node 20 or later at /usr/bin/node (its permission
// model); where it is older (Debian 12's own), mcp-exec refuses the
// profile, and this test says so instead of running.
const nodeMajor = Number(execFileSync("/usr/bin/node", ["--version"])
  .toString().slice(1).split(".")[0]);

test("a wasm session keeps its state and says what it can import", {
  skip: nodeMajor < 20 ? `/usr/bin/node is ${nodeMajor}: runtime: wasm needs 20` : false,
}, async () => {
  const t = wasmRules();
  const client = await connectStdio(t.rules, t.state);
  try {
    const { tools } = await client.listTools();
    const ep = tools.find((x) => x.name === "execute_python");
    assert.match(ep.description, /standard library only/);
    assert.match(ep.description, /ModuleNotFoundError/);
    const first = await client.callTool({ name: "execute_python",
      arguments: { code: "import fractions\nf = fractions.Fraction(1, 3)\nf * 3",
        timeout_ms: 30000 } });
    assert.equal(first.isError, false, first.content[0].text);
    const sc = first.structuredContent;
    assert.equal(sc.runtime, "wasm");
    assert.equal(sc.results[0].text, "Fraction(1, 1)");
    const again = await client.callTool({ name: "execute_python",
      arguments: { code: "print(f + 1)", session_id: sc.session_id } });
    assert.equal(again.structuredContent.stdout, "4/3\n");
    const missing = await client.callTool({ name: "execute_python",
      arguments: { code: "import pandas", session_id: sc.session_id } });
    assert.equal(missing.structuredContent.exit_code, 1);
    assert.match(missing.structuredContent.stderr,
      /ModuleNotFoundError: No module named 'pandas'/);
  } finally {
    await client.close();
    rmSync(t.dir, { recursive: true, force: true });
  }
});
