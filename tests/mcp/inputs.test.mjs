// Inline inputs (issue 11, point 2), with the official SDK client:
// inline_files items are {name, content, encoding}, staged read-only in
// /inputs without any input root; the same name again replaces the file.
// files takes host paths only (issue 32, finding 8).  Runs its own
// mcp-exec on a copy of the rules with no input roots and small caps.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync,
  writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectStdio, env } from "./lib.mjs";

let client, dir;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "stockade-inputs-"));
  chmodSync(dir, 0o711);
  cpSync(env.rules, join(dir, "rules"), { recursive: true });
  const prof = join(dir, "rules", "profiles", "default.yaml");
  const text = readFileSync(prof, "utf8")
    .replace(/^  roots: .*$/m, "  roots: []")
    .replace(/^  inline_max_file: .*$/m, "  inline_max_file: 1K")
    .replace(/^  inline_max_call: .*$/m, "  inline_max_call: 1536");
  assert.match(text, /inline_max_file: 1K\n  inline_max_call: 1536\n/);
  writeFileSync(prof, text);
  client = await connectStdio(join(dir, "rules"), join(dir, "state"));
});
after(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

const py = (code, extra = {}) =>
  client.callTool({ name: "execute_python", arguments: { code, ...extra } });

test("text and binary files sent inline land read-only in /inputs", async () => {
  const bin = Buffer.from([0, 1, 2, 255, 254, 10]);
  const r = await py(
    "import os\nprint(open('/inputs/sales.csv').read(), end='')\n" +
    "print(list(open('/inputs/blob.bin', 'rb').read()))\n" +
    "print(oct(os.stat('/inputs/sales.csv').st_mode & 0o777))\n" +
    "try:\n    open('/inputs/sales.csv', 'a')\nexcept OSError as e:\n    print('ro')",
    { inline_files: [{ name: "sales.csv", content: "région,n\nnord,3\n" },
      { name: "blob.bin", content: bin.toString("base64"), encoding: "base64" }] });
  assert.equal(r.isError, false, r.content[0].text);
  assert.equal(r.structuredContent.stdout,
    "région,n\nnord,3\n[0, 1, 2, 255, 254, 10]\n0o444\nro\n");
});

test("the same name again in the session replaces the file", async () => {
  const a = await py("print(open('/inputs/sales.csv').read(), end='')",
    { inline_files: [{ name: "sales.csv", content: "v1\n" }] });
  const sid = a.structuredContent.session_id;
  assert.equal(a.structuredContent.stdout, "v1\n");
  const b = await py("print(open('/inputs/sales.csv').read(), end='')",
    { session_id: sid, inline_files: [{ name: "sales.csv", content: "v2, longer\n" }] });
  assert.equal(b.isError, false, b.content[0].text);
  assert.equal(b.structuredContent.stdout, "v2, longer\n");
  // run_command in the session sees the same /inputs.
  const c = await client.callTool({ name: "run_command", arguments: {
    command: "wc", args: ["-c", "/inputs/sales.csv"], session_id: sid } });
  assert.equal(c.structuredContent.stdout, "11 /inputs/sales.csv\n");
});

test("oversize inline inputs are refused, per file and per call", async () => {
  const big = await py("pass", { inline_files: [{ name: "big.txt", content: "x".repeat(1025) }] });
  assert.equal(big.isError, true);
  assert.match(big.content[0].text, /more than an inline input may have \(inputs.inline_max_file, 1024\)/);
  const bigb64 = await py("pass", { inline_files: [{ name: "big.bin",
    content: Buffer.alloc(2000).toString("base64"), encoding: "base64" }] });
  assert.match(bigb64.content[0].text, /inputs.inline_max_file/);
  const call = await py("pass", { inline_files: [{ name: "a.txt", content: "x".repeat(1000) },
    { name: "b.txt", content: "y".repeat(1000) }] });
  assert.equal(call.isError, true);
  assert.match(call.content[0].text, /would exceed 1536 bytes \(inputs.inline_max_call\)/);
});

test("bad names, encodings and shapes are refused", async () => {
  for (const name of ["../x", "a/b", ".hidden", "", "a\u0001b", "a\u200bb"]) {
    const r = await py("pass", { inline_files: [{ name, content: "x" }] });
    assert.equal(r.isError, true, `name ${JSON.stringify(name)} was accepted`);
  }
  const b64 = await py("pass", { inline_files: [{ name: "x.bin", content: "not base64!", encoding: "base64" }] });
  assert.match(b64.content[0].text, /not valid base64/);
  await assert.rejects(py("pass", { inline_files: [{ name: "x", content: "x", encoding: "latin-1" }] }),
    /encoding/);
  await assert.rejects(py("pass", { inline_files: [{ name: "x" }] }), /inline_files\[0\]\.content/);
  await assert.rejects(py("pass", { inline_files: [{ name: "x", content: "x", mode: 7 }] }), /unknown property/);
  // A host path still needs an input root.
  const host = await py("pass", { files: ["/etc/passwd"] });
  assert.match(host.content[0].text, /no inputs.roots/);
});

test("an object in files is refused, naming inline_files", async () => {
  await assert.rejects(py("pass", { files: [{ name: "x", content: "x" }] }),
    /files\[0\]: a host path; send a file's contents in inline_files/);
  await assert.rejects(py("pass", { files: "x" }), /files: an array/);
});

test("tools/list shows files and inline_files, each of one type", async () => {
  const { tools } = await client.listTools();
  for (const name of ["execute_python", "run_command"]) {
    const props = tools.find((t) => t.name === name).inputSchema.properties;
    assert.deepEqual(props.files.items, { type: "string" }, name);
    const items = props.inline_files.items;
    assert.equal(items.type, "object");
    assert.equal(items.additionalProperties, false);
    assert.deepEqual(items.properties.encoding.enum, ["utf-8", "base64"]);
    assert.deepEqual(items.required, ["name", "content"]);
    // The profile's limits, as the checks read them.
    assert.match(props.inline_files.description, /at most 1024 bytes each once decoded, 1536 in all/);
    assert.match(props.files.description, /no input roots/);
  }
});
