# Raw and packet sockets, which could forge or sniff traffic: AF_PACKET
# (raw and cooked), AF_INET/AF_INET6 SOCK_RAW (ICMP, raw IP, TCP), the
# ICMP "ping" datagram socket, SCTP, and the same families and types with
# high bits set in the 64-bit registers (the filter must compare only the
# low 32 bits the kernel reads).  Every socket() must fail.
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "ESCAPE" not in r["stdout"]
# expect: len(re.findall(r"^refused ", r["stdout"], re.M)) >= 14
# wasm_expect: r["exit_code"] == 1 and 'unknown symbol "syscall"' in r["stderr"]
# wasm_contained: WebAssembly code makes no system call of its own: ctypes reaches only the symbols of Pyodide's wasm module, which has no syscall(); every host call is node's, under the native filter and walls
import ctypes, errno, os, socket

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_socket = 41
escapes = []

def attempt(what, family, type_, proto=0):
    r = libc.syscall(ctypes.c_long(SYS_socket), ctypes.c_long(family),
                     ctypes.c_long(type_), ctypes.c_long(proto))
    e = ctypes.get_errno()
    if r < 0:
        print("refused", what, errno.errorcode.get(e, e))
        return None
    escapes.append(what)
    print("ESCAPE", what, "made socket", r)
    return r

AF_PACKET, AF_INET, AF_INET6 = 17, 2, 10
SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET = 1, 2, 3, 5
ETH_P_ALL = 0x0300          # htons(3)
HI = 1 << 32

attempt("AF_PACKET SOCK_RAW ETH_P_ALL", AF_PACKET, SOCK_RAW, ETH_P_ALL)
attempt("AF_PACKET SOCK_DGRAM ETH_P_ALL", AF_PACKET, SOCK_DGRAM, ETH_P_ALL)
attempt("AF_PACKET|hi SOCK_RAW", AF_PACKET | HI, SOCK_RAW, ETH_P_ALL)
attempt("AF_INET SOCK_RAW ICMP", AF_INET, SOCK_RAW, socket.IPPROTO_ICMP)
attempt("AF_INET SOCK_RAW IPPROTO_RAW", AF_INET, SOCK_RAW, socket.IPPROTO_RAW)
attempt("AF_INET SOCK_RAW TCP", AF_INET, SOCK_RAW, socket.IPPROTO_TCP)
attempt("AF_INET SOCK_RAW|hi ICMP", AF_INET, SOCK_RAW | HI, socket.IPPROTO_ICMP)
attempt("AF_INET SOCK_RAW|SOCK_CLOEXEC ICMP", AF_INET,
        SOCK_RAW | socket.SOCK_CLOEXEC, socket.IPPROTO_ICMP)
attempt("AF_INET6 SOCK_RAW ICMPV6", AF_INET6, SOCK_RAW, socket.IPPROTO_ICMPV6)
attempt("AF_INET6|hi SOCK_RAW", AF_INET6 | HI, SOCK_RAW, socket.IPPROTO_ICMPV6)
attempt("AF_INET SOCK_SEQPACKET SCTP", AF_INET, SOCK_SEQPACKET, 132)
attempt("AF_INET SOCK_STREAM SCTP", AF_INET, SOCK_STREAM, 132)
attempt("AF_INET6 SOCK_STREAM SCTP", AF_INET6, SOCK_STREAM, 132)
# Not raw, but outside "TCP and UDP" too: the filter does not look at
# the protocol argument, so these reach the kernel.  Noted, not judged.
for what, fam, typ, proto in (("UDP-Lite", AF_INET, SOCK_DGRAM, 136),
                              ("MPTCP", AF_INET, SOCK_STREAM, 262)):
    r = libc.syscall(ctypes.c_long(SYS_socket), ctypes.c_long(fam),
                     ctypes.c_long(typ), ctypes.c_long(proto))
    print("note: %s socket %s" % (what, "made" if r >= 0 else
                                  errno.errorcode[ctypes.get_errno()]))
    if r >= 0:
        os.close(r)
# The ping socket: a datagram socket of protocol ICMP.  If it can be made
# at all, it must not reach anything.
s = attempt("AF_INET SOCK_DGRAM ICMP (ping socket)", AF_INET, SOCK_DGRAM,
            socket.IPPROTO_ICMP)
if s is not None:
    sock = socket.socket(fileno=s)
    for dst in ("127.0.0.1", "169.254.169.254", "8.8.8.8"):
        try:
            sock.sendto(b"\x08\x00\xf7\xff\x00\x00\x00\x00", (dst, 0))
            print("ESCAPE ping sent to", dst)
            escapes.append("ping " + dst)
        except OSError as ex:
            print("ping to", dst, "failed:", errno.errorcode[ex.errno])
# Sanity: ordinary sockets can still be made (the filter is selective).
for fam, typ, name in ((AF_INET, SOCK_STREAM, "tcp"), (AF_INET, SOCK_DGRAM,
                       "udp"), (socket.AF_UNIX, SOCK_STREAM, "unix")):
    socket.socket(fam, typ).close()
    print("allowed", name)
print("probes done, %d escapes" % len(escapes))
for x in escapes:
    print("ESCAPE", x)
