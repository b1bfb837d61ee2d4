"""Raw HTTP/1.1 over a loopback socket, for tests that send what no
library would: every byte of the request is the caller's.  Responses are
read until the server closes or goes quiet, and split into status codes."""
import json
import socket
import time

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}}


def exchange(port, data, quiet=1.5, total=8.0, chunks=None):
    """Sends data (bytes, or a list of pieces sent with a pause between);
    returns everything received until close or `quiet` s of silence."""
    s = socket.create_connection(("127.0.0.1", port), timeout=total)
    pieces = data if isinstance(data, list) else [data]
    try:
        for p in pieces:
            s.sendall(p)
            if len(pieces) > 1:
                time.sleep(0.05)
    except OSError:
        pass
    out = b""
    end = time.time() + total
    s.settimeout(quiet)
    while time.time() < end:
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        except OSError:
            break
        if not b:
            break
        out += b
    s.close()
    return out


def statuses(resp):
    """The status codes of every response in resp, in order."""
    codes = []
    i = 0
    while True:
        j = resp.find(b"HTTP/1.", i)
        if j < 0:
            return codes
        line_end = resp.find(b"\r\n", j)
        parts = resp[j:line_end].split(b" ")
        if len(parts) >= 2 and parts[1].isdigit():
            codes.append(int(parts[1]))
        # Skip the head and a Content-Length body.
        head_end = resp.find(b"\r\n\r\n", j)
        if head_end < 0:
            return codes
        n = 0
        for h in resp[j:head_end].split(b"\r\n")[1:]:
            k, _, v = h.partition(b":")
            if k.strip().lower() == b"content-length":
                n = int(v.strip())
        i = head_end + 4 + n


def post(port, body, token=None, sid=None, extra=b""):
    """One well-formed POST /mcp; returns (status, headers dict, body)."""
    b = json.dumps(body).encode()
    h = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
         b"Content-Type: application/json\r\n"
         b"Accept: application/json, text/event-stream\r\n"
         b"Connection: close\r\nContent-Length: %d\r\n" % (port, len(b)))
    if token:
        h += b"Authorization: Bearer " + token.encode() + b"\r\n"
    if sid:
        h += b"Mcp-Session-Id: " + sid.encode() + b"\r\n"
    resp = exchange(port, h + extra + b"\r\n" + b, quiet=30, total=60)
    head, _, rest = resp.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1]) if lines and lines[0] else 0
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(b":")
        hdrs[k.strip().lower().decode()] = v.strip().decode()
    return status, hdrs, rest


def initialize(port, token=None):
    """A new MCP session: (status, Mcp-Session-Id or None)."""
    st, h, _ = post(port, INIT, token)
    return st, h.get("mcp-session-id")
