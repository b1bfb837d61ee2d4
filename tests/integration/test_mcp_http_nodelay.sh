#!/bin/bash
# A kept-alive HTTP connection is not held up by Nagle's algorithm: the
# server writes a reply in several pieces (head, chunk size, data, end),
# and without TCP_NODELAY each piece after the first waits for the
# client's delayed ACK, 40 ms a call (seen: 44 ms for `1+1` in an existing
# session, against 0.7 ms on a fresh connection; the SDKs keep
# connections alive).  The server's end of a client's connection, taken
# from mcp-exec with pidfd_getfd(2), must have TCP_NODELAY set, for a
# plain and for a 2026-07-28 call's connection; and calls on one kept
# connection are then as quick as on fresh ones (median, loose bound).
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT

start_auditd
mcp_rules
mcp_tokens "user:a" "user:b"
start_mx

"$PY" - "$PORT" "$TOKA" "$MX_PID" <<'EOF' || fail "TCP_NODELAY (see above)"
import ctypes, http.client, json, os, socket, sys, time

port, tok, pid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
SYS_pidfd_open, SYS_pidfd_getfd = 434, 438
pidfd = os.pidfd_open(pid)

def server_end(c):
    """The server's socket of client connection c, as a socket object."""
    local = c.sock.getsockname()[1]
    want = None
    with open("/proc/net/tcp") as f:
        for l in f.readlines()[1:]:
            x = l.split()
            if int(x[2].split(":")[1], 16) == local and int(x[1].split(":")[1], 16) == port:
                want = x[9]	# the server end's inode
    assert want, "no server end for local port %d" % local
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "socket:[%s]" % want:
                n = libc.syscall(SYS_pidfd_getfd, pidfd, int(fd), 0)
                assert n >= 0, os.strerror(ctypes.get_errno())
                return socket.socket(fileno=n)
        except FileNotFoundError:
            pass
    raise AssertionError("mcp-exec holds no socket inode %s" % want)

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}
def call(c, sid=None):
    a = {"code": "1+1"}
    h = {"Content-Type": "application/json",
         "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
         "Mcp-Name": "execute_python", "Authorization": "Bearer " + tok}
    if sid:
        a["session_id"] = h["Mcp-Param-Session-Id"] = sid
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1,
              "method": "tools/call", "params": {"name": "execute_python",
              "arguments": a, "_meta": META}}), h)
    r = c.getresponse()
    body = r.read().decode()
    assert r.status == 200, (r.status, body[:200])
    return body.split('"session_id\\":\\"')[1].split("\\")[0]

keep = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
sid = call(keep)
s = server_end(keep)
nodelay = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
s.close()
assert nodelay, "the server's end of a kept-alive connection has Nagle on"
def median(f):
    v = []
    for _ in range(15):
        t = time.monotonic()
        f()
        v.append(time.monotonic() - t)
    return sorted(v)[7] * 1000
kept = median(lambda: call(keep, sid))
fresh = median(lambda: call(http.client.HTTPConnection("127.0.0.1", port,
                                                       timeout=30), sid))
print("  TCP_NODELAY on the server's end; a call in an existing session: "
      "kept connection %.1f ms, fresh connection %.1f ms (median)" % (kept, fresh))
# Nagle against a delayed ACK costs 40 ms or more: far above either.
assert kept < fresh + 30, (kept, fresh)
EOF
