# Making new namespaces or changing mounts from inside: unshare(2) with
# every namespace flag, clone(2) with CLONE_NEWUSER (clone3 must say
# ENOSYS), setns into each /proc/self/ns/* file, mount, remount, umount,
# the new mount API, chroot, pivot_root, and the unshare/mount programs.
# All must fail; a line "ESCAPE" for any that works.
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "ESCAPE" not in r["stdout"]
# expect: "refused clone3 ENOSYS" in r["stdout"]
# expect: len(re.findall(r"^refused ", r["stdout"], re.M)) >= 30
# wasm_expect: r["exit_code"] == 1 and 'unknown symbol "syscall"' in r["stderr"]
# wasm_contained: WebAssembly code makes no system call of its own: ctypes reaches only the symbols of Pyodide's wasm module, which has no syscall(); every host call is node's, under the native filter and walls
import ctypes, errno, os, subprocess

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
escapes = []

def sys(nr, *a):
    args = [ctypes.c_char_p(x) if isinstance(x, bytes) else ctypes.c_long(x)
            for x in a]
    r = libc.syscall(ctypes.c_long(nr), *args)
    return r, ctypes.get_errno()

def verdict(what, r, e):
    if r < 0:
        print("refused", what, errno.errorcode.get(e, e))
    else:
        escapes.append(what)
        print("ESCAPE", what, "returned", r)

SYS = dict(clone=56, unshare=272, setns=308, mount=165, umount2=166,
           chroot=161, pivot_root=155, clone3=435, open_tree=428,
           move_mount=429, fsopen=430, fsmount=432, fspick=433,
           mount_setattr=442)
FLAGS = dict(CLONE_NEWUSER=0x10000000, CLONE_NEWNS=0x00020000,
             CLONE_NEWNET=0x40000000, CLONE_NEWPID=0x20000000,
             CLONE_NEWUTS=0x04000000, CLONE_NEWIPC=0x08000000,
             CLONE_NEWCGROUP=0x02000000, CLONE_NEWTIME=0x00000080)

for name, flag in FLAGS.items():
    verdict("unshare(%s)" % name, *sys(SYS["unshare"], flag))
    # The same with a high bit set in the 64-bit register.
    verdict("unshare(%s | 1<<32)" % name, *sys(SYS["unshare"], flag | 1 << 32))

# clone with new namespaces, like fork: a child that exits at once.
for name in ("CLONE_NEWUSER", "CLONE_NEWNET", "CLONE_NEWNS"):
    r, e = sys(SYS["clone"], FLAGS[name] | 17, 0, 0, 0, 0)   # | SIGCHLD
    if r == 0:
        os._exit(0)
    if r > 0:
        os.waitpid(r, 0)
    verdict("clone(%s)" % name, r, e)

# clone3 carries its flags in memory the filter cannot see: ENOSYS.
args = (ctypes.c_uint64 * 11)(FLAGS["CLONE_NEWUSER"], 0, 0, 0, 17)
r, e = sys(SYS["clone3"], ctypes.addressof(args), 88)
if r == 0:
    os._exit(0)
verdict("clone3", r, e)

for ns in sorted(os.listdir("/proc/self/ns")):
    try:
        fd = os.open("/proc/self/ns/" + ns, os.O_RDONLY)
    except OSError as ex:
        print("refused open /proc/self/ns/%s %s" % (ns, errno.errorcode[ex.errno]))
        continue
    verdict("setns(%s)" % ns, *sys(SYS["setns"], fd, 0))
    os.close(fd)

verdict("mount tmpfs on /tmp", *sys(SYS["mount"], b"none", b"/tmp", b"tmpfs", 0, 0))
verdict("bind mount / on /workspace",
        *sys(SYS["mount"], b"/", b"/workspace", 0, 0x1000, 0))   # MS_BIND
verdict("remount / read-write",
        *sys(SYS["mount"], 0, b"/", 0, 0x20, 0))                 # MS_REMOUNT
verdict("mount proc on /tmp", *sys(SYS["mount"], b"proc", b"/tmp", b"proc", 0, 0))
verdict("umount /usr", *sys(SYS["umount2"], b"/usr", 2))         # MNT_DETACH
verdict("umount /proc", *sys(SYS["umount2"], b"/proc", 0))
verdict("fsopen(tmpfs)", *sys(SYS["fsopen"], b"tmpfs", 0))
verdict("fspick(/)", *sys(SYS["fspick"], -100, b"/", 0))
verdict("open_tree(/usr, clone)", *sys(SYS["open_tree"], -100, b"/usr", 1))
verdict("move_mount", *sys(SYS["move_mount"], -100, b"/usr", -100, b"/tmp", 0))
verdict("mount_setattr(/)", *sys(SYS["mount_setattr"], -100, b"/", 0, 0, 0))
verdict("chroot(/tmp)", *sys(SYS["chroot"], b"/tmp"))
verdict("pivot_root(/tmp, /tmp)", *sys(SYS["pivot_root"], b"/tmp", b"/tmp"))

for argv in (["/usr/bin/unshare", "-U", "-r", "/usr/bin/id", "-u"],
             ["/usr/bin/unshare", "-n", "/usr/bin/true"],
             ["/usr/bin/mount", "-t", "tmpfs", "none", "/tmp"],
             ["/usr/bin/nsenter", "-t", "1", "-U", "/usr/bin/true"]):
    if not os.path.exists(argv[0]):
        print("absent", argv[0])
        continue
    p = subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL)
    verdict(" ".join(argv), -1 if p.returncode else 0, errno.EPERM)
    print("   ", p.stderr.decode(errors="replace").strip()[:120])
print("probes done, %d escapes" % len(escapes))
for x in escapes:
    print("ESCAPE", x)
