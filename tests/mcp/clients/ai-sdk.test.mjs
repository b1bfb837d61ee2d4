// The Vercel AI SDK's MCP client: createMCPClient from @ai-sdk/mcp (the
// `ai` package itself no longer exports experimental_createMCPClient),
// with its stdio transport (@ai-sdk/mcp/mcp-stdio) and its HTTP one; its
// tools() executed as generateText would run them for a model's tool call.
import { describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { createMCPClient } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { TOOLS, bounded, clientTests, httpServer, stdioServer } from "./lib.mjs";

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
    clientTests({
      listed: async () => {
        const { tools: listed } = await client.listTools();
        assert.deepEqual(listed.map((t) => t.name).sort(), TOOLS);
        return Object.keys(tools);
      },
      callTool: async (name, args) => {
        const r = await tools[name].execute(args,
          { toolCallId: `call_${++n}`, messages: [] });
        assert.notEqual(r.isError, true, JSON.stringify(r.content));
        return r.structuredContent;
      },
    });
  });
}
