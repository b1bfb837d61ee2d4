# Filling the sandbox's /tmp (a tmpfs, tmp_size 16M) with one endless
# file. The write fails with ENOSPC at the configured size, nothing is
# killed, and no file of that name appears on the host's /tmp (the file
# is left in place on purpose).
# expect: r["exit_code"] == 0 and not r["oom_killed"] and not r["timed_out"]
# expect: peak_within_limit(r)
# expect: "stopped: ENOSPC" in r["stdout"]
# expect: "fs_size=%d" % (16 << 20) in r["stdout"]
# expect: 16 * 2**20 - 2**18 <= int(re.search(r"written=(\d+)", r["stdout"]).group(1)) <= 16 * 2**20
# host: not os.path.exists("/tmp/stockade-escape-fill-tmp")
# host: not os.path.exists("/dev/shm/stockade-escape-fill-tmp")
# host: not os.path.exists("/stockade-escape-fill-tmp")
import errno, os
d = "/tmp"
sv = os.statvfs(d)
print("fs_size=%d" % (sv.f_blocks * sv.f_frsize))
chunk = b"\xa5" * 65536
written = 0
fd = os.open(os.path.join(d, "stockade-escape-fill-tmp"),
             os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
try:
    while written < 4 << 30:
        written += os.write(fd, chunk)
    print("NOT STOPPED after", written)
except OSError as e:
    print("stopped: %s written=%d" % (errno.errorcode.get(e.errno, e.errno),
                                      written))
