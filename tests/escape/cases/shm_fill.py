# A memory bomb through /dev/shm: an endless file written there, then a
# file mapped and touched page by page.  The shm tmpfs (shm_size 8M) says
# ENOSPC to the write and SIGBUS to the mapping, or the memory cgroup ends
# it; either way the host's /dev/shm never sees the file (left in place).
# expect: r["exit_code"] == 0 and not r["timed_out"]
# expect: peak_within_limit(r)
# expect: "fs_size=%d" % (8 << 20) in r["stdout"]
# expect: "write stopped: ENOSPC" in r["stdout"]
# expect: 8 * 2**20 - 2**18 <= int(re.search(r"written=(\d+)", r["stdout"]).group(1)) <= 8 * 2**20
# expect: re.search(r"mmap stopped: (SIGBUS|SIGKILL)", r["stdout"])
# expect: int(re.search(r"touched=(\d+)", r["stdout"]).group(1)) <= 8 * 2**20
# host: not os.path.exists("/dev/shm/stockade-escape-fill-shm")
# host: not os.path.exists("/dev/shm/stockade-escape-map-shm")
# host: not os.path.exists("/tmp/stockade-escape-fill-shm")
# wasm_expect: r["exit_code"] == 137 and r["oom_killed"]
# wasm_contained: /dev/shm is Pyodide's in-memory file system, in the wasm heap: the cgroup's memory limit stops it (OOM), as memory_bomb
import errno, mmap, os, signal, sys
d = "/dev/shm"
sv = os.statvfs(d)
print("fs_size=%d" % (sv.f_blocks * sv.f_frsize))
chunk = b"\xa5" * 65536
written = 0
fd = os.open(os.path.join(d, "stockade-escape-fill-shm"),
             os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
try:
    while written < 4 << 30:
        written += os.write(fd, chunk)
    print("write NOT STOPPED after", written)
except OSError as e:
    print("write stopped: %s written=%d" % (
        errno.errorcode.get(e.errno, e.errno), written))
os.close(fd)
os.unlink(os.path.join(d, "stockade-escape-fill-shm"))

# The same through a shared mapping: 24 MiB of holes, then touch every page.
r, w = os.pipe()
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    os.close(r)
    fd = os.open(os.path.join(d, "stockade-escape-map-shm"),
                 os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.ftruncate(fd, 24 << 20)
    m = mmap.mmap(fd, 24 << 20)
    for off in range(0, 24 << 20, 4096):
        m[off] = 1
        if off % (1 << 20) == 0:
            os.write(w, b"%d\n" % (off + 4096))
    os.write(w, b"%d\n" % (24 << 20))
    os._exit(0)
os.close(w)
progress = os.read(r, 1 << 20)
while True:
    more = os.read(r, 1 << 20)
    if not more:
        break
    progress += more
_, st = os.waitpid(pid, 0)
touched = int(progress.split()[-1]) if progress.split() else 0
if os.WIFSIGNALED(st):
    print("mmap stopped: %s touched=%d" % (
        signal.Signals(os.WTERMSIG(st)).name, touched))
else:
    print("mmap NOT STOPPED: status %d touched=%d" % (st, touched))
