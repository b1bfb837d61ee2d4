// run_command in a session, and refusals that say what is allowed (issue
// 11, point 6), with the official SDK client on the shipped commands.yaml.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { connectStdio, python, closeSessions } from "./lib.mjs";

let client;

before(async () => { client = await connectStdio(); });
afterEach(async () => { await closeSessions(client); });
after(async () => { await client.close(); });

const run = (args) => client.callTool({ name: "run_command", arguments: args });

test("run_command with session_id sees the session's /workspace", async () => {
  const a = await python(client, "open('/workspace/data.txt', 'w').write('a\\nb\\nc\\n')\nkept = 42");
  const sid = a.structuredContent.session_id;
  const r = await run({ command: "wc", args: ["-l", "/workspace/data.txt"], session_id: sid });
  assert.equal(r.isError, false, r.content[0].text);
  assert.equal(r.structuredContent.stdout, "3 /workspace/data.txt\n");
  assert.equal(r.structuredContent.session_id, sid);
  // The session lives on, its variables untouched by the launcher.
  const b = await python(client, "print(kept, sorted(k for k in globals() if not k.startswith('__')))",
    { session_id: sid });
  assert.equal(b.structuredContent.stdout, "42 ['kept']\n");
  // Without session_id the command has a sandbox of its own: no such file.
  const c = await run({ command: "wc", args: ["-l", "/workspace/data.txt"] });
  assert.notEqual(c.structuredContent.exit_code, 0);
  assert.equal(c.structuredContent.session_id, undefined);
});

test("run_command refuses an unknown or foreign session", async () => {
  const r = await run({ command: "python-version", args: ["--version"],
    session_id: "sess_00000000000000000000000000000000" });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /session not found/);
});

test("a refused argument names what the rule allows", async () => {
  const r = await run({ command: "wc", args: ["/etc/passwd"] });
  assert.equal(r.isError, true);
  const text = r.content[0].text;
  assert.match(text, /argument 0 \('\/etc\/passwd'\) is not allowed/);
  assert.ok(text.includes("/inputs/[A-Za-z0-9._-]{1,128}"), text);
  assert.match(text, /count lines, words and bytes/);
  const many = await run({ command: "python-version", args: ["--version", "--version"] });
  assert.match(many.content[0].text, /at most 1 arguments, not 2/);
});

test("the tool description lists each command with its purpose", async () => {
  const { tools } = await client.listTools();
  const rc = tools.find((t) => t.name === "run_command");
  assert.match(rc.description, /wc: count lines, words and bytes/);
  assert.match(rc.description, /python-version: the sandbox's Python version/);
  assert.match(rc.description, /session_id/);
  assert.equal(rc.inputSchema.properties.session_id.type, "string");
});
