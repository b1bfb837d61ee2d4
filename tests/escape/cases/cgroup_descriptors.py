# Leaving the cgroup through a descriptor: on cgroup v1 the sandbox's init
# joins its cgroups itself through tasks files mcp-exec opened as root,
# and a write of "0" to one of those would move the writer wherever the
# file's cgroup is, checked with the opener's rights.  None may reach the
# command: every descriptor here (and init's, if /proc/1 shows them) is
# read back; any that names a file is written "0", as is its path, and
# our cgroups must be what they were.
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "LEAK" not in r["stdout"] and "MOVED" not in r["stdout"]
# expect: "cgroup unchanged" in r["stdout"]
# wasm_expect: r["exit_code"] == 1 and "'/proc/self/cgroup'" in r["stderr"]
# wasm_contained: Pyodide's file system has no /proc or /sys: the cgroup's files are outside the wasm memory, reached by nothing the code can call
import os

before = open("/proc/self/cgroup").read()


def fds(pid):
    d = "/proc/%s/fd" % pid
    try:
        names = os.listdir(d)
    except OSError as e:
        print("%s not listable: %s" % (d, e.strerror))
        return []
    out = []
    for n in names:
        try:
            out.append((int(n), os.readlink(os.path.join(d, n))))
        except OSError:
            pass            # the listing's own descriptor, closed since
    return out


for pid in ("self", "1"):
    for fd, target in fds(pid):
        print("%s fd %d -> %s" % (pid, fd, target))
        if "cgroup" in target or target.endswith("/tasks"):
            print("LEAK: a cgroup file is open:", pid, fd, target)
        if not target.startswith("/") or target.startswith("/dev/"):
            continue        # pipes, sockets, /dev/null: not a way out
        if pid == "self" and fd > 2:
            try:
                os.write(fd, b"0")
                print("wrote 0 to fd", fd)
            except OSError as e:
                print("fd %d refuses a write: %s" % (fd, e.strerror))
        try:
            with open(target, "w") as f:
                f.write("0")
            print("wrote 0 to", target)
        except OSError as e:
            print("%s refuses a write: %s" % (target, e.strerror))

after = open("/proc/self/cgroup").read()
if after != before:
    print("MOVED: cgroup was", before.split(), "now", after.split())
else:
    print("cgroup unchanged:", " ".join(before.split()))
print("probes done")
