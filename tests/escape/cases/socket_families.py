# Every socket family but unix, IPv4, IPv6 and netlink: AF_VSOCK (a way
# to the hypervisor host, CID 2, outside any network namespace), AF_ALG
# (kernel crypto), AF_KEY, AF_XDP, AF_BLUETOOTH, AF_CAN, AF_TIPC, AF_RDS and
# the rest, each tried with stream, datagram, raw and seqpacket types, and
# vsock also with high bits set.  No socket may be made; vsock connects to
# the host are tried in case one is.
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "ESCAPE" not in r["stdout"]
# expect: "AF_VSOCK(40): refused" in r["stdout"] and "AF_ALG(38): refused" in r["stdout"]
# wasm_expect: r["exit_code"] == 1 and 'unknown symbol "syscall"' in r["stderr"]
# wasm_contained: WebAssembly code makes no system call of its own: ctypes reaches only the symbols of Pyodide's wasm module, which has no syscall(); every host call is node's, under the native filter and walls
import ctypes, errno, os, socket

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
escapes = []
names = {v: k for k, v in vars(socket).items()
         if k.startswith("AF_") and isinstance(v, int)}
names.update({40: "AF_VSOCK", 38: "AF_ALG", 44: "AF_XDP", 41: "AF_KCM",
              42: "AF_QIPCRTR", 43: "AF_SMC", 45: "AF_MCTP"})
HI = 1 << 32

def mk(fam, typ, proto=0):
    r = libc.syscall(ctypes.c_long(41), ctypes.c_long(fam), ctypes.c_long(typ),
                     ctypes.c_long(proto))
    return r, ctypes.get_errno()

for fam in range(0, 64):
    if fam in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6,
               socket.AF_NETLINK):
        continue
    made, errs = [], set()
    for typ in (1, 2, 3, 5):
        for f in (fam, fam | HI):
            r, e = mk(f, typ)
            if r >= 0:
                made.append((f, typ))
                os.close(r)
            else:
                errs.add(errno.errorcode.get(e, e))
    label = "%s(%d)" % (names.get(fam, "AF_%d" % fam), fam)
    if made:
        escapes.append(label)
        print("ESCAPE %s: made sockets %s" % (label, made))
    else:
        print("%s: refused %s" % (label, ",".join(sorted(errs))))

# If a vsock socket can be made at all, try the host (CID 2) and beyond.
r, e = mk(40, socket.SOCK_STREAM)
if r >= 0:
    s = socket.socket(fileno=r)
    s.settimeout(2)
    for cid, port in ((2, 22), (2, 1024), (1, 1024), (0xffffffff, 1024)):
        try:
            s.connect((cid, port))
            escapes.append("vsock connect %d:%d" % (cid, port))
            print("ESCAPE vsock connected to", cid, port)
        except OSError as ex:
            print("vsock connect", cid, port, errno.errorcode.get(ex.errno))
print("probes done, %d escapes" % len(escapes))
for x in escapes:
    print("ESCAPE", x)
