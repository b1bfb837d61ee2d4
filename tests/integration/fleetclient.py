"""MCP clients for the fleet tests, as a router sees them: Modern speaks
2026-07-28 (every request on its own, its headers mirroring the body:
MCP-Protocol-Version, Mcp-Method, Mcp-Name, and Mcp-Param-Session-Id for
the session_id argument, which our tools mark x-mcp-header); Legacy speaks
2025-11-25 inside an MCP session (Mcp-Session-Id).  Both return (HTTP
status, the JSON-RPC reply) and never raise on an error reply: the tests
look at errors."""
import base64
import http.client
import json
import urllib.parse

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
TASKS = "io.modelcontextprotocol/tasks"


def _post(url, body, headers, timeout=60):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        c.request("POST", u.path, body, headers)
        r = c.getresponse()
        data = r.read().decode()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
    finally:
        c.close()
    if hdrs.get("content-type", "").startswith("text/event-stream"):
        lines = [l[6:] for l in data.split("\n") if l.startswith("data: ")]
        data = lines[-1] if lines else ""
    try:
        msg = json.loads(data) if data else None
    except ValueError:
        msg = {"raw": data}
    return r.status, msg, hdrs


class Modern:
    next_id = 1

    def __init__(self, url, token=None, tasks=False):
        self.url, self.token, self.tasks = url, token, tasks

    def meta(self):
        caps = {"extensions": {TASKS: {}}} if self.tasks else {}
        return {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": caps,
                "io.modelcontextprotocol/clientInfo": {"name": "fleet",
                                                       "version": "1"}}

    def rpc(self, method, params, headers=None, mirror=True, timeout=60):
        """headers: extra ones; a None value removes a mirrored one."""
        params = dict(params, _meta=self.meta())
        rid = Modern.next_id
        Modern.next_id += 1
        h = {"Content-Type": "application/json", "Accept": ACCEPT,
             "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        for k in ("name", "uri", "taskId"):
            if k in params:
                h["Mcp-Name"] = params[k]
        sid = (params.get("arguments") or {}).get("session_id")
        if mirror and sid is not None:
            h["Mcp-Param-Session-Id"] = sid
        for k, v in (headers or {}).items():
            if v is None:
                h.pop(k, None)
            else:
                h[k] = v
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                           "params": params})
        status, msg, _ = _post(self.url, body, h, timeout)
        return status, msg

    def tool(self, name, arguments, **kw):
        return self.rpc("tools/call", {"name": name, "arguments": arguments},
                        **kw)


def b64(s):
    return "=?base64?" + base64.b64encode(s.encode()).decode() + "?="


class Legacy:
    next_id = 1

    def __init__(self, url, token=None):
        self.url, self.token, self.sid = url, token, None

    def rpc(self, method, params=None, notify=False):
        h = {"Content-Type": "application/json", "Accept": ACCEPT}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
            h["MCP-Protocol-Version"] = LEGACY
        msg = {"jsonrpc": "2.0", "method": method}
        if not notify:
            msg["id"] = Legacy.next_id
            Legacy.next_id += 1
        if params is not None:
            msg["params"] = params
        status, reply, hdrs = _post(self.url, json.dumps(msg), h)
        if method == "initialize" and status == 200:
            self.sid = hdrs.get("mcp-session-id")
        return status, reply

    def initialize(self):
        st, r = self.rpc("initialize", {"protocolVersion": LEGACY,
                                        "capabilities": {},
                                        "clientInfo": {"name": "fleet",
                                                       "version": "1"}})
        assert st == 200 and "result" in r, (st, r)
        self.rpc("notifications/initialized", notify=True)
        return self.sid

    def tool(self, name, arguments):
        return self.rpc("tools/call", {"name": name, "arguments": arguments})
