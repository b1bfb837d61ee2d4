// Shared by the third-party client tests: where the server is (a command
// line for stdio, a URL and a bearer token for HTTP), the calls every
// client makes and what each must return.  Paths and tokens come from
// tests/mcp/run.sh through ../lib.mjs.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { env, http } from "../lib.mjs";

if (!globalThis[Symbol.for("stockade.loopbackOnly")])
  throw new Error("no loopback guard: run me from tests/mcp/clients/run.sh");

export const TOOLS = ["close_session", "execute_python", "list_files",
  "list_sessions", "read_file", "run_command"];

// mcp-exec --stdio with a state dir of the file's own; its stderr joins
// the one run.sh checks for sanitizer reports (the libraries offer no file
// for it, or not all of them).  The libraries pass the child only a few
// variables of their choosing: PATH is all it needs.
export function stdioServer(name) {
  return {
    command: "/bin/sh",
    args: ["-c", 'exec "$@" 2>>"$0"', env.stderr, env.mcpExec, "--stdio",
      "--rules", env.rules, "--state-dir", `${env.state}-${name}`],
    env: { PATH: process.env.PATH },
  };
}

// mcp-exec --http, as user:bob with a static bearer token.
export const httpServer = {
  url: http.url,
  headers: { Authorization: `Bearer ${http.tokenB}` },
};

// A file beneath the profile's input root (run.sh: data.csv in MCP_INPUTS)
// named by its host path in files; inline files in inline_files, one text
// and one binary.
const hostPath = `${env.inputs}/data.csv`;
const readInputs = "print(open('/inputs/data.csv').read(), end='')\n";
export const calls = {
  host: {
    args: { code: readInputs, files: [hostPath] },
    stdout: "a,b\n1,2\n",
  },
  inline: {
    args: {
      code: readInputs +
        "print(open('/inputs/note.txt').read(), end='')\n" +
        "print(list(open('/inputs/blob.bin', 'rb').read()))\n",
      files: [hostPath],
      inline_files: [{ name: "note.txt", content: "héllo, inline\n" },
        { name: "blob.bin", content: "AAH/", encoding: "base64" }],
    },
    stdout: "a,b\n1,2\nhéllo, inline\n[0, 1, 255]\n",
  },
  command: {
    args: { command: "wc", args: ["-c", "/inputs/data.csv"], files: [hostPath] },
    stdout: "8 /inputs/data.csv\n",
  },
  inlineCommand: {
    args: { command: "head", args: ["-n", "1", "/inputs/note.txt"],
      inline_files: [{ name: "note.txt", content: "héllo, inline\nline 2\n" }] },
    stdout: "héllo, inline\n",
  },
};

// A tool result's structured content: the run ended well and printed
// what it should.
export function expectRun(sc, call) {
  assert.ok(sc, "no structured content in the result");
  assert.equal(sc.stdout, call.stdout, JSON.stringify(sc).slice(0, 600));
  assert.equal(sc.exit_code, 0);
}

// execute_python through callTool(name, args), and the session it opened
// closed whatever the result (a principal may hold only four).
export async function python(callTool, call) {
  const sc = await callTool("execute_python", call.args);
  try {
    expectRun(sc, call);
  } finally {
    if (sc?.session_id)
      await callTool("close_session", { session_id: sc.session_id });
  }
}

// The tests every client runs.  client.listed() gives the tool names as
// the library lists them; client.callTool(name, args) calls a tool the way
// an agent built on the library would, and gives the result's structured
// content.
export function clientTests(client) {
  const cmd = async (call) => expectRun(await client.callTool("run_command",
    call.args), call);
  test("lists the six tools", async () => {
    assert.deepEqual((await client.listed()).sort(), TOOLS);
  });
  test("execute_python reads a host-path file (files)",
    () => python(client.callTool, calls.host));
  test("execute_python reads inline files (inline_files)",
    () => python(client.callTool, calls.inline));
  test("run_command runs an allowlisted command on a host-path file (files)",
    () => cmd(calls.command));
  test("run_command reads an inline file (inline_files)",
    () => cmd(calls.inlineCommand));
}

// A close that does not end in 10 s fails the test; a process still held
// up 10 s after the file's last hook (a library's client left open holds
// its mcp-exec or its socket) is ended, and fails, instead of waiting for
// run.sh's bound on the whole suite.
export async function bounded(what, promise) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over 10 s`)), 10000);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

after(() => {
  setTimeout(() => {
    console.error("FAIL: something was left open after the file's tests");
    process.exit(1);
  }, 10000).unref();
});
