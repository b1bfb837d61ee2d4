# Allocating past the memory limit: the OOM killer ends it, reported as
# oom_killed with exit code 137.
# expect: r["oom_killed"] and r["exit_code"] == 137
blocks = []
while True:
    blocks.append(bytearray(16 * 1024 * 1024))
