// mcp-remote, the stdio-to-HTTP bridge that stdio-only hosts (Claude
// Desktop and the like) put before a remote server: run as a child with a
// static bearer token in --header, pointed at mcp-exec --http, and driven
// over its stdio by the official SDK client.  It has no stdio side towards
// the server, so HTTP only.  A mistyped token must come back as a refused
// token.  mcp-remote 0.15.1 takes any 401 for an OAuth challenge: it goes
// on to discovery and dynamic client registration whatever the challenge
// says, also with a plain Bearer realm="stockade", error="invalid_token"
// and no metadata to find, and reports the registration's 404.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { bounded, clientTests, httpServer } from "./lib.mjs";

const proxy = new URL("node_modules/mcp-remote/dist/proxy.js", import.meta.url).pathname;

// mcp-remote on this Node, behind the loopback guard, its OAuth state in
// this run's directory (run.sh); no browser to open for a sign-in.
function bridge(authorization) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [proxy, httpServer.url, "--header", `Authorization: ${authorization}`,
      "--transport", "http-only"],
    env: { PATH: process.env.PATH, NODE_OPTIONS: process.env.NODE_OPTIONS,
      MCP_REMOTE_CONFIG_DIR: process.env.MCP_REMOTE_CONFIG_DIR,
      BROWSER: "/bin/false" },
    stderr: "pipe",
  });
  const log = { text: "" };
  transport.stderr.on("data", (d) => { log.text += d; });
  const client = new Client({ name: "stockade-tests", version: "1.0.0" });
  return { transport, client, log };
}

describe("mcp-remote over HTTP", () => {
  let b;
  before(async () => {
    b = bridge(httpServer.headers.Authorization);
    await b.client.connect(b.transport);
  });
  after(() => bounded("close()", b.client.close()));

  clientTests({
    listed: async () => (await b.client.listTools()).tools.map((t) => t.name),
    callTool: async (name, args) => {
      const r = await b.client.callTool({ name, arguments: args });
      assert.notEqual(r.isError, true, r.content?.[0]?.text);
      return r.structuredContent;
    },
  });
});

// Known failure (todo, reported, not counted): our side is as the spec
// asks (test_mcp_http checks the challenge and the 404); the bridge's own
// OAuth-first design is what this test would see fixed.
test("mcp-remote with a mistyped token reports a refused token", {
  todo: "mcp-remote 0.15.1 takes every 401 for an OAuth challenge" }, async () => {
  const b = bridge(`${httpServer.headers.Authorization}x`);
  const exited = new Promise((resolve) => { b.transport.onclose = resolve; });
  await assert.rejects(bounded("connect()", b.client.connect(b.transport)));
  await bounded("mcp-remote's exit", exited);
  // Its own words: the lines it starts with its pid, not the stack traces
  // and objects it prints under them.
  const said = b.log.text.split("\n").filter((l) => /^\[\d+\]/.test(l)).join("\n");
  const last = `mcp-remote ended with: ${said.split("\n").slice(-2).join("\n")}`;
  assert.doesNotMatch(said, /client registration/i, last);
  assert.match(said, /\b401\b|invalid_token|unauthori[sz]ed|not valid/i, last);
});
