# Starting threads without end: the pids limit (32 in this profile) stops
# them with an error the program sees, and it still ends cleanly by itself
# once it lets them go.
# expect: r["exit_code"] == 0 and not r["timed_out"] and not r["oom_killed"]
# expect: re.search(r"^limited after (\d+) threads", r["stdout"], re.M)
# expect: 0 < int(re.search(r"after (\d+) threads", r["stdout"]).group(1)) < r["limits"]["pids"]
# expect: "all joined" in r["stdout"]
# expect: wall < 8
# wasm_expect: r["exit_code"] == 0 and "after 0 threads" in r["stdout"]
# wasm_contained: Pyodide starts no threads: there is nothing to bomb; the pids limit still holds node's own
import threading
stop = threading.Event()
threads = []
try:
    while len(threads) < 10000:
        t = threading.Thread(target=stop.wait)
        t.start()
        threads.append(t)
    print("NOT LIMITED: started", len(threads), "threads")
except RuntimeError as e:
    print("limited after %d threads: %s" % (len(threads), e))
stop.set()
for t in threads:
    t.join()
print("all joined")
