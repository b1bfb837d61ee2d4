# Writing to everything the sandbox may only read: the root, /usr and
# the interpreter, /etc, a staged input, /proc/sys, /sys and /dev.  Every
# create, write, truncate, chmod, rename, unlink and xattr must fail;
# a line per attempt, "WROTE" for any that succeeded.
# file: data.csv
# expect: r["exit_code"] == 0 and "all attempts made" in r["stdout"]
# expect: "WROTE" not in r["stdout"]
# expect: r["inputs"] == ["/inputs/data.csv"]
# expect: "data.csv unchanged" in r["stdout"]
# wasm_expect: r["exit_code"] == 1 and "no attribute 'setxattr'" in r["stderr"]
# wasm_contained: writes under / land in Pyodide's in-memory root, in the wasm heap and gone with the sandbox; /usr/bin is not there at all (ENOENT); the sandbox's read-only binds Pyodide shows (/inputs, the driver, the zone files) refuse writes (test_mcp_wasm.sh)
import errno, os

def attempt(what, fn):
    try:
        fn()
        print("WROTE", what)
    except OSError as e:
        print("refused", what, errno.errorcode.get(e.errno, e.errno))

def create(p):
    return lambda: os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                                    0o644))

def write(p, mode=os.O_WRONLY):
    def f():
        fd = os.open(p, mode)
        try:
            os.write(fd, b"")   # opening for writing is the breach
        finally:
            os.close(fd)
    return f

original = open("/inputs/data.csv", "rb").read()
targets = {
    "/": ["create /stockade-evil", "mkdir /stockade-evil.d",
          "symlink /stockade-evil.l", "rename /workspace /ws2"],
    "/usr": ["create /usr/stockade-evil", "create /usr/bin/stockade-evil",
             "create /usr/lib/python3/dist-packages/stockade_evil.py",
             "mkdir /usr/local/stockade-evil.d"],
    "/usr/bin/python3": ["write /usr/bin/python3", "append /usr/bin/python3",
                         "truncate /usr/bin/python3", "chmod /usr/bin/python3",
                         "utime /usr/bin/python3", "unlink /usr/bin/python3",
                         "rename /usr/bin/python3 /usr/bin/python3.x",
                         "xattr /usr/bin/python3"],
    "/etc": ["write /etc/passwd", "truncate /etc/passwd", "chmod /etc/passwd",
             "unlink /etc/passwd", "write /etc/hosts", "unlink /etc/hosts",
             "rename /etc/hosts /etc/hosts.x", "write /etc/resolv.conf",
             "write /etc/ld.so.cache", "create /etc/stockade-evil",
             "create /etc/fonts/stockade-evil", "xattr /etc/passwd"],
    "/inputs": ["write /inputs/data.csv", "truncate /inputs/data.csv",
                "chmod /inputs/data.csv", "unlink /inputs/data.csv",
                "create /inputs/stockade-evil", "xattr /inputs/data.csv"],
    "/proc": ["write /proc/sys/kernel/hostname", "create /proc/sys/stockade",
              "write /proc/sysrq-trigger", "create /proc/stockade-evil",
              "mkdir /proc/sys"],
    "/sys": ["mkdir /sys", "write /sys/kernel/uevent_helper",
             "create /sys/stockade-evil", "write /sys/fs/cgroup/cgroup.procs"],
    "/dev": ["create /dev/stockade-evil", "mkdir /dev/stockade-evil.d",
             "symlink /dev/stockade-evil.l", "mknod /dev/stockade-null",
             "unlink /dev/null", "chmod /dev/null",
             "rename /dev/null /dev/null.x", "create /dev/console"],
}
for group, ops in targets.items():
    for op in ops:
        verb, *args = op.split()
        p = args[0]
        fn = {
            "create": lambda: create(p)(),
            "mkdir": lambda: os.mkdir(p),
            "symlink": lambda: os.symlink("/workspace", p),
            "rename": lambda: os.rename(p, args[1]),
            "write": lambda: write(p)(),
            "append": lambda: write(p, os.O_WRONLY | os.O_APPEND)(),
            "truncate": lambda: os.truncate(p, 0),
            "chmod": lambda: os.chmod(p, 0o777),
            "utime": lambda: os.utime(p, (0, 0)),
            "unlink": lambda: os.unlink(p),
            "xattr": lambda: os.setxattr(p, "user.stockade", b"x"),
            "mknod": lambda: os.mknod(p, 0o666 | 0o020000, os.makedev(1, 3)),
        }[verb]
        attempt(op, fn)
print("sys exists:", os.path.exists("/sys"))
print("data.csv unchanged" if open("/inputs/data.csv", "rb").read() == original
      else "data.csv CHANGED")
print("all attempts made")
