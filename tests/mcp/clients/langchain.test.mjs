// LangChain's MCP adapters (@langchain/mcp-adapters): MultiServerMCPClient
// over stdio and HTTP, its tools invoked as a LangGraph ToolNode does,
// with a tool call, whose ToolMessage carries the structured content as
// its artifact.  The adapters check arguments against the tool's schema
// before sending, and they keep only one branch of an anyOf: a host path
// in files failed there while files' items were anyOf(string, object).
import { describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { bounded, clientTests, httpServer, stdioServer } from "./lib.mjs";

const servers = {
  stdio: { transport: "stdio", ...stdioServer("langchain") },
  http: { transport: "http", url: httpServer.url, headers: httpServer.headers },
};

for (const [transport, server] of Object.entries(servers)) {
  describe(`LangChain MCP adapters over ${transport}`, () => {
    let client, tools;
    before(async () => {
      client = new MultiServerMCPClient({ mcpServers: { stockade: server } });
      tools = await client.getTools();
    });
    after(() => bounded("close()", client.close()));

    let n = 0;
    clientTests({
      listed: () => tools.map((t) => t.name),
      callTool: async (name, args) => {
        const tool = tools.find((t) => t.name === name);
        const msg = await tool.invoke({ name, args, id: `call_${++n}`,
          type: "tool_call" });
        assert.equal(msg.status, "success", msg.content);
        return msg.artifact.find((a) => a.type === "mcp_structured_content")?.data;
      },
    });
  });
}
