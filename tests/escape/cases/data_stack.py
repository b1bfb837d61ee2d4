# The sandbox still does its job: numpy, pandas and matplotlib (Agg) end to
# end, reading a staged input and leaving a PNG in the workspace, which
# comes back as an artifact whose size and sha256 match what was written.
# file: data.csv
# timeout_ms: 30000
# expect: r["exit_code"] == 0 and not r["timed_out"]
# expect: r["inputs"] == ["/inputs/data.csv"]
# expect: [a["name"] for a in r["artifacts"]] == ["chart.png"]
# expect: r["artifacts"][0]["mime"] == "image/png"
# expect: re.fullmatch(r"[0-9a-f]{64}", r["artifacts"][0]["sha256"])
# expect: "png size=%d sha256=%s" % (r["artifacts"][0]["size"], r["artifacts"][0]["sha256"]) in r["stdout"]
# expect: "sum b = 6" in r["stdout"]
# host: open(r["artifacts"][0]["uri"][len("file://"):], "rb").read(8) == b"\x89PNG\r\n\x1a\n"
# host: __import__("hashlib").sha256(open(r["artifacts"][0]["uri"][len("file://"):], "rb").read()).hexdigest() == r["artifacts"][0]["sha256"]
# wasm_expect: r["exit_code"] == 1 and "No module named 'numpy'" in r["stderr"]
# wasm_contained: not applicable: the wasm runtime has the standard library only (docs/runtimes.md)
# wasm_host: r["artifacts"] == []
import hashlib, os
import numpy as np
import pandas as pd
import matplotlib
import matplotlib.pyplot as plt

df = pd.read_csv("/inputs/data.csv")
print("sum b = %d" % df["b"].sum())
x = np.linspace(0, 2 * np.pi, 200)
fig, ax = plt.subplots(figsize=(4, 3))
ax.plot(x, np.sin(x) * df["a"].mean())
ax.bar(df["a"], df["b"])
fig.savefig("/workspace/chart.png", dpi=72)
data = open("/workspace/chart.png", "rb").read()
print("backend", matplotlib.get_backend())
print("png size=%d sha256=%s" % (len(data), hashlib.sha256(data).hexdigest()))
