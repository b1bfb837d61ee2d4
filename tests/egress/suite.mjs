// The MCP side of test_suite.sh: one step per run, each a fresh MCP
// session of the official SDK client (Streamable HTTP) against the
// mcp-exec under test.  Sandbox sessions outlive MCP sessions, so steps
// pass the session id along.  A step asserts what the client sees and
// prints one JSON line (session id, code hashes) for the shell, which
// checks the audit trail.  Trusts nothing the server returns.
//
// Usage: node suite.mjs URL STEP [ARG...]
// Environment: SDK_NODE_MODULES, the node_modules that holds the SDK
// (tests/mcp/run.sh installs it there).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const CALL_TIMEOUT_MS = 20000;	// one tool call, whatever the server does

// ESM ignores NODE_PATH: the SDK is imported by path, through its own
// package.json's export map.
const sdkDir = join(process.env.SDK_NODE_MODULES ?? "", "@modelcontextprotocol/sdk");
const sdkPkg = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8"));
async function sdk(sub) {
  const e = sdkPkg.exports[`./${sub}`] ?? sdkPkg.exports["./*"];
  const rel = (typeof e === "string" ? e : e.import).replace("*", sub);
  return import(pathToFileURL(join(sdkDir, rel)).href);
}
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const sha = (s) => "sha256:" + createHash("sha256").update(s, "utf8").digest("hex");
const py = (s) => JSON.stringify(s);	// a plain ASCII string as a Python literal

// Python run in the sandbox.  The metadata address is built at run time:
// the pattern scanner refuses the literal, and netguard must hold even for
// code that gets past the scanner.
const code = {
  fetch: (url) => `import urllib.request
try:
    print(urllib.request.urlopen(${py(url)}, timeout=5).read().decode().strip())
except Exception as e:
    print("fetch failed:", type(e).__name__, e)
`,
  metadata: `import socket
meta = ".".join(str(b) for b in (169, 254, 169, 254))
s = socket.socket()
s.settimeout(1)
try:
    s.connect((meta, 80))
    print("metadata reached")
except OSError as e:
    print("metadata blocked:", type(e).__name__)
`,
  // A TXT query built by hand, to the resolver the sandbox was given.
  txt: (name) => `import socket, struct
ns = [l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")][0]
qname = b"".join(bytes([len(p)]) + p.encode() for p in ${py(name)}.split(".")) + b"\\0"
q = struct.pack(">6H", 0x5a5a, 0x0100, 1, 0, 0, 0) + qname + struct.pack(">2H", 16, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(q, (ns, 53))
r = s.recv(4096)
print("resolver=%s id=%#x rcode=%d answers=%d" % (ns, struct.unpack(">H", r[:2])[0], r[3] & 15, struct.unpack(">H", r[6:8])[0]))
`,
  // os.system: a flag rule of the shipped patterns.yaml, not a deny.
  shell: `import os
print("status", os.system("id -u >/dev/null"))
`,
  // A deny rule (NET-METADATA-001, the literal address); had anything
  // run, the marker would be in /workspace.
  deny: `open("/workspace/denied-ran", "w").write("ran")
import urllib.request
urllib.request.urlopen("http://169.254.169.254/latest/meta-data/", timeout=1)
`,
  marker: `import os
print("marker", os.path.exists("/workspace/denied-ran"))
`,
};

async function connect(url) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "stockade-egress-suite", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

async function python(client, src, sid) {
  const args = { code: src };
  if (sid) args.session_id = sid;
  return client.callTool({ name: "execute_python", arguments: args }, undefined,
    { timeout: CALL_TIMEOUT_MS });
}

// A call that must have run to completion; returns its stdout.
async function ran(client, src, sid) {
  const r = await python(client, src, sid);
  assert.notEqual(r.isError, true, `tool error: ${JSON.stringify(r.content)}`);
  assert.equal(r.structuredContent.exit_code, 0,
    `exit ${r.structuredContent.exit_code}: ${r.structuredContent.stderr}`);
  if (sid) assert.equal(r.structuredContent.session_id, sid, "another session answered");
  return r.structuredContent;
}

const WORLD = "world 203.0.113.10";

const steps = {
  // 1. A new session fetches from an allowed host by name.
  async fetch(c, host = "allowed.test") {
    const r = await ran(c, code.fetch(`http://${host}/`));
    assert.match(r.stdout, new RegExp(WORLD), r.stdout);
    assert.match(r.session_id, /^sess_[0-9a-f]+$/);
    return { session_id: r.session_id };
  },
  // 2. The metadata address, by address: dropped.
  async metadata(c, sid) {
    const r = await ran(c, code.metadata, sid);
    assert.match(r.stdout, /^metadata blocked/, r.stdout);
    return {};
  },
  // 3. A tunnelling-shaped TXT query: NXDOMAIN.
  async tunnel(c, sid, name) {
    const r = await ran(c, code.txt(name), sid);
    assert.match(r.stdout, /id=0x5a5a rcode=3 answers=0/, r.stdout);
    return { resolver: r.stdout.match(/resolver=(\S+)/)[1] };
  },
  // 4. Patterns: a flag rule runs and is recorded, a deny rule refuses
  // the call before anything of it runs.
  async patterns(c, sid) {
    const f = await ran(c, code.shell, sid);
    assert.match(f.stdout, /^status 0$/m, f.stdout);
    const d = await python(c, code.deny, sid);
    assert.equal(d.isError, true, `not refused: ${JSON.stringify(d)}`);
    assert.match(d.content[0].text, /^refused: the code matches rule NET-METADATA-001/,
      d.content[0].text);
    const m = await ran(c, code.marker, sid);
    assert.equal(m.stdout, "marker False\n", "the refused code ran");
    return { flag_hash: sha(code.shell), deny_hash: sha(code.deny) };
  },
  // 5. After the policy edit: allowed.test no longer resolves; the
  // address range the policy still allows is reachable.
  async dropped(c, sid) {
    const r = await ran(c, code.fetch("http://allowed.test/"), sid);
    assert.match(r.stdout, /^fetch failed: URLError/, r.stdout);
    const a = await ran(c, code.fetch("http://203.0.113.10/"), sid);
    assert.match(a.stdout, new RegExp(WORLD), a.stdout);
    return {};
  },
  // Any call in the session, by name through the resolver: NAME.
  async name(c, sid, host) {
    const src = code.fetch(`http://${host}/`);
    const r = await ran(c, src, sid);
    assert.match(r.stdout, new RegExp(WORLD), r.stdout);
    return { code_hash: sha(src) };
  },
  // By address (203.0.113.0/28 is allowed) and by name.
  async both(c, sid, host) {
    const a = await ran(c, code.fetch("http://203.0.113.10/"), sid);
    assert.match(a.stdout, new RegExp(WORLD), a.stdout);
    return steps.name(c, sid, host);
  },
  // stockade-auditd is down: nothing runs (audit_required).
  async unaudited(c, sid) {
    const r = await python(c, "print('ran without audit')", sid);
    assert.equal(r.isError, true, `ran without an audit trail: ${JSON.stringify(r)}`);
    assert.match(r.content[0].text, /^not run: the audit trail is unavailable/, r.content[0].text);
    return {};
  },
  // The session is gone (its mcp-exec was killed).
  async gone(c, sid) {
    const r = await python(c, "print(1)", sid);
    assert.equal(r.isError, true, `old session answered: ${JSON.stringify(r)}`);
    assert.equal(r.content[0].text, "session not found");
    return {};
  },
};

const [url, step, ...args] = process.argv.slice(2);
if (!steps[step]) {
  console.error(`suite.mjs: unknown step ${step}`);
  process.exit(2);
}
let conn;
try {
  conn = await connect(url);
  const out = await steps[step](conn.client, ...args);
  console.log(JSON.stringify(out));
} catch (e) {
  console.error(`suite.mjs ${step}: ${e.message}`);
  process.exitCode = 1;
} finally {
  if (conn) {
    // DELETE: end the MCP session, not the sandbox session.
    await conn.transport.terminateSession().catch(() => {});
    await conn.client.close().catch(() => {});
  }
}
