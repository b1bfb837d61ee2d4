# The timeout must hold even when the program closes its stdout and
# stderr (so mcp-exec sees both streams end) and then keeps running, here
# in a setsid grandchild while the command itself waits for it: at the
# timeout everything dies, reported as timed out, within a second of it.
# timeout_ms: 2000
# expect: r["timed_out"] and r["exit_code"] == 137
# The kill is judged by the run's own clock (duration_ms, from the
# sandbox's start, which the timeout counts too); the wall also holds
# mcp-exec's start and its audit round trips, slow under emulation.
# expect: r["duration_ms"] < 2000 + 1000
# expect: wall < 2.0 + 3.0
# expect: "closing streams" in r["stdout"]
# wasm_expect: r["exit_code"] == 137 and r["timed_out"] and wall < 20
# wasm_contained: Pyodide starts no processes; the code does not end, and the timeout kills the sandbox whole
import os, time
print("closing streams", flush=True)
if os.fork() == 0:
    os.setsid()
    os.close(1)
    os.close(2)
    time.sleep(20)
    os._exit(0)
os.close(1)
os.close(2)
os.wait()
