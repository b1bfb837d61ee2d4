# A large sparse file: seeking to 1 GiB and writing one byte, growing a
# file with ftruncate and fallocate.  RLIMIT_FSIZE (file_size 32M) refuses
# each with EFBIG (CPython ignores SIGXFSZ); a sparse file below the limit
# is allowed but not collected as an artifact (past max_file); finally,
# with SIGXFSZ back to its default, the program dies of it: exit code 153.
# expect: r["exit_code"] == 128 + 25 and not r["timed_out"] and not r["oom_killed"]
# expect: "seek+write: EFBIG" in r["stdout"]
# expect: "ftruncate: EFBIG" in r["stdout"]
# expect: "fallocate: EFBIG" in r["stdout"]
# expect: "below limit: ok" in r["stdout"]
# expect: "dying of SIGXFSZ" in r["stdout"] and "SURVIVED" not in r["stdout"]
# expect: not any(a["name"] == "sparse.csv" for a in r["artifacts"])
# expect: any(s["name"] == "sparse.csv" for s in r.get("artifacts_skipped", []))
# wasm_expect: r["exit_code"] == 1 and "EFBIG" in r["stdout"] and "posix_fallocate" in r["stderr"]
# wasm_contained: the file size limit holds node's writes (EFBIG); Pyodide has no posix_fallocate
import errno, os, signal

def probe(what, fn):
    try:
        fn()
        print("%s: SUCCEEDED" % what)
    except OSError as e:
        print("%s: %s" % (what, errno.errorcode.get(e.errno, e.errno)))

fd = os.open("/workspace/big.bin", os.O_RDWR | os.O_CREAT, 0o600)
probe("seek+write", lambda: (os.lseek(fd, 1 << 30, os.SEEK_SET),
                             os.write(fd, b"x")))
probe("ftruncate", lambda: os.ftruncate(fd, 1 << 30))
probe("fallocate", lambda: os.posix_fallocate(fd, 0, 1 << 30))
print("size on disk:", os.fstat(fd).st_size)
os.close(fd)
os.unlink("/workspace/big.bin")

# 30 MiB apparent, a few bytes used: fine for the file system, too big to
# be taken as an artifact.
with open("/workspace/sparse.csv", "wb") as f:
    f.seek(30 << 20)
    f.write(b"\n")
print("below limit: ok", os.stat("/workspace/sparse.csv").st_size)

signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
print("dying of SIGXFSZ", flush=True)
fd = os.open("/workspace/big2.bin", os.O_WRONLY | os.O_CREAT, 0o600)
os.lseek(fd, 1 << 30, os.SEEK_SET)
os.write(fd, b"x")
print("SURVIVED the write past the limit")
