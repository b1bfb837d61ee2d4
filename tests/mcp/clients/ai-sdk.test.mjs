// The Vercel AI SDK's MCP client: createMCPClient from @ai-sdk/mcp (the
// `ai` package itself no longer exports experimental_createMCPClient),
// with its stdio transport (@ai-sdk/mcp/mcp-stdio) and its HTTP one; its
// tools() executed as generateText would run them for a model's tool call.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createMCPClient } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { TOOLS, bounded, calls, expectPython, expectRun, httpServer,
  stdioServer } from "./lib.mjs";

const transports = {
  stdio: () => new StdioMCPTransport(stdioServer("ai-sdk")),
  http: () => ({ type: "http", url: httpServer.url, headers: httpServer.headers }),
};

for (const [transport, make] of Object.entries(transports)) {
  describe(`AI SDK MCP client over ${transport}`, () => {
    let client, tools;
    before(async () => {
      client = await createMCPClient({ transport: make() });
      tools = await client.tools();
    });
    after(() => bounded("close()", client.close()));

    let n = 0;
    async function execute(name, args) {
      const r = await tools[name].execute(args,
        { toolCallId: `call_${++n}`, messages: [] });
      assert.notEqual(r.isError, true, JSON.stringify(r.content));
      return r;
    }
    const python = async (call) => expectPython(
      (await execute("execute_python", call.args)).structuredContent, call,
      (sid) => execute("close_session", { session_id: sid }));
    const command = async (call) =>
      expectRun((await execute("run_command", call.args)).structuredContent, call);

    test("lists the six tools", async () => {
      assert.deepEqual(Object.keys(tools).sort(), TOOLS);
      const { tools: listed } = await client.listTools();
      assert.deepEqual(listed.map((t) => t.name).sort(), TOOLS);
    });
    test("execute_python reads a host-path file (files)", () => python(calls.host));
    test("execute_python reads inline files (inline_files)", () => python(calls.inline));
    test("run_command runs an allowlisted command on a host-path file (files)",
      () => command(calls.command));
    test("run_command reads an inline file (inline_files)",
      () => command(calls.inlineCommand));
  });
}
