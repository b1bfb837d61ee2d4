// The official TypeScript SDK v2 client (@modelcontextprotocol/client)
// against one mcp-exec in each of its version negotiation modes, over
// stdio and HTTP: legacy (initialize, 2025-11-25), auto (server/discover,
// then 2026-07-28 here) and pinned to 2026-07-28 (no fallback: this fails
// against a server that speaks only the initialize-based eras).
import { test } from "node:test";
import assert from "node:assert/strict";
import { openSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { env, http } from "./lib.mjs";

const MODES = {
  legacy: { mode: "legacy" },
  auto: { mode: "auto" },
  pinned: { mode: { pin: "2026-07-28" } },
};
const EXPECT = { legacy: "2025-11-25", auto: "2026-07-28", pinned: "2026-07-28" };

function stdioTransport() {
  return new StdioClientTransport({
    command: env.mcpExec,
    args: ["--stdio", "--rules", env.rules, "--state-dir", env.state],
    env: { PATH: process.env.PATH },
    stderr: env.stderr ? openSync(env.stderr, "a") : "inherit",
  });
}
function httpTransport() {
  return new StreamableHTTPClientTransport(new URL(http.url), {
    requestInit: { headers: { Authorization: `Bearer ${http.tokenA}` } },
  });
}

async function connect(mode, transport) {
  const client = new Client({ name: "stockade-sdk2", version: "2.0.0" },
    { versionNegotiation: MODES[mode] });
  await client.connect(transport);
  return client;
}

for (const [kind, make] of [["stdio", stdioTransport], ["http", httpTransport]]) {
  for (const mode of Object.keys(MODES)) {
    test(`sdk v2 ${mode} over ${kind}: discover, list, a session across calls, errors`, async () => {
      const client = await connect(mode, make());
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), EXPECT[mode]);
        assert.equal(client.getServerVersion()?.name, "stockade-mcp-exec");
        if (mode !== "legacy") {
          const d = await client.discover();
          assert.ok(d.supportedVersions.includes("2026-07-28"));
          assert.ok(d.supportedVersions.includes("2025-11-25"));
          assert.ok(d.capabilities.tools);
        }
        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === "execute_python"));
        let r = await client.callTool({ name: "execute_python", arguments: { code: "n = 20" } });
        assert.notEqual(r.isError, true, JSON.stringify(r.content));
        const sid = r.structuredContent.session_id;
        r = await client.callTool({ name: "execute_python",
          arguments: { code: "print(n + 22)", session_id: sid } });
        assert.match(r.structuredContent.stdout, /42/);
        // The session is an explicit handle: listed, with its expiry.
        r = await client.callTool({ name: "list_sessions", arguments: {} });
        const mine = r.structuredContent.sessions.find((s) => s.session_id === sid);
        assert.ok(mine, JSON.stringify(r.structuredContent));
        assert.ok(mine.expires_in_s > 0 && mine.expires_in_s <= 300);
        assert.equal(mine.busy, false);
        // A refusal is a result; a call of no tool is a protocol error.
        r = await client.callTool({ name: "execute_python",
          arguments: { code: "1", session_id: "sess_00000000000000000000000000000000" } });
        assert.equal(r.isError, true);
        await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }));
        r = await client.callTool({ name: "close_session", arguments: { session_id: sid } });
        assert.notEqual(r.isError, true);
        r = await client.callTool({ name: "execute_python",
          arguments: { code: "1", session_id: sid } });
        assert.equal(r.isError, true, "a closed session is gone");
      } finally {
        await client.close();
      }
    });
  }
}
