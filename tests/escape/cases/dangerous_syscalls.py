# Kernel attack surface the sandbox has no use for, called directly by
# number (x86_64): io_uring, keys, userfaultfd, bpf, perf_event_open,
# file handles, kexec, modules, and the machine-wide calls.  Each must be
# refused by the filter -- EPERM (ENOSYS where the kernel lacks it) -- and
# never reach the kernel (EFAULT or EINVAL would mean it did).  The
# i386 (int 0x80) and x32 ABIs must kill the caller with SIGSYS.  Each
# probe runs in a child of its own; a line per syscall.
# On gVisor's ptrace platform the probes take 2-4 s; a host's stall once
# pushed them past the 10 s default (exit 137), so they get 30 s.
# timeout_ms: 30000
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "ESCAPE" not in r["stdout"] and "REACHED" not in r["stdout"]
# expect: all(re.search(r"^%s: (EPERM|ENOSYS)$" % n, r["stdout"], re.M) for n in ("io_uring_setup", "keyctl", "add_key", "userfaultfd", "bpf", "perf_event_open", "open_by_handle_at", "kexec_load", "init_module", "finit_module"))
# expect: all(("%s: killed by SIGSYS" % n) in r["stdout"] for n in ("i386 getpid", "i386 unshare", "x32 getpid", "x32 unshare"))
# gvisor_expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# gvisor_expect: "ESCAPE" not in r["stdout"] and not re.search(r"^(?!i386 getpid: ).*REACHED", r["stdout"], re.M)
# gvisor_expect: all(re.search(r"^%s: (EPERM|ENOSYS)$" % n, r["stdout"], re.M) for n in ("io_uring_setup", "keyctl", "add_key", "userfaultfd", "bpf", "perf_event_open", "open_by_handle_at", "kexec_load", "init_module", "finit_module", "syslog", "mknod", "mbind", "seccomp", "personality\\(READ_IMPLIES_EXEC\\)"))
# gvisor_expect: all(("%s: EPERM" % n) in r["stdout"] for n in ("i386 unshare", "x32 getpid", "x32 unshare"))
# gvisor_contained: the sentry takes int 0x80 as the x86_64 call of the same number, through the same filter (i386 getpid, 20, is writev: EBADF; i386 unshare, 310, is process_vm_readv: refused), where Linux's filter kills; x32 numbers match no rule and the sentry implements none; every other call is refused by the filter as on native, before the sentry's own implementation is reached
# wasm_expect: r["exit_code"] == 1 and 'unknown symbol "syscall"' in r["stderr"]
# wasm_contained: WebAssembly code makes no system call of its own: ctypes reaches only the symbols of Pyodide's wasm module, which has no syscall(); every host call is node's, under the native filter and walls
import ctypes, errno, mmap, os, signal, struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(4096)     # a valid pointer for every call
P = ctypes.addressof(buf)
NUL = ctypes.addressof(ctypes.create_string_buffer(b"\0" * 64))

CALLS = [
    ("io_uring_setup", 425, (8, P)), ("io_uring_enter", 426, (0, 1, 0, 0, 0, 0)),
    ("io_uring_register", 427, (0, 0, 0, 0)),
    ("keyctl", 250, (0, -3, 0, 0, 0)),          # KEYCTL_GET_KEYRING_ID, session
    ("add_key", 248, (NUL, NUL, 0, 0, -3)), ("request_key", 249, (NUL, NUL, 0, 0)),
    ("userfaultfd", 323, (0,)), ("bpf", 321, (0, P, 64)),
    ("perf_event_open", 298, (P, 0, -1, -1, 0)),
    ("name_to_handle_at", 303, (-100, NUL, P, P, 0)),
    ("open_by_handle_at", 304, (-100, P, 0)),
    ("kexec_load", 246, (0, 0, 0, 0)), ("kexec_file_load", 320, (-1, -1, 0, NUL, 0)),
    ("init_module", 175, (P, 0, NUL)), ("finit_module", 313, (-1, NUL, 0)),
    ("delete_module", 176, (NUL, 0)),
    ("syslog", 103, (10, 0, 0)), ("reboot", 169, (0, 0, 0, 0)),
    ("swapon", 167, (NUL, 0)), ("swapoff", 168, (NUL,)), ("acct", 163, (0,)),
    ("settimeofday", 164, (0, 0)), ("clock_settime", 227, (0, P)),
    ("adjtimex", 159, (P,)), ("clock_adjtime", 305, (0, P)),
    ("sethostname", 170, (NUL, 0)), ("setdomainname", 171, (NUL, 0)),
    ("iopl", 172, (3,)), ("ioperm", 173, (0x80, 1, 1)), ("vhangup", 153, ()),
    ("quotactl", 179, (0, NUL, 0, 0)), ("mknod", 133, (NUL, 0, 0)),
    ("mknodat", 259, (-100, NUL, 0, 0)), ("fanotify_init", 300, (0, 0)),
    ("lookup_dcookie", 212, (0, P, 16)), ("modify_ldt", 154, (0, P, 16)),
    ("vmsplice", 278, (-1, P, 0, 0)), ("uselib", 134, (NUL,)),
    ("memfd_secret", 447, (0,)), ("process_madvise", 440, (-1, P, 0, 0, 0)),
    ("process_mrelease", 448, (-1, 0)), ("move_pages", 279, (0, 0, 0, 0, 0, 0)),
    ("migrate_pages", 256, (0, 0, 0, 0)), ("mbind", 237, (0, 0, 0, 0, 0, 0)),
    ("set_mempolicy", 238, (0, 0, 0)), ("remap_file_pages", 216, (0, 0, 0, 0, 0)),
    ("seccomp", 317, (2, 0, P)),                # SECCOMP_GET_ACTION_AVAIL
    ("landlock_create_ruleset", 444, (0, 0, 1)),  # ..._VERSION: harmless
    ("landlock_restrict_self", 446, (-1, 0)),
    ("personality(READ_IMPLIES_EXEC)", 135, (0x0400000,)),
    ("personality(ADDR_NO_RANDOMIZE)", 135, (0x0040000,)),
    ("sysfs", 139, (3,)), ("ustat", 136, (0, P)), ("nfsservctl", 180, (0, 0, 0)),
    ("_sysctl", 156, (P,)), ("pidfd_getfd", 438, (-1, 0, 0)),
    ("kcmp", 312, (0, 0, 0, 0, 0)),
]

def in_child(fn):
    """Runs fn in a child; returns what it wrote, or how it died."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, fn().encode())
        finally:
            os._exit(0)
    os.close(w)
    out = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        out += chunk
    os.close(r)
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        return "killed by " + signal.Signals(os.WTERMSIG(st)).name
    return out.decode()

def call(nr, args):
    def fn():
        v = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
        e = ctypes.get_errno()
        if v >= 0:
            return "ESCAPE: returned %d" % v
        name = errno.errorcode.get(e, str(e))
        return name if e in (errno.EPERM, errno.ENOSYS) else \
            "REACHED the kernel: " + name
    return fn

for name, nr, args in CALLS:
    print("%s: %s" % (name, in_child(call(nr, args))))

# Other ABIs.  i386: mov eax, NR; int 0x80; ret.  x32: NR | 0x40000000.
code = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE |
                 mmap.PROT_EXEC)
addr = ctypes.addressof(ctypes.c_char.from_buffer(code))
def int80(nr):
    def fn():
        code.seek(0)
        code.write(b"\xb8" + struct.pack("<I", nr) + b"\xcd\x80\xc3")
        v = ctypes.CFUNCTYPE(ctypes.c_long)(addr)()
        if -4096 < v < 0:   # an error, as a kernel answers in eax
            e = -v
            name = errno.errorcode.get(e, str(e))
            return name if e in (errno.EPERM, errno.ENOSYS) else \
                "REACHED the kernel: " + name
        return "ESCAPE: returned %d" % v
    return fn
print("i386 getpid: %s" % in_child(int80(20)))
print("i386 unshare: %s" % in_child(int80(310)))
print("x32 getpid: %s" % in_child(call(0x40000000 | 39, ())))
print("x32 unshare: %s" % in_child(call(0x40000000 | 272, (0x10000000,))))
print("personality query:", libc.syscall(ctypes.c_long(135),
                                         ctypes.c_long(0xffffffff)))
print("probes done")
