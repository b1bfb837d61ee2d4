// OpenAI Agents JS (@openai/agents-core): MCPServerStdio and
// MCPServerStreamableHttp, their tools turned into function tools as an
// agent's run does (getAllMcpTools) and invoked with the JSON a model would
// send; no model is called.  Strict mode (convertSchemasToStrict) needs
// every property required and nullable, and cannot convert an anyOf whose
// object branch has optional properties: it fell back to non-strict for
// execute_python and run_command while files' items were anyOf(string,
// {name, content, encoding?}).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { MCPServerStdio, MCPServerStreamableHttp, RunContext,
  getAllMcpTools } from "@openai/agents-core";
import { TOOLS, bounded, calls, clientTests, expectRun, httpServer, python,
  stdioServer } from "./lib.mjs";

// A failed call's error goes to the model as text: the server's own words
// here, not the default "An error occurred while running the tool".
const errorFunction = ({ error }) => `tool error: ${error.message}`;
const servers = {
  stdio: () => new MCPServerStdio({ name: "stockade", errorFunction,
    ...stdioServer("openai") }),
  http: () => new MCPServerStreamableHttp({ name: "stockade", errorFunction,
    url: httpServer.url, requestInit: { headers: httpServer.headers } }),
};

for (const [transport, make] of Object.entries(servers)) {
  describe(`OpenAI Agents over ${transport}`, () => {
    let server, tools;
    const ctx = new RunContext();
    before(async () => {
      server = make();
      await server.connect();
      tools = await getAllMcpTools({ mcpServers: [server], runContext: ctx });
    });
    after(() => bounded("close()", server.close()));

    // What a tool returns to the model is the result's one text item:
    // execute_python's and run_command's structured content as JSON,
    // close_session's a sentence.
    const callWith = (list) => async (name, args) => {
      const tool = list.find((t) => t.name === name);
      const out = await tool.invoke(ctx, JSON.stringify(args));
      assert.equal(out.type, "text", JSON.stringify(out));
      return name === "close_session" ? out.text : JSON.parse(out.text);
    };

    clientTests({
      listed: async () => {
        assert.deepEqual((await server.listTools()).map((t) => t.name).sort(), TOOLS);
        return tools.map((t) => t.name);
      },
      callTool: (name, args) => callWith(tools)(name, args),
    });
    test("the server object's own callTool runs run_command", async () => {
      const r = await server.callToolResult("run_command", calls.command.args);
      expectRun(r.structuredContent, calls.command);
    });

    // In strict mode a model sends every property, null for those it
    // leaves out; the tool must take them out again before the call.
    test("all six tools convert to strict mode and take a model's nulls", async () => {
      const strict = await getAllMcpTools({ mcpServers: [server], runContext: ctx,
        convertSchemasToStrict: true });
      const loose = strict.filter((t) => t.strict !== true).map((t) => t.name);
      assert.deepEqual(loose, [], "these tools fell back to non-strict");
      const asModel = (name, call) => ({ ...call, args: withNulls(
        strict.find((t) => t.name === name).parameters, call.args) });
      await python(callWith(strict), asModel("execute_python", calls.inline));
      const cmd = asModel("run_command", calls.command);
      assert.ok(Object.values(cmd.args).includes(null));
      expectRun(await callWith(strict)("run_command", cmd.args), cmd);
    });
  });
}

// The arguments as a model in strict mode sends them: every property the
// (strict) schema has, null where the call has none.
function withNulls(schema, value) {
  const s = schema.anyOf?.find((b) => b.type !== "null") ?? schema;
  if (Array.isArray(value))
    return value.map((v) => withNulls(s.items, v));
  if (value === null || typeof value !== "object")
    return value;
  const out = { ...value };
  for (const [k, sub] of Object.entries(s.properties ?? {}))
    out[k] = k in value ? withNulls(sub, value[k]) : null;
  return out;
}
