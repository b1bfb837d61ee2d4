# Reaching into other processes: ptrace (TRACEME, ATTACH and SEIZE on
# init, on a pid that exists only on the host side, on our own child),
# process_vm_readv/writev, pidfd_getfd, kcmp, and the file-system way in,
# /proc/1/mem (init is mcp-exec's child: its memory holds the host's
# environment and the channel the result goes back on).  A line "ESCAPE"
# for any that works.
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "ESCAPE" not in r["stdout"]
# expect: len(re.findall(r"^refused ", r["stdout"], re.M)) >= 12
# gvisor_expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# gvisor_expect: set(re.findall(r"^ESCAPE (\S+)", r["stdout"], re.M)) <= {"/proc/1/mem"}
# gvisor_expect: len(re.findall(r"^refused ", r["stdout"], re.M)) >= 12
# gvisor_contained: pid 1 is the code itself (gVisor has no stockade init holding mcp-exec's memory), so /proc/1/mem is the code's own memory; every ptrace and process_vm call is refused by the filter as on native
# wasm_expect: r["exit_code"] == 1 and 'unknown symbol "syscall"' in r["stderr"]
# wasm_contained: WebAssembly code makes no system call of its own: ctypes reaches only the symbols of Pyodide's wasm module, which has no syscall(); every host call is node's, under the native filter and walls
import ctypes, errno, os, time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
escapes = []

def sys(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) for x in a])
    return r, ctypes.get_errno()

def verdict(what, r, e):
    if r < 0:
        print("refused", what, errno.errorcode.get(e, e))
    else:
        escapes.append(what)
        print("ESCAPE", what, "returned", r)

SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev = 101, 310, 311
SYS_kcmp, SYS_pidfd_open, SYS_pidfd_getfd = 312, 434, 438
PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_DETACH, PTRACE_SEIZE = 0, 16, 17, 0x4206

child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)

for what, pid in (("init (pid 1)", 1), ("a host-only pid 999999", 999999),
                  ("our own child", child)):
    for name, req in (("PTRACE_ATTACH", PTRACE_ATTACH),
                      ("PTRACE_SEIZE", PTRACE_SEIZE)):
        r, e = sys(SYS_ptrace, req, pid, 0, 0)
        verdict("%s on %s" % (name, what), r, e)
        if r == 0:
            sys(SYS_ptrace, PTRACE_DETACH, pid, 0, 0)

# PTRACE_TRACEME in a child of ours, which then execs: the classic way
# to get a traced setuid program.
pid = os.fork()
if pid == 0:
    r, e = sys(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0)
    os._exit(0 if r == 0 else e)
_, st = os.waitpid(pid, 0)
code = os.WEXITSTATUS(st)
verdict("PTRACE_TRACEME", 0 if code == 0 else -1, code)

class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

buf = ctypes.create_string_buffer(64)
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
maps = open("/proc/1/maps").read().split("\n") if os.path.exists(
    "/proc/1/maps") else []
addr = int(maps[0].split("-")[0], 16) if maps and maps[0] else 0x400000
remote = iovec(addr, 64)
for what, pid in (("init", 1), ("our own child", child)):
    r, e = sys(SYS_process_vm_readv, pid, ctypes.addressof(local), 1,
               ctypes.addressof(remote), 1, 0)
    verdict("process_vm_readv of " + what, r, e)
r, e = sys(SYS_process_vm_writev, child, ctypes.addressof(local), 1,
           ctypes.addressof(iovec(ctypes.cast(buf, ctypes.c_void_p).value,
                                  64)), 1, 0)
verdict("process_vm_writev of our own child", r, e)

pidfd, e = sys(SYS_pidfd_open, 1, 0)
print("pidfd_open(1):", pidfd if pidfd >= 0 else errno.errorcode[e])
if pidfd >= 0:
    for fd in (0, 1, 3):
        r, e = sys(SYS_pidfd_getfd, pidfd, fd, 0)
        verdict("pidfd_getfd of init's fd %d" % fd, r, e)
r, e = sys(SYS_kcmp, os.getpid(), 1, 0, 0, 0)   # KCMP_FILE
verdict("kcmp with init", r, e)

# The file-system way: /proc/1/mem needs the same permission as ptrace.
for mode, name in ((os.O_RDONLY, "read"), (os.O_RDWR, "write")):
    try:
        fd = os.open("/proc/1/mem", mode)
    except OSError as ex:
        print("refused open /proc/1/mem for", name, errno.errorcode[ex.errno])
        continue
    try:
        data = os.pread(fd, 16, addr)
        escapes.append("/proc/1/mem " + name)
        print("ESCAPE /proc/1/mem opened for %s; init's memory at %#x reads %r"
              % (name, addr, data))
    except OSError as ex:
        escapes.append("/proc/1/mem open " + name)
        print("ESCAPE /proc/1/mem opened for %s (the read said %s)" % (
            name, errno.errorcode[ex.errno]))
    os.close(fd)
for f in ("syscall", "stack", "environ", "auxv"):
    try:
        open("/proc/1/" + f, "rb").read(64)
        print("readable /proc/1/%s (ptrace-mode access to init)" % f)
    except OSError as ex:
        print("refused /proc/1/%s %s" % (f, errno.errorcode[ex.errno]))
os.kill(child, 9)
os.waitpid(child, 0)
print("probes done, %d escapes" % len(escapes))
for x in escapes:
    print("ESCAPE", x)
