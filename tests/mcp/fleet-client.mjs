// The clients of the podman fleet (tests/kubernetes/fleet.sh): the
// official TypeScript SDK of both eras, through the router.  v1
// (@modelcontextprotocol/sdk) speaks 2025-11-25 inside an MCP session
// (Mcp-Session-Id, which names a node); v2 (@modelcontextprotocol/client,
// auto) speaks 2026-07-28, each request on its own, mirroring session_id
// into Mcp-Param-Session-Id.  Phases share a state file: every call a
// client was answered for is listed (session, code) so that fleet.sh can
// find it in its node's audit log, and in no other's.
// usage: node fleet-client.mjs PHASE STATE URL TOKEN [ARG...]
//   open N            N sessions (half of each era), a second call in each
//   kill NODE         NODE was killed: its sessions are lost (-31001), the
//                     others go on, new sessions go elsewhere
//   drain NODE GO     a call runs in a session of NODE; GO (a file) is made,
//                     and fleet.sh sends SIGTERM: the call ends, new code in
//                     NODE's sessions is refused as draining, new sessions
//                     go elsewhere; once NODE is gone, -31001
//   quota N           N calls with no session (each may make one), spread
//                     over the nodes; prints how many ran on each node
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as Http1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from "@modelcontextprotocol/client";

const LOST = -31001;
const [phase, stateFile, url, token, ...rest] = process.argv.slice(2);
const st = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, "utf8"))
  : { sessions: [], acks: [] };
const headers = { Authorization: `Bearer ${token}` };

function fail(msg) {
  console.error(`FAIL: ${msg}`);
  process.exit(1);
}
function note(msg) {
  console.log(`  ${msg}`);
}
const nodeOf = (handle) => handle.slice(handle.lastIndexOf(".") + 1);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// v1: one MCP session; mcpSession resumes one made by an earlier phase.
async function v1(mcpSession) {
  const transport = new Http1(new URL(url), { requestInit: { headers },
    sessionId: mcpSession });
  const client = new Client1({ name: "fleet-v1", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, era: "v1" };
}
async function v2() {
  const transport = new Http2(new URL(url), { requestInit: { headers } });
  const client = new Client2({ name: "fleet-v2", version: "2.0.0" },
    { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  if (client.getNegotiatedProtocolVersion() !== "2026-07-28")
    fail(`v2 negotiated ${client.getNegotiatedProtocolVersion()}`);
  // The tools' schemas say which argument goes in a header (x-mcp-header):
  // the SDK mirrors session_id into Mcp-Param-Session-Id once it knows.
  await client.listTools();
  return { client, transport, era: "v2" };
}

// python(c, code, sid): the call's structured result; an answered call is
// listed as acknowledged.  Errors (a tool's or the protocol's) throw.
async function python(c, code, sid) {
  const args = sid ? { code, session_id: sid } : { code };
  const r = await c.client.callTool({ name: "execute_python", arguments: args });
  if (r.isError)
    throw Object.assign(new Error(r.content?.[0]?.text ?? "tool error"), { tool: r });
  const s = r.structuredContent;
  if (s.exit_code !== 0)
    throw new Error(`exit ${s.exit_code}: ${s.stderr}`);
  st.acks.push({ sid: s.session_id, code });
  return s;
}

// The error a call got: JSON-RPC code and message (v2 and v1 put it on
// the error; v1 puts a 404's body in the message).
async function refused(c, code, sid) {
  try {
    await python(c, code, sid);
  } catch (e) {
    return { code: e.code, message: String(e.message), tool: e.tool };
  }
  return null;
}

async function pool(n, width, fn) {
  const out = new Array(n);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await fn(i);
    }
  }));
  return out;
}

function perNode(sids) {
  const n = {};
  for (const s of sids)
    n[nodeOf(s)] = (n[nodeOf(s)] ?? 0) + 1;
  return n;
}

async function open(count) {
  const n = Number(count);
  const t0 = Date.now();
  const half = Math.floor(n / 2);
  // v1: a client (an MCP session, on the node the router chose) per session.
  const ones = await pool(half, 6, async (i) => {
    const c = await v1();
    const s = await python(c, `tag = 'k${i}'\nprint('open ${i}')`);
    if (nodeOf(s.session_id) !== nodeOf(c.transport.sessionId))
      fail(`a 2025 session's sandbox ${s.session_id} is not on its MCP session's node ${c.transport.sessionId}`);
    return { sid: s.session_id, era: "v1", tag: `k${i}`, mcp: c.transport.sessionId };
  });
  // v2: one client; every call on its own, new ones to the least loaded.
  const c2 = await v2();
  const twos = await pool(n - half, 6, async (j) => {
    const i = half + j;
    const s = await python(c2, `tag = 'k${i}'\nprint('open ${i}')`);
    return { sid: s.session_id, era: "v2", tag: `k${i}` };
  });
  st.sessions = [...ones, ...twos];
  const sids = st.sessions.map((s) => s.sid);
  if (new Set(sids).size !== n)
    fail(`${new Set(sids).size} distinct sessions of ${n}`);
  const spread = perNode(sids);
  if (Object.keys(spread).length !== 3 || Math.min(...Object.values(spread)) < n / 10)
    fail(`new sessions not spread over three nodes: ${JSON.stringify(spread)}`);
  note(`${n} sessions through the router in ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
    `(${half} SDK v1 2025-11-25, ${n - half} SDK v2 2026-07-28), per node ${JSON.stringify(spread)}`);
  // A second call in each finds its variable: it reached the sandbox's node.
  await pool(n, 6, async (i) => {
    const s = st.sessions[i];
    const c = s.era === "v1" ? await v1(s.mcp) : c2;
    const r = await python(c, `print(tag)  # again ${i}`, s.sid);
    if (r.stdout !== `${s.tag}\n`)
      fail(`session ${s.sid} (${s.era}) forgot its variable: ${JSON.stringify(r.stdout)}`);
  });
  note("each session's second call found its variable on its node (v1 by Mcp-Session-Id, v2 by Mcp-Param-Session-Id)");
  // A 2025 client that lost its MCP session: a new one, on whatever node,
  // still reaches its sandbox (the router routes by the body's session_id).
  let moved = 0;
  for (const s of ones.slice(0, 9)) {
    const c = await v1();
    const r = await python(c, `print(tag)  # new MCP session`, s.sid);
    if (r.stdout !== `${s.tag}\n`)
      fail(`a new MCP session did not reach ${s.sid}`);
    if (nodeOf(c.transport.sessionId) !== nodeOf(s.sid))
      moved++;
  }
  note(`a 2025 client with a new MCP session keeps its sandbox (${moved} of 9 on another node than the sandbox)`);
  await c2.client.close();
}

async function kill(victim) {
  const mine = st.sessions.filter((s) => nodeOf(s.sid) === victim);
  const c2 = await v2();
  // Until the router's checks fail (two of them), a call may get the
  // same error as a 502/503: -31001 in every case, never a new sandbox.
  let e;
  for (let i = 0; i < 50; i++) {
    e = await refused(c2, "print(tag)", mine.find((s) => s.era === "v2").sid);
    if (e?.code === LOST)
      break;
    await sleep(200);
  }
  const want = `session lost: node ${victim} is gone`;
  for (const s of mine) {
    const c = s.era === "v1" ? await v1(s.mcp) : c2;
    e = await refused(c, `print(tag)  # after the kill`, s.sid);
    if (e === null)
      fail(`a session of the killed ${victim} answered: ${s.sid}`);
    // v1's MCP session is the lost node's: 404 carrying the same error.
    if (s.era === "v2" ? e.code !== LOST || e.message.indexOf(want) === -1
      : e.message.indexOf(String(LOST)) === -1 || e.message.indexOf(want) === -1)
      fail(`${s.era} session ${s.sid} of the killed node: ${JSON.stringify(e).slice(0, 300)}`);
  }
  note(`${mine.length} sessions of killed ${victim}, both eras: -31001 "${want}"`);
  const live = st.sessions.filter((s) => nodeOf(s.sid) !== victim);
  await pool(live.length, 6, async (i) => {
    const s = live[i];
    const c = s.era === "v1" ? await v1(s.mcp) : c2;
    const r = await python(c, `print(tag)  # live ${i}`, s.sid);
    if (r.stdout !== `${s.tag}\n`)
      fail(`a live node's session ${s.sid}: ${r.stdout}`);
  });
  const fresh = [];
  for (let i = 0; i < 6; i++) {
    const c = i % 2 ? c2 : await v1();
    const r = await python(c, `tag = 'n${i}'`);
    if (nodeOf(r.session_id) === victim)
      fail(`a new session went to the dead node: ${r.session_id}`);
    fresh.push({ sid: r.session_id, era: c.era, tag: `n${i}`, mcp: c.transport.sessionId });
  }
  note(`the other ${live.length} sessions go on; new sessions (both eras) go to live nodes ${JSON.stringify(perNode(fresh.map((s) => s.sid)))}`);
  st.sessions = [...live, ...fresh];
  await c2.client.close();
}

async function drain(node, go) {
  const mine = st.sessions.filter((s) => nodeOf(s.sid) === node && s.era === "v2");
  if (mine.length < 2)
    fail(`${node} holds ${mine.length} v2 sessions`);
  const c2 = await v2();
  const running = python(c2, "open('/workspace/started', 'w').close()\n" +
    "import time\ntime.sleep(4)\nprint(tag)", mine[0].sid);
  for (let i = 0; ; i++) {
    const r = await c2.client.callTool({ name: "list_files",
      arguments: { session_id: mine[0].sid } });
    if (r.structuredContent?.files?.some((f) => f.name === "started"))
      break;
    if (i === 100)
      fail("the call in the draining node did not start");
    await sleep(50);
  }
  writeFileSync(go, "");
  // Until the node has seen SIGTERM, new code still runs (harmlessly).
  let e;
  for (let i = 0; i < 100; i++) {
    e = await refused(c2, `print(tag)  # draining ${i}`, mine[1].sid);
    if (e !== null)
      break;
    await sleep(50);
  }
  if (e?.code !== LOST || e.message.indexOf(`node ${node} is draining`) === -1)
    fail(`new code in a draining node's session: ${JSON.stringify(e)}`);
  for (let i = 0; i < 4; i++) {
    const r = await python(c2, `tag = 'd${i}'`);
    if (nodeOf(r.session_id) === node)
      fail(`the draining ${node} took a new session`);
    st.sessions.push({ sid: r.session_id, era: "v2", tag: `d${i}` });
  }
  note(`draining ${node}: new code in its sessions -31001 (draining), new sessions go elsewhere`);
  const r = await running;
  if (r.stdout !== `${mine[0].tag}\n`)
    fail(`the call running at SIGTERM: ${JSON.stringify(r)}`);
  note("the call running at SIGTERM finished, and its answer came back");
  st.drained = node;
  await c2.client.close();
}

async function gone(node) {
  const c2 = await v2();
  const s = st.sessions.find((x) => nodeOf(x.sid) === node && x.era === "v2");
  let e;
  for (let i = 0; i < 50; i++) {
    e = await refused(c2, "print(tag)", s.sid);
    if (e?.code === LOST && e.message.indexOf(`node ${node} is gone`) !== -1)
      break;
    await sleep(200);
  }
  if (e?.code !== LOST || e.message.indexOf(`node ${node} is gone`) === -1)
    fail(`a session of the drained node, once it is gone: ${JSON.stringify(e)}`);
  note(`once ${node} has stopped, its sessions are -31001 "session lost: node ${node} is gone"`);
  st.sessions = st.sessions.filter((x) => nodeOf(x.sid) !== node);
  await c2.client.close();
}

async function quota(count) {
  const n = Number(count);
  const c2 = await v2();
  const ran = {};
  let refusedN = 0;
  await pool(n, 6, async (i) => {
    const e = await refused(c2, `print('quota ${i}')`);
    if (e === null)
      return;
    if (!/calls_per_minute \(\d+\)/.test(e.message))
      fail(`quota call ${i}: ${e.message}`);
    refusedN++;
  });
  for (const a of st.acks.filter((x) => x.code.startsWith("print('quota ")))
    ran[nodeOf(a.sid)] = (ran[nodeOf(a.sid)] ?? 0) + 1;
  console.log(JSON.stringify({ ran, refused: refusedN }));
  await c2.client.close();
}

const phases = { open, kill, drain, gone, quota };
if (!phases[phase])
  fail(`no phase ${phase}`);
try {
  await phases[phase](...rest);
} catch (e) {
  fail(`${phase}: ${e.stack ?? e}`);
}
writeFileSync(stateFile, JSON.stringify(st));
