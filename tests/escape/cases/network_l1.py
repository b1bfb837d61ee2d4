# Network level L1 (profile loopback): lo is up and 127.0.0.1 works -- a
# server bound there answers a client -- but nothing else does: the cloud
# metadata service (169.254.169.254:80), the internet, private ranges and
# IPv6 beyond ::1 are unreachable (ENETUNREACH) and names do not resolve.
# profile: loopback
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "ESCAPE" not in r["stdout"]
# expect: "tcp 169.254.169.254:80 ENETUNREACH" in r["stdout"]
# expect: "udp 169.254.169.254:80 ENETUNREACH" in r["stdout"]
# expect: "interfaces ['lo']" in r["stdout"]
# expect: "loopback: echo works" in r["stdout"]
# gvisor_expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# gvisor_expect: "ESCAPE" not in r["stdout"]
# gvisor_expect: "tcp 169.254.169.254:80 EHOSTUNREACH" in r["stdout"]
# gvisor_expect: "udp 169.254.169.254:80 EHOSTUNREACH" in r["stdout"]
# gvisor_expect: "interfaces ['lo']" in r["stdout"]
# gvisor_expect: "loopback: echo works" in r["stdout"]
# gvisor_contained: gVisor's stack says EHOSTUNREACH where Linux says ENETUNREACH: there is no route either way, and no interface but lo
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
for host in ("fd00:ec2::254", "2001:4860:4860::8888"):
    tcp(host, 80, socket.AF_INET6)
    udp(host, 80, socket.AF_INET6)
try:
    print("ESCAPE resolved", socket.getaddrinfo("example.com", 80))
    escapes.append("dns")
except OSError as e:
    print("resolve example.com:", e)

# 127.0.0.1 at L1: a server and a client, in one process.
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
c = socket.create_connection(srv.getsockname(), timeout=3)
a, _ = srv.accept()
c.sendall(b"ping")
print("loopback: echo works" if a.recv(4) == b"ping" else "loopback: BROKEN")
print("probes done, %d escapes" % len(escapes))
for x in escapes:
    print("ESCAPE", x)
