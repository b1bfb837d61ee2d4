"""Speaks stockade-auditd's framing by hand, to send what a correct client
never would.  Usage: rawclient.py SOCKET CASE; prints each reply's error
code (or "ack"), one per line."""
import json
import socket
import struct
import sys


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(10)
    return s


def frame(payload):
    return struct.pack(">I", len(payload)) + payload


def recv(s):
    hdr = b""
    while len(hdr) < 4:
        chunk = s.recv(4 - len(hdr))
        if not chunk:
            return None
        hdr += chunk
    n = struct.unpack(">I", hdr)[0]
    body = b""
    while len(body) < n:
        chunk = s.recv(n - len(body))
        if not chunk:
            return None
        body += chunk
    return json.loads(body)


def say(reply):
    if reply is None:
        print("closed")
    elif reply["type"] == "ack":
        print("ack")
    else:
        print(reply["error"])


NOTE = {"event": "operator_note", "principal": "user:test", "message": "hi"}


def append(ev, **kw):
    msg = {"type": "append", "event": ev}
    msg.update(kw)
    return json.dumps(msg).encode()


def main():
    path, case = sys.argv[1], sys.argv[2]
    s = connect(path)
    if case == "bad-inputs":
        payloads = [
            b"this is not json",
            b"[1,2,3]",
            b'{"type":"append"}',
            append({"event": "code_execution", "principal": "p"}),
            append({"event": "checkpoint", "cp_seq": 1}),
            append(dict(NOTE, seq=5)),
            b'{"type":"append","event":{"event":"operator_note",'
            b'"principal":"\xff\xfe","message":"m"}}',
            b'{"type":"append","event":{"event":"operator_note",'
            b'"principal":"p","message":"\\u0000"}}',
            b'{"type":"frobnicate"}',
            append(NOTE, sync="yes"),
            append(NOTE, id=[1]),
            append(NOTE, id=1),
        ]
        for p in payloads:
            s.sendall(frame(p))
            say(recv(s))
        # A frame header announcing more than the cap: error, then closed.
        s.sendall(struct.pack(">I", 100 * 1024 * 1024) + b"{")
        say(recv(s))
        say(recv(s))
    elif case == "partial-then-close":
        s.sendall(struct.pack(">I", 50) + b'{"type":')
        s.close()
        s = connect(path)
        s.sendall(frame(append(NOTE, id=2)))
        say(recv(s))
    elif case == "one":
        try:
            s.sendall(frame(append(NOTE, id=1)))
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused at accept: the reply is already waiting
        say(recv(s))
    elif case == "flood":
        # N connections from one process, as fast as the daemon refuses.
        for i in range(int(sys.argv[3])):
            if i:
                s = connect(path)
            try:
                s.sendall(frame(append(NOTE, id=1)))
            except (BrokenPipeError, ConnectionResetError):
                pass
            say(recv(s))
            s.close()
    elif case == "pipeline":
        n = int(sys.argv[3])
        for i in range(n):
            s.sendall(frame(append(dict(NOTE, message="m%d" % i), id=i)))
        for i in range(n):
            say(recv(s))
    else:
        sys.exit("unknown case " + case)


main()
