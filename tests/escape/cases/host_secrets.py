# Reading the host's secrets: the environment (only the fixed sandbox set;
# the runner puts a sentinel variable in mcp-exec's own environment), every
# visible process's environ, the hostname, /etc/shadow, the test state
# directory, the kernel log (/dev/kmsg, syslog(2)), /proc/kcore, /proc/sys,
# /sys.  A line "LEAK" per breach.
# expect: r["exit_code"] == 0 and "secrets checked" in r["stdout"]
# expect: "LEAK" not in r["stdout"]
# expect: "STOCKADE_ESCAPE_SENTINEL" not in r["stdout"]
# expect: "hostname sandbox sandbox sandbox" in r["stdout"]
# gvisor_expect: r["exit_code"] == 0 and "secrets checked" in r["stdout"]
# gvisor_expect: set(re.findall(r"^LEAK (.*?)(?: lists| returned)", r["stdout"], re.M)) <= {"visible: /proc/sys", "visible: /sys"}
# gvisor_expect: "STOCKADE_ESCAPE_SENTINEL" not in r["stdout"] and "hostname sandbox sandbox sandbox" in r["stdout"]
# gvisor_contained: /proc/sys is the sentry's synthetic one (3 entries), and /sys an empty tmpfs put where gVisor would mount its own: neither is the host kernel's
# wasm_expect: r["exit_code"] == 1 and "'/etc/hostname'" in r["stderr"] and "LEAK" not in r["stdout"]
# wasm_contained: the environment is the sandbox's fixed list (checked first, no LEAK); /etc is Pyodide's in-memory file system, which holds no host file
import ctypes, errno, os, socket

leaks = []

def leak(*a):
    leaks.append(" ".join(str(x) for x in a))
    print("LEAK", *a)

FIXED = {
    "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
    "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "USER": "sandbox",
    "LOGNAME": "sandbox", "TERM": "dumb", "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": "/tmp/.matplotlib", "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1", "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
}
# -I ignores PYTHON* variables for the interpreter, not os.environ.
env = dict(os.environ)
for k in sorted(set(env) - set(FIXED)):
    leak("env: our environment has %s (%d chars)" % (k, len(env[k])))
for k in sorted(set(FIXED) - set(env)):
    print("env: %s missing" % k)
for k in FIXED:
    if k in env and env[k] != FIXED[k]:
        leak("env: %s differs" % k)

# Every process we can see: nothing but the fixed set either.
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    try:
        raw = open("/proc/%s/environ" % pid, "rb").read()
    except OSError as e:
        print("pid", pid, "environ unreadable:", e.strerror)
        continue
    names = [v.split(b"=", 1)[0].decode(errors="replace")
             for v in raw.split(b"\0") if v]
    extra = sorted(set(names) - set(FIXED))
    if "STOCKADE_ESCAPE_SENTINEL" in names:
        leak("/proc/%s/environ holds the caller's "
              "STOCKADE_ESCAPE_SENTINEL" % pid)
    if extra:
        leak("/proc/%s/environ: %d variables not ours, e.g. %s" % (
            pid, len(extra), extra[:8]))
    else:
        print("pid", pid, "environ: the fixed set")

print("hostname", socket.gethostname(), os.uname().nodename,
      open("/etc/hostname").read().strip())

for p in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/root", "/home",
          "/run/stockade", "@STATE@", "@INPUTS@", "/var/run",
          "/dev/kmsg", "/dev/mem", "/dev/kmem", "/dev/port", "/proc/kcore",
          "/proc/kmsg", "/proc/sys", "/proc/sysrq-trigger", "/proc/keys",
          "/proc/kallsyms", "/proc/modules", "/proc/config.gz",
          "/sys", "/sys/kernel", "/sys/fs/cgroup", "/etc/ssh", "/boot",
          "/var/log"):
    if os.path.lexists(p):
        try:
            if os.path.isdir(p):
                what = "lists %d entries" % len(os.listdir(p))
            else:
                what = "reads %d bytes" % len(open(p, "rb").read(4096))
        except OSError as e:
            what = "exists but: " + e.strerror
        leak("visible:", p, what)
    else:
        print("absent:", p)

# The kernel log through the syscall: SYSLOG_ACTION_READ_ALL (3) and
# SYSLOG_ACTION_SIZE_BUFFER (10).
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(1 << 16)
for action in (10, 3):
    n = libc.klogctl(action, buf, len(buf))
    if n >= 0:
        leak("syslog(%d) returned %d" % (action, n))
    else:
        print("syslog(%d):" % action, errno.errorcode[ctypes.get_errno()])

# Writes under /sys (there should be no /sys to write to).
for p in ("/sys/kernel/uevent_helper", "/sys/power/state",
          "/sys/fs/cgroup/cgroup.procs"):
    try:
        with open(p, "w") as f:
            f.write("x")
        leak("wrote", p)
    except OSError as e:
        print("write", p, errno.errorcode[e.errno])
# The summary last, where a failure report shows it.
print("secrets checked, %d leaks" % len(leaks))
for l in leaks:
    print("LEAK", l)
