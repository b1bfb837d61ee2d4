// Shared by the MCP client tests: connects the official SDK client to the
// mcp-exec under test (paths from the environment run.sh sets up).
import { openSync } from "node:fs";
import { after } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export const env = {
  mcpExec: process.env.MCP_EXEC,
  rules: process.env.MCP_RULES,
  state: process.env.MCP_STATE,
  inputs: process.env.MCP_INPUTS,
  // Rules whose audit socket leads nowhere.
  rulesNoAudit: process.env.MCP_RULES_NOAUDIT,
  stateNoAudit: process.env.MCP_STATE_NOAUDIT,
  // The server's stderr: run.sh looks there for sanitizer reports.
  stderr: process.env.MCP_STDERR,
  // stockade-auditd's log directory (records as JSON lines).
  auditLog: process.env.MCP_AUDIT_LOG,
};

export async function connectStdio(rules = env.rules, state = env.state) {
  const transport = new StdioClientTransport({
    command: env.mcpExec,
    args: ["--stdio", "--rules", rules, "--state-dir", state],
    // The SDK passes only a few variables by default; give it PATH only.
    env: { PATH: process.env.PATH },
    stderr: env.stderr ? openSync(env.stderr, "a") : "inherit",
  });
  const client = new Client({ name: "stockade-tests", version: "1.0.0" });
  await client.connect(transport);
  stdioClients.add(client);
  client.onclose = () => stdioClients.delete(client);
  return client;
}

// A test that fails before its close() leaves its mcp-exec running, and
// the file's process would wait on it for ever.  Once the file's tests and
// its own after hooks are done (this hook runs first: lib.mjs is imported
// first), whatever is still open is closed; the timer holds nothing up
// when nothing is (unref).
const stdioClients = new Set();
after(() => {
  setTimeout(() => {
    for (const c of stdioClients)
      c.close().catch(() => {});
  }, 1000).unref();
});

// Every session a test opens, so that closeSessions() can end them and
// the tests stay under the per-principal session limit.
const opened = new Set();

export async function python(client, code, extra = {}, options = {}) {
  const r = await client.callTool(
    { name: "execute_python", arguments: { code, ...extra } },
    undefined,
    options,
  );
  const sid = r.structuredContent?.session_id;
  if (sid) opened.add(sid);
  return r;
}

export async function closeSessions(client) {
  for (const sid of opened)
    await client.callTool({ name: "close_session", arguments: { session_id: sid } });
  opened.clear();
}

export const http = {
  url: process.env.MCP_HTTP_URL,
  tokenA: process.env.MCP_TOKEN_A,	// user:alice
  tokenB: process.env.MCP_TOKEN_B,	// user:bob
};

export async function connectHttp(token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(http.url), {
    requestInit: { headers },
  });
  const client = new Client({ name: "stockade-tests", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}
