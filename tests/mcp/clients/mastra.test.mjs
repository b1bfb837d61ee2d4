// Mastra's MCPClient (@mastra/mcp): one client per transport, its tools
// (named server_tool) executed as a Mastra agent would, which returns a
// tool's structured content as the result.
import { describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { MCPClient } from "@mastra/mcp";
import { bounded, clientTests, httpServer, stdioServer } from "./lib.mjs";

const servers = {
  stdio: stdioServer("mastra"),
  http: { url: new URL(httpServer.url), requestInit: { headers: httpServer.headers } },
};

for (const [transport, server] of Object.entries(servers)) {
  describe(`Mastra MCPClient over ${transport}`, () => {
    let client, tools;
    before(async () => {
      client = new MCPClient({ id: `stockade-${transport}`,
        servers: { stockade: server } });
      tools = await client.listTools();
    });
    after(() => bounded("disconnect()", client.disconnect()));

    clientTests({
      listed: () => Object.keys(tools).map((k) => {
        assert.match(k, /^stockade_/);
        return k.slice("stockade_".length);
      }),
      callTool: (name, args) => tools[`stockade_${name}`].execute(args, {}),
    });
  });
}
