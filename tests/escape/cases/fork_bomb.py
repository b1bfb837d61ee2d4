# A fork bomb stops at the pids limit; the host is unaffected and the
# sandbox still ends by itself (everything dies with its init).
# expect: r["exit_code"] == 0 and "limited" in r["stdout"]
# expect: not r["timed_out"]
# gvisor_expect: not r["timed_out"]
# gvisor_expect: (r["exit_code"] == 0 and "limited" in r["stdout"]) or (r["oom_killed"] and r["exit_code"] == 137)
# gvisor_contained: every forked interpreter's memory is the sentry's, charged to the sandbox's one host cgroup, so the memory limit may end the bomb (OOM, the whole sandbox) before RLIMIT_NPROC, which the sentry enforces, refuses a fork
import os
n = 0
try:
    while True:
        if os.fork() == 0:
            import time
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError as e:
    print("limited after", n, "forks:", e.strerror)
