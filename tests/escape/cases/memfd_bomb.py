# A memory bomb that no tmpfs size caps: anonymous memfd files (memfd_create
# is allowed), 16 MiB each, kept open.  The memory cgroup must still end
# it, reported as oom_killed, exit code 137, peak at the limit (give or
# take the pages a dying task is charged past it: peak_within_limit).
# expect: r["oom_killed"] and r["exit_code"] == 137 and not r["timed_out"]
# expect: peak_within_limit(r)
# expect: "NOT LIMITED" not in r["stdout"]
# wasm_expect: r["exit_code"] == 1 and "no attribute 'memfd_create'" in r["stderr"]
# wasm_contained: not applicable: Pyodide has no memfd_create; its memory is the wasm heap, which memory_bomb shows the cgroup stops
import os
fds = []
chunk = b"\x5a" * (1 << 20)
while len(fds) < 100:
    fd = os.memfd_create("bomb")
    for _ in range(16):
        os.write(fd, chunk)
    fds.append(fd)
    print("memfd", len(fds), "total MiB", 16 * len(fds), flush=True)
print("NOT LIMITED: 1600 MiB in memfds")
