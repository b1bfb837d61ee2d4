// Results out (issue 11, points 3 and 4), with the official SDK client:
// list_files and read_file over a session's /workspace (paging, symlink
// and path tricks refused, another principal told "session not found"),
// artifacts_skipped, the new artifact types, and Jupyter-style results
// (trailing expression, display(), figures saved without savefig).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { closeSessions, connectHttp, connectStdio, python } from "./lib.mjs";

let client;

before(async () => { client = await connectStdio(); });
after(async () => {
  await closeSessions(client);
  await client.close();
});

const call = (name, args) => client.callTool({ name, arguments: args });

test("list_files and read_file are listed with schemas", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes("list_files"), names.join(","));
  assert.ok(names.includes("read_file"));
  const rf = tools.find((t) => t.name === "read_file");
  assert.deepEqual(rf.inputSchema.required, ["session_id", "path"]);
  assert.ok(rf.outputSchema.properties.next_offset);
  const py = tools.find((t) => t.name === "execute_python");
  assert.ok(py.outputSchema.properties.results);
  assert.ok(py.outputSchema.properties.artifacts_skipped);
  assert.match(py.description, /pdf, npy, npz, parquet, xlsx, zip, md/);
});

test("list_files shows every workspace file, read_file pages through one", async () => {
  const r = await python(client,
    "import os\nos.mkdir('sub')\nopen('sub/big.log','w').write('é' * 100000)\n" +
    "open('blob.bin','wb').write(bytes(range(256)))\n" +
    "os.symlink('/etc/passwd', 'link')");
  assert.equal(r.isError, false, r.content[0].text);
  const sid = r.structuredContent.session_id;
  const l = await call("list_files", { session_id: sid });
  assert.equal(l.isError, false, l.content[0].text);
  const byName = Object.fromEntries(l.structuredContent.files.map((f) => [f.name, f]));
  assert.equal(byName.sub.type, "directory");
  assert.equal(byName["blob.bin"].size, 256);
  assert.equal(byName.link.type, "symlink");
  assert.match(byName["blob.bin"].mtime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const sub = await call("list_files", { session_id: sid, path: "/workspace/sub" });
  assert.deepEqual(sub.structuredContent.files.map((f) => [f.name, f.size]),
    [["big.log", 200000]]);

  // Text, in pages that never split a character.
  let text = "", offset = 0, pages = 0;
  for (;;) {
    const p = await call("read_file", { session_id: sid, path: "sub/big.log",
      offset, length: 65537 });
    assert.equal(p.isError, false, p.content[0].text);
    const s = p.structuredContent;
    assert.equal(s.encoding, "utf-8");
    assert.equal(s.mime, "text/plain");
    assert.ok(s.length <= 65537);
    text += s.text;
    pages++;
    if (s.eof) break;
    offset = s.next_offset;
  }
  assert.equal(pages, 4);
  assert.equal(text, "é".repeat(100000));
  // Binary as base64, from an offset.
  const b = await call("read_file", { session_id: sid, path: "blob.bin", offset: 250 });
  assert.equal(b.structuredContent.encoding, "base64");
  assert.equal(b.structuredContent.mime, "application/octet-stream");
  assert.deepEqual([...Buffer.from(b.structuredContent.blob, "base64")],
    [250, 251, 252, 253, 254, 255]);
  assert.equal(b.structuredContent.eof, true);
});

test("symlinks, .. and paths outside /workspace are refused", async () => {
  const r = await python(client,
    "import os\nos.symlink('/etc', 'etc')\nos.symlink('/etc/passwd', 'pw')\n" +
    "open('real.txt','w').write('x')\nos.link('real.txt', 'hard.txt')");
  assert.equal(r.isError, false, r.content[0].text);
  const sid = r.structuredContent.session_id;
  for (const [path, why] of [["pw", /symlink/], ["etc/passwd", /symlink/],
    ["../../etc/passwd", /out of \/workspace/], ["/etc/passwd", /relative to \/workspace/],
    ["hard.txt", /hard link/], [".", /not a regular file/],
    ["nothere", /no such file/]]) {
    const x = await call("read_file", { session_id: sid, path });
    assert.equal(x.isError, true, path);
    assert.match(x.content[0].text, why, path);
  }
  const e = await call("list_files", { session_id: sid, path: "etc" });
  assert.equal(e.isError, true);
  assert.match(e.content[0].text, /symlink/);
  const u = await call("list_files", { session_id: sid, path: ".." });
  assert.equal(u.isError, true);
  const n = await call("read_file", { session_id: "sess_0123", path: "real.txt" });
  assert.equal(n.content[0].text, "session not found");
});

test("another principal's session is not found by list_files or read_file", async () => {
  const alice = await connectHttp((await import("./lib.mjs")).http.tokenA);
  const bob = await connectHttp((await import("./lib.mjs")).http.tokenB);
  try {
    const a = await alice.client.callTool({ name: "execute_python", arguments: {
      code: "open('secret.txt','w').write('alice only')" } });
    const sid = a.structuredContent.session_id;
    const mine = await alice.client.callTool({ name: "read_file",
      arguments: { session_id: sid, path: "secret.txt" } });
    assert.equal(mine.structuredContent.text, "alice only");
    for (const [name, args] of [["read_file", { session_id: sid, path: "secret.txt" }],
      ["list_files", { session_id: sid }]]) {
      const x = await bob.client.callTool({ name, arguments: args });
      const unknown = await bob.client.callTool({ name, arguments: { ...args,
        session_id: "sess_" + "0".repeat(32) } });
      assert.equal(x.isError, true);
      assert.equal(x.content[0].text, "session not found");
      assert.deepEqual(x, unknown);
    }
    await alice.client.callTool({ name: "close_session", arguments: { session_id: sid } });
  } finally {
    await alice.client.close();
    await bob.client.close();
  }
});

test("artifact collection skips are listed with size and reason", async () => {
  const r = await python(client,
    "import os\nopen('blob.bin','wb').write(bytes(range(256)) * 4)\n" +
    "os.symlink('/etc/passwd', 'link')\nopen('ok.txt','w').write('fine')");
  assert.equal(r.isError, false, r.content[0].text);
  const skipped = r.structuredContent.artifacts_skipped;
  assert.deepEqual(skipped.find((s) => s.name === "blob.bin"),
    { name: "blob.bin", size: 1024, reason: "unrecognised content" });
  assert.equal(skipped.find((s) => s.name === "link").reason, "symlink");
  assert.ok(r.structuredContent.artifacts.some((a) => a.name === "ok.txt"));
});

test("pdf, npy, npz, parquet, xlsx, zip and md come back as artifacts", async () => {
  const r = await python(client, [
    "import numpy as np, zipfile",
    "open('a.pdf','wb').write(b'%PDF-1.4\\n%%EOF\\n')",
    "np.save('a.npy', np.arange(3))",
    "np.savez('a.npz', x=np.arange(3), y=np.ones(2))",
    "open('a.parquet','wb').write(b'PAR1' + bytes(16) + b'PAR1')",
    "with zipfile.ZipFile('book.bin', 'w') as z:",
    "    z.writestr('[Content_Types].xml', '<Types/>')",
    "    z.writestr('xl/workbook.xml', '<workbook/>')",
    "with zipfile.ZipFile('a.zip', 'w') as z:",
    "    z.writestr('readme.txt', 'hi')",
    "open('notes.md','w').write('# Title\\n\\ntext\\n')",
  ].join("\n"));
  assert.equal(r.isError, false, r.content[0].text);
  const mime = Object.fromEntries(r.structuredContent.artifacts.map((a) => [a.name, a.mime]));
  assert.deepEqual(mime, {
    "a.pdf": "application/pdf",
    "a.npy": "application/x-npy",
    "a.npz": "application/x-npz",
    "a.parquet": "application/vnd.apache.parquet",
    // From its entries, whatever its name.
    "book.bin": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "a.zip": "application/zip",
    "notes.md": "text/markdown",
  }, JSON.stringify(r.structuredContent.artifacts_skipped));
});

// Issue 32, finding 6: stdout is what the code wrote; the trailing value
// is the main result (and so in the text content), as Jupyter keeps
// execute_result apart from the streams.
test("a trailing expression's value is the main result, never stdout", async () => {
  const r = await python(client, "x = 6 * 7\nx");
  assert.equal(r.isError, false, r.content[0].text);
  assert.equal(r.structuredContent.stdout, "");
  assert.equal(r.structuredContent.stdout_bytes, 0);
  assert.deepEqual(r.structuredContent.results, [{ type: "text", text: "42", main: true }]);
  assert.deepEqual(JSON.parse(r.content[0].text).results, r.structuredContent.results);
  // What the code wrote, exactly: not sys.stdout.write's return value.
  const w = await python(client, "import sys\nsys.stdout.write('y' * 40960)");
  assert.equal(w.structuredContent.stdout_bytes, 40960);
  assert.match(w.structuredContent.stdout, /^y+\n\[\.\.\. \d+ bytes omitted \.\.\.\]\ny+$/);
  assert.deepEqual(w.structuredContent.results, [{ type: "text", text: "40960", main: true }]);
  const p = await python(client, "print('hi')\n'value'");
  assert.equal(p.structuredContent.stdout, "hi\n");
  assert.deepEqual(p.structuredContent.results, [{ type: "text", text: "'value'", main: true }]);
  // None shows nothing; neither does a statement.
  const n = await python(client, "print('hi')");
  assert.equal(n.structuredContent.stdout, "hi\n");
  assert.deepEqual(n.structuredContent.results, []);
  const d = await python(client, "x = 1\nx = 2");
  assert.deepEqual(d.structuredContent.results, []);
  // A trailing ';' hides it, as in IPython; a continued line and a comment do not.
  const q = await python(client, "6 * 7;");
  assert.equal(q.structuredContent.stdout, "");
  assert.deepEqual(q.structuredContent.results, []);
  const c = await python(client, "'multi' + \\\n  'line'  # comment");
  assert.equal(c.structuredContent.stdout, "");
  assert.deepEqual(c.structuredContent.results, [{ type: "text", text: "'multiline'", main: true }]);
});

test("a DataFrame shows as text and HTML, display() of data as JSON", async () => {
  const r = await python(client,
    "import pandas as pd\ndisplay({'a': [1, 2], 'b': None})\n" +
    "df = pd.DataFrame({'n': [1, 2, 3]})\ndf.describe()");
  assert.equal(r.isError, false, r.content[0].text);
  assert.equal(r.structuredContent.stdout, "");
  const [j, main] = r.structuredContent.results;
  assert.deepEqual(j, { type: "json", text: "{'a': [1, 2], 'b': None}",
    json: { a: [1, 2], b: null } });
  assert.equal(main.type, "html");
  assert.equal(main.main, true);
  assert.match(main.text, /count\s+3\.0/);
  assert.match(main.html, /<table/);
});

test("figures left open come back as PNG artifacts and image results", async () => {
  const r = await python(client,
    "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.figure()\nplt.bar([1], [2])\nplt.show()");
  assert.equal(r.isError, false, r.content[0].text);
  assert.equal(r.structuredContent.stderr, "");
  const names = r.structuredContent.artifacts.map((a) => [a.name, a.mime]);
  assert.deepEqual(names, [["figure_1.png", "image/png"], ["figure_2.png", "image/png"]]);
  const imgs = r.structuredContent.results.filter((x) => x.type === "image");
  assert.deepEqual(imgs.map((x) => x.artifact), ["figure_1.png", "figure_2.png"]);
  const art = r.structuredContent.artifacts[0];
  assert.equal(imgs[0].uri, art.uri);
  assert.equal(imgs[0].mime, "image/png");
  assert.ok(!("data" in imgs[0]), "image results refer to artifacts, never inline bytes");
  // Closed afterwards: the next call in the session starts with none.
  const again = await python(client, "import matplotlib.pyplot as plt\nlen(plt.get_fignums())",
    { session_id: r.structuredContent.session_id });
  assert.deepEqual(again.structuredContent.results, [{ type: "text", text: "0", main: true }]);
});

test("results text is bounded by the stdout cap", async () => {
  const r = await python(client, "'x' * 100000");
  assert.equal(r.isError, false, r.content[0].text);
  assert.equal(r.structuredContent.stdout, "");
  assert.equal(r.structuredContent.truncated, false);
  assert.equal(r.structuredContent.results_truncated, true);
  const cost = r.structuredContent.results.reduce((n, x) => n + x.text.length, 0);
  assert.ok(cost <= 32 * 1024, `results text ${cost}`);
  // The value is all the caller gets of it: cut to the cap, not dropped,
  // also when each character takes two bytes.
  for (const ch of ["x", "\u00e9"]) {
    const v = await python(client, `${JSON.stringify(ch)} * 100000`);
    const [main] = v.structuredContent.results;
    assert.equal(main.main, true, JSON.stringify(v.structuredContent.results));
    assert.ok(main.text.startsWith("'" + ch.repeat(100)), main.text.slice(0, 20));
    assert.ok(Buffer.byteLength(main.text) <= 32 * 1024 &&
      Buffer.byteLength(main.text) > 30 * 1024, `${Buffer.byteLength(main.text)}`);
  }
});

test("results the driver did not make are rebuilt, capped and checked", async () => {
  // The code runs in the driver's process and can speak for it: a "done"
  // for this call (the session's first, id 1) with hostile results.
  const hostile = [
    { type: "exe", text: "unknown type" },
    { type: "text" },
    { type: "text", text: "ok", data: "AAAA", uri: "file:///etc/passwd", main: true },
    { type: "image", text: "i", artifact: "../../etc/passwd" },
    { type: "image", text: "i", artifact: "nothere.png", uri: "file:///root/x" },
    { type: "image", text: "i", artifact: "bad\u202ename.png" },
    { type: "html", text: "no html" },
    { type: "json", text: "j", json: { a: [1] } },
    { type: "text", text: "y".repeat(40000) },
    { type: "text", text: "after the cap" },
  ];
  const b64 = Buffer.from(JSON.stringify(hostile)).toString("base64");
  const r = await python(client, [
    "import base64, json, os, struct",
    `results = json.loads(base64.b64decode('${b64}'))`,
    "body = json.dumps({'op': 'done', 'id': 1, 'status': 'ok', 'exit_code': 0, 'results': results}).encode()",
    "os.write(3, struct.pack('>I', len(body)) + body)",
  ].join("\n"));
  assert.equal(r.isError, false, r.content[0].text);
  assert.deepEqual(r.structuredContent.results, [
    { type: "text", text: "ok", main: true },
    { type: "json", text: "j", json: { a: [1] } },
  ]);
  assert.equal(r.structuredContent.results_truncated, true);
});

// Issue 20: what read_file sends out is recorded (artifact_delivered, how
// read_file, the page's sha256), and a refused read as artifact_refused.
test("read_file leaves artifact_delivered, a refused read artifact_refused", async () => {
  const { readdirSync, readFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { createHash } = await import("node:crypto");
  const { env } = await import("./lib.mjs");
  const r = await python(client, "open('note.txt','w').write('delivered\\n')");
  const sid = r.structuredContent.session_id;
  const ok = await call("read_file", { session_id: sid, path: "note.txt" });
  assert.equal(ok.structuredContent.text, "delivered\n");
  const bad = await call("read_file", { session_id: sid, path: "../etc/passwd" });
  assert.equal(bad.isError, true);
  const want = "sha256:" + createHash("sha256").update("delivered\n").digest("hex");
  let got, refused;
  for (let i = 0; i < 100 && !(got && refused); i++) {
    const recs = readdirSync(env.auditLog).filter((f) => /^audit-.*\.log$/.test(f))
      .flatMap((f) => readFileSync(join(env.auditLog, f), "utf8").split("\n"))
      .filter((l) => l.includes(sid)).map((l) => JSON.parse(l));
    got = recs.find((e) => e.event === "artifact_delivered" && e.how === "read_file");
    refused = recs.find((e) => e.event === "artifact_refused" && e.how === "read_file");
    if (!(got && refused)) await new Promise((res) => setTimeout(res, 50));
  }
  assert.ok(got, "no artifact_delivered for read_file");
  assert.equal(got.sha256, want);
  assert.equal(got.artifact, "note.txt");
  assert.equal(got.size, 10);
  assert.ok(refused, "no artifact_refused for read_file");
});
