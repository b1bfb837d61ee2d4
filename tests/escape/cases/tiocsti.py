# Pushing keystrokes into a terminal (TIOCSTI, CVE-2017-5226) or through
# the console's selection (TIOCLINUX): there is no terminal to reach (fd 0
# is /dev/null, no /dev/tty, /dev/console, /dev/ptmx), and the filter
# refuses both requests whatever the descriptor -- also with a high bit
# set in the 64-bit request register (CVE-2019-10063) -- with EPERM, where
# the kernel itself would have said ENOTTY; a harmless ioctl still works.
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "ESCAPE" not in r["stdout"]
# expect: all(("%s on %s: EPERM" % (req, fd)) in r["stdout"] for req in ("TIOCSTI", "TIOCSTI|1<<32", "TIOCSTI|1<<63", "TIOCLINUX", "TIOCLINUX|1<<32") for fd in ("fd 0 (/dev/null)", "fd 1 (stdout pipe)"))
# expect: "FIONREAD on fd 0 (/dev/null): ENOTTY" in r["stdout"] or "FIONREAD on fd 0 (/dev/null): ok" in r["stdout"]
# expect: "ttys openable: []" in r["stdout"]
# gvisor_expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# gvisor_expect: "ESCAPE" not in r["stdout"]
# gvisor_expect: all(re.search(r"^%s on .*: EPERM$" % re.escape(req), r["stdout"], re.M) and not re.search(r"^%s on .*: (?!EPERM$)" % re.escape(req), r["stdout"], re.M) for req in ("TIOCSTI", "TIOCSTI|1<<32", "TIOCSTI|1<<63", "TIOCLINUX", "TIOCLINUX|1<<32"))
# gvisor_expect: "FIONREAD on fd 0 (/dev/null): ENOTTY" in r["stdout"] or "FIONREAD on fd 0 (/dev/null): ok" in r["stdout"]
# gvisor_expect: set(json.loads(re.search(r"^ttys openable: (.*)$", r["stdout"], re.M).group(1).replace("'", '"'))) <= {"/dev/ptmx", "/dev/pts/0", "/dev/pts/ptmx", "openpty"}
# gvisor_contained: the ptys it opens (/dev/ptmx, /dev/pts) are the sentry's own devpts, no host terminal; the filter refuses TIOCSTI and TIOCLINUX on them as on every descriptor
# wasm_expect: r["exit_code"] == 1 and 'unknown symbol "syscall"' in r["stderr"]
# wasm_contained: WebAssembly code makes no system call of its own: ctypes reaches only the symbols of Pyodide's wasm module, which has no syscall(); every host call is node's, under the native filter and walls
import ctypes, errno, os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_ioctl = 16
TIOCSTI, TIOCLINUX, FIONREAD = 0x5412, 0x541C, 0x541B
escapes = []
print("fd 0 is", os.readlink("/proc/self/fd/0"), "isatty", os.isatty(0))

def ioctl(fd, req, arg):
    r = libc.syscall(ctypes.c_long(SYS_ioctl), ctypes.c_long(fd),
                     ctypes.c_ulong(req), arg)
    return r, ctypes.get_errno()

ch = ctypes.c_char(b"x")
sel = (ctypes.c_char * 16)(b"\x02")          # TIOCL_SETSEL-style subcode
fds = {"fd 0 (/dev/null)": 0, "fd 1 (stdout pipe)": 1}
ttys = []
for p in ("/dev/tty", "/dev/console", "/dev/tty0", "/dev/tty1", "/dev/ptmx",
          "/dev/pts/0", "/dev/pts/ptmx", "/proc/1/fd/0", "/proc/1/fd/2"):
    try:
        fd = os.open(p, os.O_RDWR | os.O_NOCTTY)
    except OSError as e:
        print("open", p, errno.errorcode[e.errno])
        continue
    if os.isatty(fd):
        ttys.append(p)
        fds[p] = fd
    else:
        os.close(fd)
try:
    m, s = os.openpty()
    ttys.append("openpty")
    fds["openpty slave"] = s
except OSError as e:
    print("openpty", errno.errorcode[e.errno])
print("ttys openable:", ttys)

for label, fd in fds.items():
    for rname, req, arg in (
            ("TIOCSTI", TIOCSTI, ctypes.byref(ch)),
            ("TIOCSTI|1<<32", TIOCSTI | 1 << 32, ctypes.byref(ch)),
            ("TIOCSTI|1<<63", TIOCSTI | 1 << 63, ctypes.byref(ch)),
            ("TIOCLINUX", TIOCLINUX, ctypes.byref(sel)),
            ("TIOCLINUX|1<<32", TIOCLINUX | 1 << 32, ctypes.byref(sel))):
        r, e = ioctl(fd, req, arg)
        if r < 0:
            print("%s on %s: %s" % (rname, label, errno.errorcode.get(e, e)))
        else:
            escapes.append("%s on %s" % (rname, label))
            print("ESCAPE %s on %s succeeded" % (rname, label))
n = ctypes.c_int(0)
r, e = ioctl(0, FIONREAD, ctypes.byref(n))
print("FIONREAD on fd 0 (/dev/null):", "ok" if r == 0 else errno.errorcode[e])
print("probes done, %d escapes" % len(escapes))
for x in escapes:
    print("ESCAPE", x)
