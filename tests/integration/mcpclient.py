"""A minimal MCP client for the integration tests: stdio (a child process,
one JSON-RPC message per line) and Streamable HTTP (one POST per message,
JSON or SSE replies).  Both expose initialize(), call(method, params) and
tool(name, arguments) -> result; replies that are errors raise McpError."""
import http.client
import json
import subprocess
import urllib.parse

PROTOCOL = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


class McpError(Exception):
    pass


class _Client:
    next_id = 1

    def initialize(self):
        r = self.call("initialize", {"protocolVersion": PROTOCOL,
                                     "capabilities": {},
                                     "clientInfo": {"name": "it",
                                                    "version": "1"}})
        self.notify("notifications/initialized")
        return r

    def call(self, method, params=None):
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        self.next_id += 1
        if params is not None:
            msg["params"] = params
        reply = self.exchange(msg)
        if "error" in reply:
            raise McpError(reply["error"].get("message"))
        return reply["result"]

    def tool(self, name, arguments):
        return self.call("tools/call", {"name": name, "arguments": arguments})


class Stdio(_Client):
    def __init__(self, argv, stderr=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=stderr,
                                  text=True)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def exchange(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise McpError("the server closed stdout")
            reply = json.loads(line)
            if reply.get("id") == msg["id"]:
                return reply

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=30)


class Http(_Client):
    def __init__(self, url, token=None):
        u = urllib.parse.urlsplit(url)
        self.host, self.port, self.path = u.hostname, u.port, u.path
        self.headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if token:
            self.headers["Authorization"] = "Bearer " + token
        self.sid = None

    def _post(self, msg):
        c = http.client.HTTPConnection(self.host, self.port, timeout=120)
        h = dict(self.headers)
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
            h["MCP-Protocol-Version"] = PROTOCOL
        c.request("POST", self.path, json.dumps(msg), h)
        r = c.getresponse()
        body = r.read().decode()
        c.close()
        if r.getheader("Mcp-Session-Id"):
            self.sid = r.getheader("Mcp-Session-Id")
        return r, body

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._post(msg)

    def exchange(self, msg):
        r, body = self._post(msg)
        if r.status != 200:
            raise McpError("HTTP %d: %s" % (r.status, body[:200]))
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            for block in body.split("\n\n"):
                data = "".join(l[6:] for l in block.split("\n")
                               if l.startswith("data: "))
                if data and json.loads(data).get("id") == msg["id"]:
                    return json.loads(data)
            raise McpError("no reply in the event stream")
        return json.loads(body)


def structured(result):
    """A tool result's structuredContent; raises if it is an error."""
    if result.get("isError") and "structuredContent" not in result:
        raise McpError(result["content"][0]["text"])
    return result["structuredContent"]
