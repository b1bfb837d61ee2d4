# What /proc shows of the outside.  /proc/self/root and /proc/N/root (N =
# every pid visible, init included) must be the sandbox's own root: same
# inode as "/", no /etc/shadow, /home, /root, /run or old root; cwd links
# stay inside; and no process holds a descriptor on a host file (init
# inherited mcp-exec's stdin/stdout/stderr would be one) -- a line "HOST"
# per breach.
# expect: r["exit_code"] == 0 and "checked" in r["stdout"]
# expect: "HOST" not in r["stdout"]
# expect: re.search(r"^roots checked: [1-9]", r["stdout"], re.M)
# gvisor_expect: r["exit_code"] == 0 and "checked" in r["stdout"]
# gvisor_expect: set(re.findall(r"^HOST path visible via \S+ : (\S+)", r["stdout"], re.M)) <= {"sys"}
# gvisor_expect: re.search(r"^roots checked: [1-9]", r["stdout"], re.M)
# gvisor_contained: the one extra name under / is /sys, an empty read-only tmpfs (gVisor always has a /sys); no host path is reachable
# wasm_expect: r["exit_code"] == 0 and "0 breaches" in r["stdout"]
# wasm_contained: Pyodide has no /proc: the code's / is Pyodide's in-memory file system, with no process root to climb through
import os

breaches = []

def host(*a):
    breaches.append(" ".join(str(x) for x in a))
    print("HOST", *a)

root = os.stat("/")
top = sorted(os.listdir("/"))
print("/ is", top)
pids = sorted(p for p in os.listdir("/proc") if p.isdigit())
print("pids", pids)
n = 0
for pid in ["self", "thread-self"] + pids:
    base = "/proc/%s" % pid
    r = base + "/root"
    try:
        st = os.stat(r)
    except OSError as e:
        print(pid, "root not accessible:", e.strerror)
        continue
    n += 1
    if (st.st_dev, st.st_ino) != (root.st_dev, root.st_ino):
        host("root for", pid, "is not the sandbox's /")
    if sorted(os.listdir(r)) != top:
        host("root listing for", pid, sorted(os.listdir(r)))
    for p in ("etc/shadow", "home", "root", "run", "var", "boot", ".old-root",
              "etc/ssh", "run/stockade", "proc/kcore", "sys"):
        if os.path.lexists(os.path.join(r, p)):
            host("path visible via", r, ":", p)
    # Climbing out from the magic link goes nowhere.
    up = os.stat(os.path.join(r, "..", "..", ".."))
    if (up.st_dev, up.st_ino) != (root.st_dev, root.st_ino):
        host("../.. from", r, "leaves the root")
    for link in ("root", "cwd", "exe"):
        try:
            t = os.readlink(os.path.join(base, link))
        except OSError as e:
            print(pid, link, "unreadable:", e.strerror)
            continue
        print(pid, link, "->", t)
        if link == "root" and t != "/":
            host("root link of", pid, "is", t)
        if not os.path.exists(t):
            host(link, "of", pid, "names a path not in the sandbox:", t)
    # Descriptors: pipes, sockets, anon inodes, and files of the sandbox.
    try:
        fds = os.listdir(base + "/fd")
    except OSError as e:
        print(pid, "fd list unreadable:", e.strerror)
        continue
    for fd in fds:
        try:
            t = os.readlink("%s/fd/%s" % (base, fd))
        except OSError:
            continue
        if t.startswith("/") and not (
                t == "/dev/null" or t.startswith(("/workspace", "/tmp",
                                                  "/dev/shm", "/proc/"))):
            host("fd %s of pid %s is %s" % (fd, pid, t))
            try:
                with open("%s/fd/%s" % (base, fd), "rb") as f:
                    print("  and reads as", f.read(200))
            except OSError as e:
                print("  (not readable: %s)" % e.strerror)
# The summary last, where a failure report shows it.
print("roots checked: %d, %d breaches" % (n, len(breaches)))
for b in breaches:
    print("HOST", b)
