# Links in the workspace aimed at host files.  A symlink can be made, but
# inside it resolves in the sandbox's own tree (the fake /etc/passwd, no
# host paths), and the collector skips it as "symlink" rather than copying
# what it points at; a hard link to a host file fails (EXDEV: another
# mount), and a hard-linked workspace file is skipped as "hard link".
# expect: r["exit_code"] == 0 and "probes done" in r["stdout"]
# expect: "LEAK" not in r["stdout"] and "HARDLINKED" not in r["stdout"]
# expect: "passwd via link: 2 lines, sandbox's own" in r["stdout"]
# expect: {s["name"]: s["reason"] for s in r.get("artifacts_skipped", [])}.get("passwd.txt") == "symlink"
# expect: {s["name"]: s["reason"] for s in r.get("artifacts_skipped", [])}.get("shadow.csv") == "symlink"
# expect: {s["name"]: s["reason"] for s in r.get("artifacts_skipped", [])}.get("inputs-root.txt") == "symlink"
# expect: {s["name"]: s["reason"] for s in r.get("artifacts_skipped", [])}.get("a.txt") == "hard link"
# expect: [a["name"] for a in r["artifacts"]] == ["plain.txt"]
# expect: all(a["size"] == 6 for a in r["artifacts"])
# host: [n for n in os.listdir(os.path.dirname(r["artifacts"][0]["uri"][len("file://"):])) if n != "plain.txt"] == []
# wasm_expect: r["exit_code"] == 1 and "Permission denied: '/etc/passwd'" in r["stderr"]
# wasm_contained: the /etc Pyodide shows is its own, in memory; a link from it into /workspace crosses file systems and is refused
# wasm_host: r["artifacts"] == []
import errno, os

def err(e):
    return errno.errorcode.get(e.errno, e.errno)

os.chdir("/workspace")
links = {"passwd.txt": "/etc/passwd", "shadow.csv": "/etc/shadow",
         "inputs-root.txt": "@INPUTS@/data.csv",
         "state": "@STATE@"}
for name, target in links.items():
    os.symlink(target, name)
    try:
        with open(name, "rb") as f:
            data = f.read()
        print(name, "->", target, "opens:", len(data), "bytes")
        if target != "/etc/passwd":
            print("LEAK: a host-only path opened from inside:", target)
    except OSError as e:
        print(name, "->", target, "does not open:", err(e))

lines = open("passwd.txt").read().splitlines()
users = [l.split(":")[0] for l in lines]
if users == ["root", "sandbox"]:
    print("passwd via link: %d lines, sandbox's own" % len(lines))
else:
    print("LEAK: passwd via link shows host users:", users)

# Hard links: host files are on other mounts; so is anything outside the
# workspace.  Through a descriptor too (linkat of /proc/self/fd/N).
for target in ("/etc/passwd", "/usr/bin/python3", "/etc/ld.so.cache",
               "/tmp", "/dev/null"):
    try:
        os.link(target, "hl-" + os.path.basename(target) + ".txt")
        print("HARDLINKED", target)
    except OSError as e:
        print("hard link to", target, "refused:", err(e))
fd = os.open("/usr/bin/python3", os.O_RDONLY)
try:
    os.link("/proc/self/fd/%d" % fd, "hl-fd.txt", follow_symlinks=True)
    print("HARDLINKED /usr/bin/python3 through its descriptor")
except OSError as e:
    print("hard link through /proc/self/fd refused:", err(e))
os.close(fd)

# Inside the workspace a hard link works, but the collector must not take
# a file with more than one link (it could be a host file's other name).
open("a.txt", "w").write("hello\n")
os.link("a.txt", "b.txt")
open("plain.txt", "w").write("plain\n")
print("probes done")
