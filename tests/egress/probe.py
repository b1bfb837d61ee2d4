"""Client side of the egress tests, run inside a sandbox namespace with
`ip netns exec`.  Every operation has a short timeout and prints one line
per target, so the shell test can grep the outcome.

  probe.py connect [-t S] TARGET...   TCP connect, all targets at once
      TARGET is HOST:PORT, [V6]:PORT or v6map:IPV4:PORT (an AF_INET6 socket
      to ::ffff:IPV4).  HOST may be a name (resolved through the
      namespace's resolv.conf) or any inet_aton spelling.  Ports 80 and
      8080 send an HTTP GET; prints "TARGET ok ADDR BODY" or "TARGET fail ADDR ERROR".
  probe.py udp [-t S] HOST:PORT       one datagram to a UDP echo
  probe.py flood [--count N] IP:PORT  N UDP datagrams as fast as possible
  probe.py dns [-t S] [--tcp] [--type T] SERVER NAME
      prints "rcode=R answers=TYPE:VALUE,... ttl=MIN" or "timeout"
  probe.py fetch [-t S] [--count N] HOST:PORT DOWN UP DELAY_MS
      N flows in turn to a world.py blob listener: each sends the line
      "DOWN UP DELAY_MS" and UP bytes, reads to the end; prints
      "ok LOCAL_PORT SENT RECEIVED" (application bytes) or "fail ERROR"
  probe.py icmp [-t S] ADDR           raw-socket echo request
  probe.py raw6 ADDR PORT             one UDP datagram on a raw IPv6 socket
  probe.py hold [-t S] HOST:PORT DIR ROUNDS
      opens a TCP echo flow and keeps it; prints "connected", then for each
      round i waits for DIR/go<i> and prints "alive i" or "cut i ERROR"
"""
import argparse
import os
import random
import socket
import struct
import sys
import threading
import time

HOLD_WAIT_MAX = 60		# seconds a hold waits for each go file
HTTP_PORTS = (80, 8080)		# world.py's http listeners
RTYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "MX": 15,
          "TXT": 16, "AAAA": 28, "SRV": 33, "ANY": 255}
RNAMES = {v: k for k, v in RTYPES.items()}
RCODES = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"]


def errname(e):
    if isinstance(e, socket.timeout):
        return "timeout"
    if isinstance(e, socket.gaierror):
        return "gaierror(%s)" % e.args[1] if len(e.args) > 1 else "gaierror"
    if getattr(e, "errno", None):
        import errno
        return errno.errorcode.get(e.errno, str(e.errno))
    return type(e).__name__


def split_target(t):
    if t.startswith("v6map:"):
        host, port = t[6:].rsplit(":", 1)
        return "v6map", host, int(port)
    if t.startswith("["):
        host, port = t[1:].split("]:")
        return "v6", host, int(port)
    host, port = t.rsplit(":", 1)
    return "any", host, int(port)


def one_connect(target, timeout, out):
    kind, host, port = split_target(target)
    addr = "-"
    try:
        if kind == "v6map":
            s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sa = ("::ffff:" + host, port, 0, 0)
        else:
            fam = socket.AF_INET6 if kind == "v6" else socket.AF_UNSPEC
            ai = socket.getaddrinfo(host, port, fam, socket.SOCK_STREAM)[0]
            s = socket.socket(ai[0], socket.SOCK_STREAM)
            sa = ai[4]
        addr = sa[0]
        s.settimeout(timeout)
        s.connect(sa)
        body = ""
        if port in HTTP_PORTS:
            s.sendall(b"GET / HTTP/1.0\r\nHost: %s\r\n\r\n" % host.encode())
            data = b""
            while True:
                d = s.recv(4096)
                if not d:
                    break
                data += d
            body = data.split(b"\r\n\r\n", 1)[-1].decode().strip()
            body = body.replace(" ", "_")
        s.close()
        out[target] = "ok %s %s" % (addr, body)
    except Exception as e:
        out[target] = "fail %s %s" % (addr, errname(e))


def cmd_connect(a):
    out = {}
    threads = [threading.Thread(target=one_connect, args=(t, a.t, out))
               for t in a.targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(a.t * 4 + 5)
    for t in a.targets:
        print(t, out.get(t, "fail - hung"))


def cmd_flood(a):
    # Many datagrams at once, to check that denials are logged at a
    # bounded rate; EPERM (dropped in the output hook) is expected.
    _, host, port = split_target(a.target)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sent = failed = 0
    for _ in range(a.count):
        try:
            s.sendto(b"x", (host, port))
            sent += 1
        except OSError:
            failed += 1
    print("sent=%d failed=%d" % (sent, failed))


def cmd_fetch(a):
    _, host, port = split_target(a.target)
    for _ in range(a.count):
        try:
            ai = socket.getaddrinfo(host, port, socket.AF_INET,
                                    socket.SOCK_STREAM)[0]
            s = socket.socket(ai[0], socket.SOCK_STREAM)
            s.settimeout(a.t)
            s.connect(ai[4])
            msg = b"%d %d %d\n" % (a.down, a.up, a.delay) + b"u" * a.up
            s.sendall(msg)
            got = 0
            while True:
                d = s.recv(65536)
                if not d:
                    break
                got += len(d)
            lport = s.getsockname()[1]
            s.close()
            print("ok %d %d %d" % (lport, len(msg), got), flush=True)
        except Exception as e:
            print("fail %s" % errname(e), flush=True)


def cmd_udp(a):
    _, host, port = split_target(a.target)
    ai = socket.getaddrinfo(host, port, 0, socket.SOCK_DGRAM)[0]
    s = socket.socket(ai[0], socket.SOCK_DGRAM)
    s.settimeout(a.t)
    try:
        s.sendto(b"ping", ai[4])
        s.recvfrom(2048)
        print(a.target, "ok", ai[4][0])
    except Exception as e:
        print(a.target, "fail", ai[4][0], errname(e))


# ---------------------------------------------------------------- DNS
def dns_query(name, qtype, qid):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", qtype, 1)


def dns_name(msg, off):
    labels, jumped, end = [], False, off
    for _ in range(128):
        n = msg[off]
        if n & 0xC0 == 0xC0:
            if not jumped:
                end = off + 2
            off = struct.unpack(">H", msg[off:off + 2])[0] & 0x3FFF
            jumped = True
            continue
        if n == 0:
            if not jumped:
                end = off + 1
            return ".".join(labels), end
        labels.append(msg[off + 1:off + 1 + n].decode("ascii", "replace"))
        off += 1 + n
    raise ValueError("name loop")


def dns_parse(msg):
    qid, flags, qd, an = struct.unpack(">HHHH", msg[:8])
    off = 12
    for _ in range(qd):
        _, off = dns_name(msg, off)
        off += 4
    answers, ttls = [], []
    for _ in range(an):
        _, off = dns_name(msg, off)
        rtype, _, ttl, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
        off += 10
        rdata = msg[off:off + rdlen]
        if rtype == 1:
            val = socket.inet_ntop(socket.AF_INET, rdata)
        elif rtype == 28:
            val = socket.inet_ntop(socket.AF_INET6, rdata)
        elif rtype == 5:
            val = dns_name(msg, off)[0]
        elif rtype == 16:
            val = rdata[1:1 + rdata[0]].decode("ascii", "replace")
        else:
            val = rdata.hex()
        off += rdlen
        answers.append("%s:%s" % (RNAMES.get(rtype, rtype), val))
        ttls.append(ttl)
    rcode = flags & 0xF
    return qid, (RCODES[rcode] if rcode < len(RCODES) else str(rcode)), \
        answers, (min(ttls) if ttls else -1)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        d = s.recv(n - len(buf))
        if not d:
            raise ConnectionResetError()
        buf += d
    return buf


def cmd_dns(a):
    qtype = RTYPES[a.type]
    qid = random.randrange(65536)
    q = dns_query(a.name, qtype, qid)
    fam = socket.AF_INET6 if ":" in a.server else socket.AF_INET
    try:
        if a.tcp:
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.settimeout(a.t)
            s.connect((a.server, a.port))
            s.sendall(struct.pack(">H", len(q)) + q)
            n = struct.unpack(">H", recv_exact(s, 2))[0]
            msg = recv_exact(s, n)
        else:
            s = socket.socket(fam, socket.SOCK_DGRAM)
            s.settimeout(a.t)
            s.sendto(q, (a.server, a.port))
            deadline = time.monotonic() + a.t
            while True:
                s.settimeout(max(0.01, deadline - time.monotonic()))
                msg, _ = s.recvfrom(65535)
                if msg[:2] == q[:2]:
                    break
        _, rcode, answers, ttl = dns_parse(msg)
        print("rcode=%s answers=%s ttl=%d" % (rcode, ",".join(answers), ttl))
    except Exception as e:
        print(errname(e))


# ---------------------------------------------------------------- raw
def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def cmd_icmp(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(a.t)
    ident = os.getpid() & 0xFFFF
    hdr = struct.pack("!BBHHH", 8, 0, 0, ident, 1) + b"stockade"
    pkt = hdr[:2] + struct.pack("!H", checksum(hdr)) + hdr[4:]
    try:
        s.sendto(pkt, (a.addr, 0))
        deadline = time.monotonic() + a.t
        while True:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            data, peer = s.recvfrom(2048)
            ihl = (data[0] & 0xF) * 4
            typ, _, _, rid = struct.unpack("!BBHH", data[ihl:ihl + 6])
            if typ == 0 and rid == ident and peer[0] == a.addr:
                print("reply")
                return
    except Exception as e:
        print(errname(e))


def cmd_raw6(a):
    # A UDP datagram on a raw IPv6 socket: the kernel routes it as IPv6
    # whatever the destination, which an AF_INET6 UDP socket does not do
    # for v4-mapped ones.
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_UDP)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_CHECKSUM, 6)
    payload = b"stockade"
    udp = struct.pack("!HHHH", 40000, a.port, 8 + len(payload), 0) + payload
    try:
        s.sendto(udp, (a.addr, 0))
        print("sent")
    except Exception as e:
        print("error", errname(e))


def cmd_hold(a):
    _, host, port = split_target(a.target)
    try:
        s = socket.create_connection((host, port), timeout=a.t)
        s.sendall(b"0\n")
        recv_exact(s, 2)
    except Exception as e:
        print("fail", errname(e), flush=True)
        return
    print("connected", s.getpeername()[0], flush=True)
    for i in range(1, a.rounds + 1):
        go = os.path.join(a.dir, "go%d" % i)
        deadline = time.monotonic() + HOLD_WAIT_MAX
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.05)
        msg = b"%d\n" % i
        try:
            s.settimeout(a.t)
            s.sendall(msg)
            if recv_exact(s, len(msg)) != msg:
                raise ValueError("bad echo")
            print("alive", i, flush=True)
        except Exception as e:
            print("cut", i, errname(e), flush=True)
            return


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("connect")
    c.add_argument("-t", type=float, default=1.5)
    c.add_argument("targets", nargs="+")
    c = sub.add_parser("udp")
    c.add_argument("-t", type=float, default=1.5)
    c.add_argument("target")
    c = sub.add_parser("flood")
    c.add_argument("--count", type=int, default=300)
    c.add_argument("target")
    c = sub.add_parser("dns")
    c.add_argument("-t", type=float, default=2)
    c.add_argument("--tcp", action="store_true")
    c.add_argument("--type", default="A", choices=sorted(RTYPES))
    c.add_argument("--port", type=int, default=53)
    c.add_argument("server")
    c.add_argument("name")
    c = sub.add_parser("fetch")
    c.add_argument("-t", type=float, default=5)
    c.add_argument("--count", type=int, default=1)
    c.add_argument("target")
    c.add_argument("down", type=int)
    c.add_argument("up", type=int)
    c.add_argument("delay", type=int)
    c = sub.add_parser("icmp")
    c.add_argument("-t", type=float, default=1.5)
    c.add_argument("addr")
    c = sub.add_parser("raw6")
    c.add_argument("addr")
    c.add_argument("port", type=int)
    c = sub.add_parser("hold")
    c.add_argument("-t", type=float, default=2)
    c.add_argument("target")
    c.add_argument("dir")
    c.add_argument("rounds", type=int)
    a = p.parse_args()
    globals()["cmd_" + a.cmd](a)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
