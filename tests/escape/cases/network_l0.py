# Network level L0 (profile escape): no interface but a downed lo.  The
# cloud metadata service (169.254.169.254:80), the internet, private
# ranges and IPv6 are all unreachable (ENETUNREACH), names do not resolve,
# and even 127.0.0.1 does not work: binding and connecting both fail.
# profile: escape
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "ESCAPE" not in r["stdout"]
# expect: "tcp 169.254.169.254:80 ENETUNREACH" in r["stdout"]
# expect: "udp 169.254.169.254:80 ENETUNREACH" in r["stdout"]
# expect: "interfaces ['lo']" in r["stdout"]
# expect: re.search(r"^loopback: (bind|connect) refused", r["stdout"], re.M)
# gvisor_expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# gvisor_expect: set(re.findall(r"^ESCAPE (udp ::1:80|loopback)", r["stdout"], re.M)) <= {"udp ::1:80", "loopback"}
# gvisor_expect: "tcp 169.254.169.254:80 EHOSTUNREACH" in r["stdout"] and "tcp 8.8.8.8:53 EHOSTUNREACH" in r["stdout"]
# gvisor_expect: "interfaces ['lo']" in r["stdout"]
# gvisor_contained: at L0 gVisor's own network stack (--network=none) keeps its loopback up; it is inside the sentry, with no host socket and no interface but lo, in a network namespace of its own
# wasm_expect: r["exit_code"] == 1 and "___syscall_sendto" in r["stderr"]
# wasm_contained: Pyodide's sockets are Emscripten's emulation over WebSocket (node's ws), which reaches nothing from the sandbox's network namespace; the failed send aborts the interpreter; node's own sockets meet the same namespace and filter
import errno, socket

escapes = []

def name(e):
    return errno.errorcode.get(e.errno, str(e)) if isinstance(e, OSError) else str(e)

def tcp(host, port, fam=socket.AF_INET):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect((host, port))
        escapes.append("tcp %s:%d" % (host, port))
        print("ESCAPE tcp %s:%d connected" % (host, port))
    except OSError as e:
        print("tcp %s:%d %s" % (host, port, name(e)))
    finally:
        s.close()

def udp(host, port, fam=socket.AF_INET):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", (host, port))
        escapes.append("udp %s:%d" % (host, port))
        print("ESCAPE udp %s:%d sent" % (host, port))
    except OSError as e:
        print("udp %s:%d %s" % (host, port, name(e)))
    finally:
        s.close()

print("interfaces", [n for _, n in socket.if_nameindex()])
for host, port in (("169.254.169.254", 80), ("169.254.170.2", 80),
                   ("8.8.8.8", 53), ("10.0.0.1", 80), ("172.17.0.1", 80),
                   ("192.168.0.1", 80)):
    tcp(host, port)
    udp(host, port)
for host in ("fd00:ec2::254", "2001:4860:4860::8888", "::1"):
    tcp(host, 80, socket.AF_INET6)
    udp(host, 80, socket.AF_INET6)
try:
    print("ESCAPE resolved", socket.getaddrinfo("example.com", 80))
    escapes.append("dns")
except OSError as e:
    print("resolve example.com:", e)

# 127.0.0.1 at L0: no loopback either.
srv = socket.socket()
try:
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    c = socket.socket()
    c.settimeout(3)
    try:
        c.connect(("127.0.0.1", port))
        escapes.append("loopback")
        print("ESCAPE loopback connected at L0")
    except OSError as e:
        print("loopback: connect refused", name(e))
except OSError as e:
    print("loopback: bind refused", name(e))
print("probes done, %d escapes" % len(escapes))
for x in escapes:
    print("ESCAPE", x)
