"""The fake hosts of the egress tests' "world" namespace: one process that
listens on every (address, port) it is given and logs each connection or
datagram it receives, so a test can tell "dropped on the way" from "refused
by the server".  Runs only inside the world namespace, which has no route out.

Usage: world.py LOG READY SPEC...
  SPEC  http:ADDR:PORT   answers one HTTP request with "world ADDR\\n"
        echo:ADDR:PORT   TCP echo until the peer closes (long-lived flows)
        uecho:ADDR:PORT  UDP echo
        blob:ADDR:PORT   reads a line "DOWN UP DELAY_MS\n", then UP bytes;
                         waits DELAY_MS, sends DOWN bytes and closes
                         (known-size flows for the flow records)
ADDR may be an IPv6 address in brackets.  READY is created once every
listener is bound.  LOG gets one line per connection: "tcp ADDR PORT PEER".
"""
import os
import socket
import sys
import threading
import time

REQUEST_MAX = 8192		# bytes of one HTTP request read
IO_TIMEOUT = 5			# seconds, HTTP clients only

log_lock = threading.Lock()


def log(logf, kind, addr, port, peer):
    with log_lock:
        logf.write("%s %s %d %s\n" % (kind, addr, port, peer))
        logf.flush()


def parse(spec):
    kind, rest = spec.split(":", 1)
    if rest.startswith("["):
        addr, port = rest[1:].split("]:")
    else:
        addr, port = rest.rsplit(":", 1)
    return kind, addr, int(port)


def serve_http(conn, addr):
    conn.settimeout(IO_TIMEOUT)
    buf = b""
    try:
        while b"\r\n\r\n" not in buf and len(buf) < REQUEST_MAX:
            data = conn.recv(1024)
            if not data:
                break
            buf += data
        body = ("world %s\n" % addr).encode()
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                     % len(body) + body)
    except OSError:
        pass
    finally:
        conn.close()


def serve_echo(conn, addr):
    try:
        while True:
            data = conn.recv(4096)
            if not data:
                break
            conn.sendall(data)
    except OSError:
        pass
    finally:
        conn.close()


BLOB_MAX = 16 << 20		# bytes either way of one blob flow


def serve_blob(conn, addr):
    conn.settimeout(IO_TIMEOUT)
    buf = b""
    try:
        while b"\n" not in buf and len(buf) < 64:
            data = conn.recv(64 - len(buf))
            if not data:
                return
            buf += data
        line, rest = buf.split(b"\n", 1)
        down, up, delay = (int(x) for x in line.split())
        down, up = min(down, BLOB_MAX), min(up, BLOB_MAX)
        got = len(rest)
        while got < up:
            data = conn.recv(min(65536, up - got))
            if not data:
                return
            got += len(data)
        time.sleep(delay / 1000.0)
        chunk = b"w" * 65536
        while down > 0:
            n = min(down, len(chunk))
            conn.sendall(chunk[:n])
            down -= n
    except (OSError, ValueError):
        pass
    finally:
        conn.close()


def tcp_loop(lsock, kind, addr, port, logf):
    handler = {"http": serve_http, "blob": serve_blob}.get(kind, serve_echo)
    while True:
        conn, peer = lsock.accept()
        log(logf, "tcp", addr, port, peer[0])
        threading.Thread(target=handler, args=(conn, addr), daemon=True).start()


def udp_loop(sock, addr, port, logf):
    while True:
        data, peer = sock.recvfrom(2048)
        log(logf, "udp", addr, port, peer[0])
        sock.sendto(data, peer)


def main():
    logf = open(sys.argv[1], "a")
    threads = []
    for spec in sys.argv[3:]:
        kind, addr, port = parse(spec)
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        if kind == "uecho":
            s = socket.socket(fam, socket.SOCK_DGRAM)
            s.bind((addr, port))
            t = threading.Thread(target=udp_loop, args=(s, addr, port, logf))
        else:
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((addr, port))
            s.listen(64)
            t = threading.Thread(target=tcp_loop,
                                 args=(s, kind, addr, port, logf))
        t.daemon = True
        threads.append(t)
    for t in threads:
        t.start()
    with open(sys.argv[2], "w") as f:
        f.write("%d\n" % os.getpid())
    threading.Event().wait()


if __name__ == "__main__":
    main()
