// The official MCP SDK client (v1) connecting with its OAuth support: it
// meets mcp-exec's 401, reads the RFC 9728 metadata, discovers the
// provider, gets a client_credentials token for the resource, and lists
// the tools.  Usage: node sdk.mjs URL; prints the tool names.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const url = new URL(process.argv[2]);
const authProvider = new ClientCredentialsProvider({
  clientId: 'sdk-client', clientSecret: 'sdk-secret', scope: 'mcp:tools',
});
const client = new Client({ name: 'sdk-oauth', version: '1' });
await client.connect(new StreamableHTTPClientTransport(url, { authProvider }));
const { tools } = await client.listTools();
console.log(tools.map((t) => t.name).join(' '));
await client.close();
