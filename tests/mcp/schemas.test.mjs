// The tools' input schemas (issue 32, finding 8): plain enough for every
// client's converter (LangChain's MCP adapters, OpenAI Agents' strict
// mode): no unions, every object typed with its properties listed and no
// others.  And the server takes what they allow: a call the schema
// accepts is never refused for its shape, and one it refuses is never run
// (the server's table and tools/list are one, mcp-exec/tools/args.c).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import Ajv from "ajv";
import { connectStdio } from "./lib.mjs";

let client, tools;

before(async () => {
  client = await connectStdio();
  ({ tools } = await client.listTools());
});
after(async () => {
  await client.close();
});

// Every schema node beneath node, with its path.
function* nodes(node, path) {
  if (node === null || typeof node !== "object")
    return;
  yield [node, path];
  for (const key of ["properties", "$defs", "definitions"])
    for (const [k, v] of Object.entries(node[key] ?? {}))
      yield* nodes(v, `${path}.${key}.${k}`);
  if (node.items)
    yield* nodes(node.items, `${path}.items`);
  for (const key of ["anyOf", "oneOf", "allOf"])
    for (const [i, v] of (node[key] ?? []).entries())
      yield* nodes(v, `${path}.${key}[${i}]`);
}

test("input schemas are plain: one type each, objects closed", () => {
  assert.ok(tools.length >= 6, tools.map((t) => t.name).join(","));
  for (const t of tools) {
    for (const [n, path] of nodes(t.inputSchema, t.name)) {
      for (const key of ["anyOf", "oneOf", "allOf", "not", "$ref"])
        assert.equal(n[key], undefined, `${path} has ${key}`);
      assert.equal(typeof n.type, "string", `${path}: type ${JSON.stringify(n.type)}`);
      if (n.type === "object") {
        assert.equal(typeof n.properties, "object", `${path}: no properties`);
        assert.equal(n.additionalProperties, false, `${path}: not closed`);
        for (const r of n.required ?? [])
          assert.ok(r in n.properties, `${path}: ${r} required, not listed`);
      }
      if (n.type === "array")
        assert.equal(typeof n.items?.type, "string", `${path}: items untyped`);
    }
  }
});

// Arguments for each tool, the calls bound for a session that does not
// exist (n), so that nothing runs: a shape the schema takes ends as
// "session not found" at worst, never as a fault.
const n = { session_id: "sess_00000000000000000000000000000000" };
const samples = {
  execute_python: [
    { ...n }, { ...n, code: 1 }, { ...n, code: "1", extra: 1 }, { ...n, code: "1" },
    { code: "1", session_id: 5 },
    { ...n, code: "1", timeout_ms: 5 }, { ...n, code: "1", timeout_ms: 0 },
    { ...n, code: "1", timeout_ms: 1.5 }, { ...n, code: "1", timeout_ms: "5" },
    { ...n, code: "1", timeout_ms: 1e9 }, { ...n, code: "1", files: ["/x"] },
    { ...n, code: "1", files: "/x" }, { ...n, code: "1", files: [{ name: "a", content: "b" }] },
    { ...n, code: "1", files: Array(17).fill("/x") },
    { ...n, code: "1", inline_files: [{ name: "a", content: "b" }] },
    { ...n, code: "1", inline_files: [{ name: "a", content: "YQ==", encoding: "base64" }] },
    { ...n, code: "1", inline_files: [{ name: "a" }] },
    { ...n, code: "1", inline_files: [{ name: "a", content: "b", mode: 1 }] },
    { ...n, code: "1", inline_files: [{ name: "a", content: "b", encoding: "latin-1" }] },
    { ...n, code: "1", inline_files: [{ name: "n".repeat(256), content: "b" }] },
    // maxLength counts characters; the server's byte limits are values.
    { ...n, code: "1", inline_files: [{ name: "é".repeat(200), content: "b" }] },
    { ...n, code: "é".repeat(600000) },
    { ...n, code: "1", inline_files: ["a"] }, { ...n, code: "1", profile: "default" },
  ],
  run_command: [
    { ...n, command: "wc" }, { ...n, command: "no-such" }, { ...n, command: "wc", args: ["-l"] },
    { ...n, command: "wc", args: [1] }, { ...n, command: "wc", args: Array(65).fill("-l") },
    { ...n, command: "wc", inline_files: [{ name: "a", content: "b" }] },
    { ...n, command: "wc", files: [{ name: "a", content: "b" }] }, {},
  ],
  close_session: [{ ...n }, {}, { session_id: 1 }],
  list_sessions: [{}, { ...n }],
  list_files: [{ ...n }, {}, { ...n, path: 1 }, { ...n, path: "sub" }],
  read_file: [{ ...n, path: "a" }, { ...n }, { ...n, path: "a", offset: -1 },
    { ...n, path: "a", offset: 3 }, { ...n, path: "a", length: 0 },
    { ...n, path: "a", length: 256 * 1024 + 1 }, { ...n, path: "a", length: 5 }],
};

test("the server takes what the schemas allow, and only that", async () => {
  const ajv = new Ajv({ strict: true });
  // MCP 2026-07-28's annotation for a header the client mirrors: no
  // validation keyword, but one strict mode must know of.
  ajv.addKeyword({ keyword: "x-mcp-header", schemaType: "string" });
  let accepted = 0, refused = 0;
  for (const t of tools) {
    const valid = ajv.compile(t.inputSchema);
    for (const args of samples[t.name] ?? []) {
      const ok = valid(args);
      let fault = null, r = null;
      try {
        r = await client.callTool({ name: t.name, arguments: args });
      } catch (e) {
        fault = e;
      }
      const what = `${t.name} ${JSON.stringify(args).slice(0, 120)}`;
      if (ok) {
        assert.equal(fault, null, `${what}: the schema takes it, the server faults: ${fault}`);
        accepted++;
      } else {
        assert.ok(fault !== null || r.isError, `${what}: the schema refuses it, the server ran it`);
        refused++;
      }
    }
  }
  assert.ok(accepted >= 10 && refused >= 20, `${accepted} accepted, ${refused} refused`);
});
