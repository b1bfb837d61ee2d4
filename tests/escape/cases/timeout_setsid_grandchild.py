# A double-forked, setsid() grandchild keeps stdout open and the parent
# never ends: at the timeout everything dies, and the result is back
# within the timeout plus one second.
# timeout_ms: 2000
# expect: r["timed_out"] and r["exit_code"] == 137
# The kill is judged by the run's own clock (duration_ms, from the
# sandbox's start, which the timeout counts too); the wall also holds
# mcp-exec's start and its audit round trips, slow under emulation.
# expect: r["duration_ms"] < 2000 + 1000
# expect: wall < 2.0 + 3.0
# expect: "grandchild" in r["stdout"]
# gvisor_expect: r["timed_out"] and r["exit_code"] == 137 and "grandchild" in r["stdout"]
# gvisor_expect: r["duration_ms"] < 2000 + 1000 and wall < 2.0 + 2.5
# gvisor_contained: the same kill at the timeout (the run's own duration_ms stays within it plus one second); the wall clock also holds runsc's probe and start, ~0.5-1.5 s on a loaded host
# wasm_expect: r["exit_code"] == 137 and r["timed_out"] and wall < 20
# wasm_contained: Pyodide starts no processes; the code does not end, and the timeout kills the sandbox whole
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
