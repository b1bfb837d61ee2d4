# Who the code runs as: uid and gid 65534 (one host uid mapped, nothing
# else), no supplementary groups, no capability in any set, no_new_privs,
# a seccomp filter (mode 2), cwd /workspace -- and it cannot become root.
# expect: r["exit_code"] == 0
# expect: {k: v for k, v in json.loads(r["stdout"].splitlines()[-1]).items() if not k.startswith("set")} == {"uid": [65534] * 4, "gid": [65534] * 4, "groups": [], "CapInh": 0, "CapPrm": 0, "CapEff": 0, "CapBnd": 0, "CapAmb": 0, "NoNewPrivs": 1, "Seccomp": 2, "cwd": "/workspace", "uid_map_lines": 1, "gid_map_lines": 1, "inner_uid": 65534, "inner_gid": 65534, "user": "sandbox"}
# expect: json.loads(r["stdout"].splitlines()[-1])["setuid0"] in ("EPERM", "EINVAL")
# expect: json.loads(r["stdout"].splitlines()[-1])["setresuid0"] in ("EPERM", "EINVAL")
# expect: json.loads(r["stdout"].splitlines()[-1])["setgroups"] == "EPERM"
# gvisor_expect: r["exit_code"] == 0
# gvisor_expect: {k: v for k, v in json.loads(r["stdout"].splitlines()[-1]).items() if k in ("uid", "gid", "groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "NoNewPrivs", "Seccomp", "cwd", "user")} == {"uid": [65534] * 4, "gid": [65534] * 4, "groups": [], "CapInh": 0, "CapPrm": 0, "CapEff": 0, "CapBnd": 0, "NoNewPrivs": 1, "Seccomp": 2, "cwd": "/workspace", "user": "sandbox"}
# gvisor_expect: all(json.loads(r["stdout"].splitlines()[-1])[k] in ("EPERM", "EINVAL") for k in ("setuid0", "setresuid0", "setgroups"))
# gvisor_contained: the uid_map and CapAmb lines are the sentry's (its /proc lacks CapAmb and maps its own user namespace whole); on the host the sentry and the code's stubs run as the sandbox's leased uid (two_sandboxes_at_once), runsc's gofer as a second lease, under runsc's own seccomp filter
# wasm_expect: r["exit_code"] == 1 and "No module named 'pwd'" in r["stderr"]
# wasm_contained: not applicable: Pyodide has no pwd module and no host identity to show; the node process that runs it is the sandbox's 65534 under the native walls
import ctypes, errno, json, os, pwd
PR_GET_NO_NEW_PRIVS = 39
status = {}
for line in open("/proc/self/status"):
    k, _, v = line.partition(":")
    status[k] = v.split()
uid_map = open("/proc/self/uid_map").read().split("\n")
uid_map = [l.split() for l in uid_map if l.strip()]
gid_map = [l.split() for l in open("/proc/self/gid_map").read().split("\n")
           if l.strip()]
try:
    setgroups = open("/proc/self/setgroups").read().strip()
except FileNotFoundError:  # gVisor's /proc has no such file
    setgroups = "absent"
print("uid_map", uid_map, "gid_map", gid_map, "setgroups", setgroups)

def try_call(fn, *a):
    try:
        fn(*a)
        return "SUCCEEDED"
    except OSError as e:
        return errno.errorcode[e.errno]

out = {
    "uid": [int(x) for x in status["Uid"]],
    "gid": [int(x) for x in status["Gid"]],
    "groups": os.getgroups(),
    "CapInh": int(status["CapInh"][0], 16),
    "CapPrm": int(status["CapPrm"][0], 16),
    "CapEff": int(status["CapEff"][0], 16),
    "CapBnd": int(status["CapBnd"][0], 16),
    # gVisor's /proc/self/status has no CapAmb line.
    "CapAmb": int(status["CapAmb"][0], 16) if "CapAmb" in status else None,
    # Nor a NoNewPrivs line: then prctl says.
    "NoNewPrivs": int(status["NoNewPrivs"][0]) if "NoNewPrivs" in status
    else ctypes.CDLL(None).prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
    "Seccomp": int(status["Seccomp"][0]) if "Seccomp" in status else None,
    "cwd": os.getcwd(),
    "uid_map_lines": len(uid_map), "gid_map_lines": len(gid_map),
    "inner_uid": int(uid_map[0][0]) if uid_map and uid_map[0][2] == "1" else None,
    "inner_gid": int(gid_map[0][0]) if gid_map and gid_map[0][2] == "1" else None,
    "setuid0": try_call(os.setuid, 0),
    "setresuid0": try_call(os.setresuid, 0, 0, 0),
    "setgroups": try_call(os.setgroups, [0]),
    "user": pwd.getpwuid(os.getuid()).pw_name,
}
print(json.dumps(out))
