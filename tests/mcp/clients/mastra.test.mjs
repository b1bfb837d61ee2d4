// Mastra's MCPClient (@mastra/mcp): one client per transport, its tools
// (named server_tool) executed as a Mastra agent would, which returns a
// tool's structured content as the result.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { MCPClient } from "@mastra/mcp";
import { TOOLS, bounded, calls, expectPython, expectRun, httpServer,
  stdioServer } from "./lib.mjs";

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

    const execute = (name, args) => tools[`stockade_${name}`].execute(args, {});
    const python = async (call) => expectPython(
      await execute("execute_python", call.args), call, async (sid) =>
        assert.match(JSON.stringify(await execute("close_session",
          { session_id: sid })), /session closed/));
    const command = async (call) => expectRun(await execute("run_command", call.args), call);

    test("lists the six tools", () => {
      assert.deepEqual(Object.keys(tools).sort(), TOOLS.map((t) => `stockade_${t}`));
    });
    test("execute_python reads a host-path file (files)", () => python(calls.host));
    test("execute_python reads inline files (inline_files)", () => python(calls.inline));
    test("run_command runs an allowlisted command on a host-path file (files)",
      () => command(calls.command));
    test("run_command reads an inline file (inline_files)",
      () => command(calls.inlineCommand));
  });
}
