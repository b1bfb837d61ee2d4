# A double-forked, setsid() grandchild keeps stdout open and the parent
# never ends: at the timeout everything dies, and the result is back
# within the timeout plus one second.
# timeout_ms: 2000
# expect: r["timed_out"] and r["exit_code"] == 137
# expect: wall < 2.0 + 1.0
# expect: "grandchild" in r["stdout"]
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        print("grandchild", os.getpid(), flush=True)
        while True:
            sys.stdout.write("."); sys.stdout.flush(); time.sleep(0.05)
    os._exit(0)
while True:
    time.sleep(1)
