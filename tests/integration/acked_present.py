"""Checks that every acknowledged event (lines "writer id seq hash" written
by bench/audit_load --acked) is in the log with that seq and hash.
Usage: acked_present.py LOGDIR ACKED-FILE; prints the count checked."""
import glob
import sys

logdir, acked = sys.argv[1], sys.argv[2]
have = {}
for path in sorted(glob.glob(logdir + "/audit-*.log")):
    with open(path, "rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                continue
            seq = int(line[7:line.index(b",")])
            have[seq] = line[-67:-3].decode()
n = 0
with open(acked) as f:
    for line in f:
        parts = line.split()
        if len(parts) != 4:
            continue  # the load tool was killed mid-line
        seq, h = int(parts[2]), parts[3]
        if have.get(seq) != h:
            sys.exit("acked seq %d hash %s missing from the log" % (seq, h))
        n += 1
print(n)
