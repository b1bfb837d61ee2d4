# Changing the network from inside over netlink: NETLINK_ROUTE sockets are
# allowed (getaddrinfo lists addresses with them), but adding an address
# (RTM_NEWADDR), a route (RTM_NEWROUTE), a link (RTM_NEWLINK) or bringing
# lo up (RTM_SETLINK) must be answered EPERM; /usr/sbin/ip must fail the
# same way; every other netlink protocol (audit, uevent, netfilter, ...)
# must not even open.  Reading (RTM_GETADDR) works and shows no change.
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "ESCAPE" not in r["stdout"]
# expect: all(("refused %s EPERM" % m) in r["stdout"] for m in ("RTM_NEWADDR", "RTM_NEWROUTE", "RTM_NEWLINK", "RTM_SETLINK"))
# expect: "addresses after:" in r["stdout"] and "10.9.8.7" not in r["stdout"].split("addresses after:")[1]
# gvisor_expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# gvisor_expect: "ESCAPE" not in r["stdout"]
# gvisor_expect: all(re.search(r"^refused %s (EPERM|EACCES)$" % m, r["stdout"], re.M) for m in ("RTM_NEWADDR", "RTM_NEWROUTE", "RTM_NEWLINK", "RTM_SETLINK"))
# gvisor_expect: "addresses after:" in r["stdout"] and "10.9.8.7" not in r["stdout"].split("addresses after:")[1]
# gvisor_contained: route, address and link changes are refused by the sentry's netlink with EACCES where Linux says EPERM
# wasm_expect: r["exit_code"] == 1 and "no attribute 'AF_NETLINK'" in r["stderr"]
# wasm_contained: Pyodide's socket module has no AF_NETLINK: no netlink socket can be made
import ctypes, errno, os, socket, struct, subprocess

escapes = []
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
NLM_F_DUMP = 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
RTM_NEWLINK, RTM_SETLINK, RTM_NEWADDR, RTM_GETADDR, RTM_NEWROUTE = 16, 19, 20, 22, 24
seq = 0

def rta(kind, data):
    n = 4 + len(data)
    return struct.pack("=HH", n, kind) + data + b"\0" * ((4 - n % 4) % 4)

def request(s, mtype, flags, body):
    global seq
    seq += 1
    s.send(struct.pack("=IHHII", 16 + len(body), mtype, flags, seq, 0) + body)
    return seq

def ack(s):
    while True:
        data = s.recv(65536)
        off = 0
        while off + 16 <= len(data):
            ln, typ, _, _, _ = struct.unpack_from("=IHHII", data, off)
            if typ == NLMSG_ERROR:
                return -struct.unpack_from("=i", data, off + 16)[0]
            if typ == NLMSG_DONE:
                return 0
            off += (ln + 3) & ~3

def change(s, name, mtype, body):
    err = ack_of(s, mtype, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
                 NLM_F_EXCL, body)
    if err == 0:
        escapes.append(name)
        print("ESCAPE", name, "accepted")
    else:
        print("refused", name, errno.errorcode.get(err, err))

def ack_of(s, mtype, flags, body):
    request(s, mtype, flags, body)
    return ack(s)

def addresses(s):
    request(s, RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP,
            struct.pack("=BBBBI", 0, 0, 0, 0, 0))
    found = []
    while True:
        data = s.recv(65536)
        off = 0
        while off + 16 <= len(data):
            ln, typ, _, _, _ = struct.unpack_from("=IHHII", data, off)
            if typ in (NLMSG_DONE, NLMSG_ERROR):
                return found
            fam, plen, _, _, idx = struct.unpack_from("=BBBBI", data, off + 16)
            a = off + 24
            while a + 4 <= off + ln:
                alen, akind = struct.unpack_from("=HH", data, a)
                if akind == 2 and fam == socket.AF_INET:      # IFA_LOCAL
                    found.append("%s/%d@%d" % (socket.inet_ntoa(
                        data[a + 4:a + 8]), plen, idx))
                if alen < 4:
                    break
                a += (alen + 3) & ~3
            off += (ln + 3) & ~3

s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
print("addresses before:", addresses(s))
lo = socket.if_nametoindex("lo")
addr = socket.inet_aton("10.9.8.7")
change(s, "RTM_NEWADDR", RTM_NEWADDR,
       struct.pack("=BBBBI", socket.AF_INET, 24, 0, 0, lo) +
       rta(2, addr) + rta(1, addr))
change(s, "RTM_NEWROUTE", RTM_NEWROUTE,
       struct.pack("=BBBBBBBBI", socket.AF_INET, 0, 0, 0, 254, 3, 253, 1, 0) +
       rta(4, struct.pack("=I", lo)))                    # RTA_OIF
change(s, "RTM_NEWLINK", RTM_NEWLINK,
       struct.pack("=BBHiII", 0, 0, 0, 0, 0, 0) +
       rta(3, b"stockade0\0") +                          # IFLA_IFNAME
       rta(18, rta(1, b"dummy\0")))                      # IFLA_LINKINFO/KIND
IFF_UP = 1
change(s, "RTM_SETLINK", RTM_SETLINK,
       struct.pack("=BBHiII", 0, 0, 0, lo, IFF_UP, IFF_UP))

# Every other netlink protocol, and NETLINK_ROUTE's number with a high bit.
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for name, proto in (("NETLINK_SOCK_DIAG", 4), ("NETLINK_XFRM", 6),
                    ("NETLINK_AUDIT", 9), ("NETLINK_CONNECTOR", 11),
                    ("NETLINK_NETFILTER", 12), ("NETLINK_KOBJECT_UEVENT", 15),
                    ("NETLINK_GENERIC", 16), ("NETLINK_CRYPTO", 21),
                    ("NETLINK_AUDIT|hi", 9 | 1 << 32)):
    r = libc.syscall(ctypes.c_long(41), ctypes.c_long(socket.AF_NETLINK),
                     ctypes.c_long(socket.SOCK_RAW), ctypes.c_long(proto))
    if r < 0:
        print("refused socket", name, errno.errorcode[ctypes.get_errno()])
    else:
        escapes.append("socket " + name)
        print("ESCAPE socket", name)
        os.close(r)

for argv in (["/usr/sbin/ip", "addr", "add", "10.9.8.7/24", "dev", "lo"],
             ["/usr/sbin/ip", "link", "set", "lo", "up"],
             ["/usr/sbin/ip", "link", "add", "stockade1", "type", "dummy"],
             ["/usr/sbin/ip", "route", "add", "default", "dev", "lo"]):
    if not os.path.exists(argv[0]):
        print("absent", argv[0])
        break
    p = subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL)
    if p.returncode == 0:
        escapes.append(" ".join(argv))
        print("ESCAPE", " ".join(argv))
    else:
        print("refused", " ".join(argv[1:]), "exit", p.returncode,
              p.stderr.decode(errors="replace").strip()[:80])
print("addresses after:", addresses(s))
print("probes done, %d escapes" % len(escapes))
for x in escapes:
    print("ESCAPE", x)
