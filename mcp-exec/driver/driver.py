"""Stockade session driver: runs inside a sandbox, one long-lived Python
process per session.  mcp-exec sends it code over the control socket (fd 3)
together with a fresh stdout and stderr for each call, so the output of two
calls never mixes; variables, imports and /workspace persist between calls.

Protocol (both ways: a 4-byte big-endian length, then one JSON object):
  driver -> mcp-exec  {"op": "ready", "python": "3.11.2"}          once, at start
  mcp-exec -> driver  {"op": "exec", "id": N, "code": "..."}       + 2 fds (SCM_RIGHTS)
  driver -> mcp-exec  {"op": "done", "id": N, "status": S, "exit_code": C}
      S: ok (0), error (1: uncaught exception, traceback on the call's
      stderr), exit (SystemExit's code), interrupted (130: SIGINT)

The code runs in this very process, so it can reach the control socket:
mcp-exec treats everything the driver says as untrusted.  This file is
mounted read-only.
"""
import builtins
import json
import os
import signal
import socket
import struct
import sys
import traceback

CONTROL_FD = 3
FRAME_MAX = 16 * 1024 * 1024
HEADER = struct.Struct(">I")

running = False


def on_sigint(signum, frame):
    # Only code that is running is interrupted; a late signal is dropped.
    if running:
        raise KeyboardInterrupt


class Reader:
    """Frames from the control socket.  One recvmsg usually holds a whole
    frame; bytes past it are kept for the next."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()

    def fill(self, n, fds):
        while len(self.buf) < n:
            data, got, _flags, _addr = socket.recv_fds(
                self.sock, max(n - len(self.buf), 65536), 4)
            if not data:
                raise EOFError
            self.buf += data
            fds += got

    def frame(self):
        fds = []
        self.fill(HEADER.size, fds)
        (length,) = HEADER.unpack_from(self.buf)
        if length == 0 or length > FRAME_MAX:
            raise ValueError("frame length %d" % length)
        self.fill(HEADER.size + length, fds)
        body = bytes(self.buf[HEADER.size:HEADER.size + length])
        del self.buf[:HEADER.size + length]
        return json.loads(body), fds


def send_frame(sock, obj):
    body = json.dumps(obj).encode()
    sock.sendall(HEADER.pack(len(body)) + body)


def run(code, namespace):
    """Runs one cell; returns (status, exit_code)."""
    global running
    try:
        compiled = compile(code, "<cell>", "exec")
    except SyntaxError:
        traceback.print_exc(limit=0)
        return "error", 1
    running = True
    try:
        exec(compiled, namespace)
        return "ok", 0
    except SystemExit as e:
        if e.code is None:
            return "exit", 0
        if isinstance(e.code, int):
            return "exit", e.code & 0xff
        print(e.code, file=sys.stderr)
        return "exit", 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return "interrupted", 130
    except BaseException:
        # The driver's own frame is noise to the user: start at the cell.
        etype, value, tb = sys.exc_info()
        traceback.print_exception(etype, value, tb.tb_next if tb else None)
        return "error", 1
    finally:
        running = False


def attach(out_fd, err_fd):
    """Points fds 1 and 2 (and sys.stdout, sys.stderr) at this call's pipes."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.close(out_fd)
    os.close(err_fd)


def detach(devnull):
    """Closes this call's pipes: mcp-exec sees end of file."""
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:  # noqa: BLE001 - user code may have broken it
            pass
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def main():
    signal.signal(signal.SIGINT, on_sigint)
    sock = socket.socket(fileno=CONTROL_FD)
    reader = Reader(sock)
    devnull = os.open("/dev/null", os.O_RDWR)
    # Unbuffered text on 1 and 2, whatever they point at.
    sys.stdout = open(1, "w", buffering=1, closefd=False,
                      encoding="utf-8", errors="backslashreplace")
    sys.stderr = open(2, "w", buffering=1, closefd=False,
                      encoding="utf-8", errors="backslashreplace")
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    send_frame(sock, {"op": "ready", "python": sys.version.split()[0]})
    while True:
        try:
            msg, fds = reader.frame()
        except (EOFError, ConnectionError):
            return 0
        if msg.get("op") != "exec" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        attach(fds[0], fds[1])
        status, code = run(str(msg.get("code", "")), namespace)
        detach(devnull)
        send_frame(sock, {"op": "done", "id": msg.get("id"),
                          "status": status, "exit_code": code})


if __name__ == "__main__":
    sys.exit(main())
