# A hostile workspace for the artifact collector: a unix socket and a
# directory symlink to /etc, names with a newline, an escape sequence and
# invalid UTF-8, a file over max_file, more files than max_count, and a
# very deep tree.  mcp-exec must finish, take only safe, regular files
# within the limits, and list the rest as skipped with the reason.
# expect: r["exit_code"] == 0 and "workspace ready" in r["stdout"]
# expect: 0 < len(r["artifacts"]) <= 32
# expect: all(re.fullmatch(r"[\x20-\x7e]+", a["name"]) for a in r["artifacts"])
# expect: not any(a["name"].startswith(("etc", "sock")) or a["name"] == "big.csv" for a in r["artifacts"])
# expect: {s["name"]: s["reason"] for s in r["artifacts_skipped"]}.get("sock.txt") == "not a regular file"
# expect: {s["name"]: s["reason"] for s in r["artifacts_skipped"]}.get("etc") == "symlink"
# expect: {s["name"]: s["reason"] for s in r["artifacts_skipped"]}.get("big.csv", "").startswith("larger than")
# expect: sum(s["reason"] == "unsafe name" for s in r["artifacts_skipped"]) == 3
# expect: any(s["reason"].startswith("more than 32 artifacts") for s in r["artifacts_skipped"])
# expect: any(s["reason"].startswith("deeper than") for s in r["artifacts_skipped"])
# expect: sum(a["size"] for a in r["artifacts"]) <= 32 << 20
# host: all(not os.path.islink(os.path.join(d, f)) and os.path.isfile(os.path.join(d, f)) for d, _, fs in os.walk(os.path.dirname(r["artifacts"][0]["uri"][len("file://"):])) for f in fs)
# gvisor_expect: r["exit_code"] == 0 and "workspace ready" in r["stdout"]
# gvisor_expect: 0 < len(r["artifacts"]) <= 32
# gvisor_expect: all(re.fullmatch(r"[\x20-\x7e]+", a["name"]) for a in r["artifacts"])
# gvisor_expect: not any(a["name"].startswith(("etc", "sock")) or a["name"] == "big.csv" for a in r["artifacts"])
# gvisor_expect: {s["name"]: s["reason"] for s in r["artifacts_skipped"]}.get("sock.txt", "not a regular file") == "not a regular file"
# gvisor_expect: {s["name"]: s["reason"] for s in r["artifacts_skipped"]}.get("etc") == "symlink"
# gvisor_expect: {s["name"]: s["reason"] for s in r["artifacts_skipped"]}.get("big.csv", "").startswith("larger than")
# gvisor_expect: sum(s["reason"] == "unsafe name" for s in r["artifacts_skipped"]) == 3
# gvisor_expect: any(s["reason"].startswith("more than 32 artifacts") for s in r["artifacts_skipped"])
# gvisor_expect: any(s["reason"].startswith("deeper than") for s in r["artifacts_skipped"])
# gvisor_expect: sum(a["size"] for a in r["artifacts"]) <= 32 << 20
# gvisor_contained: a unix socket bound in /workspace is the sentry's own object: the gofer makes no socket file on the host, so the collector finds nothing there to skip; every other trick is refused as on native
# wasm_expect: r["exit_code"] == 1 and "no attribute 'AF_UNIX'" in r["stderr"]
# wasm_contained: Pyodide's socket module has no AF_UNIX: no socket can be left in the workspace; the other tricks met the artifact checks as on native
# wasm_host: r["artifacts"] == []
import os, socket
os.chdir("/workspace")
s = socket.socket(socket.AF_UNIX)
s.bind("sock.txt")
os.symlink("/etc", "etc")
for name in (b"evil\nname.txt", b"\x1b[31mred.txt", b"bad\xff.txt"):
    with open(name, "w") as f:
        f.write("hi\n")
with open("big.csv", "w") as f:
    f.write("a,b\n" + "1,2\n" * (9 << 18))      # 9 MiB
for i in range(40):
    with open("f%02d.txt" % i, "w") as f:
        f.write("file %d\n" % i)
d = "deep"
for i in range(40):
    d = os.path.join(d, "d")
os.makedirs(d)
with open(os.path.join(d, "bottom.txt"), "w") as f:
    f.write("bottom\n")
print("workspace ready")
