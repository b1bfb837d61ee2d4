"""The escape suite: each tests/escape/cases/*.py is run as untrusted code
through `mcp-exec run`, and the result is checked against the case's header:

    # profile: escape            (optional; a profile in tests/escape/rules)
    # timeout_ms: 5000           (optional)
    # file: NAME                 (optional; staged from the inputs root)
    # expect: r["exit_code"] == 0 and "contained" in r["stdout"]
    # host: not os.path.exists("/tmp/escaped")   (checked on the host after)
    # expect_refused: symlink    (mcp-exec must refuse the run: exit non-zero
                                  with this text in its stderr)
    # gvisor_expect: ...         (RUNTIME=gvisor: these replace the expect
                                  lines, for a case gVisor answers
                                  differently; each such case must say why
                                  it is still contained:)
    # gvisor_contained: ...      (printed with the case's result)
    # wasm_expect: ...           (RUNTIME=wasm, likewise: Pyodide on node
    # wasm_contained: ...         inside the native walls; wasm_host
    # wasm_host: ...              lines replace the host lines)

RUNTIME=gvisor runs every case's profile on the gVisor runtime, every
case as on native; RUNTIME=wasm on the wasm runtime (the code in Pyodide,
whose own file system, processes and calls answer most attacks before the
kernel's walls are reached: each such case says why it is contained).  When runsc cannot run on this machine, the suite says
why and skips.

Each expect/host line is a Python expression over r (the JSON result) and
the helpers below.  @INPUTS@ and @STATE@ in a case (and in the rules, a
template) stand for this run's inputs root and state directory: every run
makes its own fixtures in a scratch directory of its own and removes them.  A case passes when mcp-exec worked (exit 0) and every
expression holds.  mcp-exec runs with SENTINEL_VAR in its environment and
with a host file holding the same value as its stdin (STDIN_FILE), and no
case's result may contain that value: nothing of the caller's environment
or descriptors reaches the sandbox.

Usage: run.py MCP_EXEC [CASE ...]
       run.py --prepare DIR    (the fixtures alone, for other tests)
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(HERE, "rules")
PYTHON = "/usr/bin/python3"
# In mcp-exec's environment for every run; its value must never come back.
SENTINEL_VAR = "STOCKADE_ESCAPE_SENTINEL"
SENTINEL = "leak-5e1f7c0d9a3b"
RUN_TIMEOUT_S = 120
# The wall the cases run against: native (the default), gvisor or wasm.
RUNTIME = os.environ.get("RUNTIME", "native")
WASM_MEMORY = "512M"
# Set by fixtures(): this run's scratch directory and what lives in it.
RULES = STATE = INPUTS = STDIN_FILE = None


def fixtures(scratch):
    """The suite's fixtures beneath scratch (0711: sandbox uids walk
    through to their state): rules from the template, an inputs root
    with a data file and a symlink to a host file, a stdin file."""
    global RULES, STATE, INPUTS, STDIN_FILE
    os.makedirs(scratch, exist_ok=True)
    os.chmod(scratch, 0o711)
    RULES = os.path.join(scratch, "rules")
    STATE = os.path.join(scratch, "state")
    INPUTS = os.path.join(scratch, "inputs")
    STDIN_FILE = os.path.join(scratch, "stdin")
    for d, _, files in os.walk(TEMPLATE):
        out = os.path.join(RULES, os.path.relpath(d, TEMPLATE))
        os.makedirs(out, exist_ok=True)
        for f in files:
            with open(os.path.join(d, f)) as src, \
                    open(os.path.join(out, f), "w") as dst:
                dst.write(subst(src.read()))
    # RUNTIME=gvisor: every profile of the suite on the gVisor runtime.
    if RUNTIME != "native":
        for f in glob.glob(os.path.join(RULES, "profiles", "*.yaml")):
            if RUNTIME == "wasm":
                # Pyodide's interpreter alone holds ~180 MB.
                text = open(f).read().replace("memory: 128M", "memory: %s"
                                              % WASM_MEMORY)
                open(f, "w").write(text)
            with open(f, "a") as out:
                out.write("runtime: %s\n" % RUNTIME)
    os.makedirs(INPUTS, exist_ok=True)
    with open(os.path.join(INPUTS, "data.csv"), "w") as f:
        f.write("a,b\n1,2\n3,4\n")
    os.symlink("/etc/passwd", os.path.join(INPUTS, "passwd-link"))
    # World-readable, as a caller's stdin file may well be.
    with open(STDIN_FILE, "w") as f:
        f.write(SENTINEL + "\n")
    os.chmod(STDIN_FILE, 0o644)


def subst(text):
    return text.replace("@INPUTS@", INPUTS).replace("@STATE@", STATE)


def header(src):
    h = {"expect": [], "host": [], "file": [], "argv": None,
         "gvisor_expect": [], "wasm_expect": [], "wasm_host": []}
    for line in src.splitlines():
        m = re.match(r"#\s*(\w+):\s*(.*)$", line)
        if not m:
            if line.strip() and not line.startswith("#"):
                break
            continue
        key, val = m.group(1), m.group(2).strip()
        if key in ("expect", "host", "file", "gvisor_expect",
                   "wasm_expect", "wasm_host"):
            h[key].append(val)
        elif key == "argv":
            h["argv"] = json.loads(val)
        else:
            h[key] = val
    return h


def run_case(mcp, path, extra_env=None):
    src = subst(open(path).read())
    h = header(src)
    argv = [mcp, "run", "--rules", RULES, "--state-dir", STATE]
    if "profile" in h:
        argv += ["--profile", h["profile"]]
    if "timeout_ms" in h:
        argv += ["--timeout-ms", h["timeout_ms"]]
    for f in h["file"]:
        argv += ["--file", os.path.join(INPUTS, f)]
    argv.append("--")
    argv += h["argv"] if h["argv"] else [PYTHON, "-I", "-c", src]
    t0 = time.monotonic()
    try:
        with open(STDIN_FILE, "rb") as stdin:
            p = subprocess.run(argv, capture_output=True, stdin=stdin,
                               timeout=RUN_TIMEOUT_S, env=sentinel_env())
    except subprocess.TimeoutExpired as e:
        # mcp-exec itself did not come back: a failure, not a crash.
        p = subprocess.CompletedProcess(argv, -1, e.stdout or b"",
                                        b"mcp-exec still running after %d s "
                                        b"(killed by the runner)" %
                                        RUN_TIMEOUT_S)
    wall = time.monotonic() - t0
    return h, p, wall


def sentinel_env():
    env = dict(os.environ)
    env[SENTINEL_VAR] = SENTINEL
    return env


# A task the memory cgroup is killing may still be charged past the limit
# (the kernel force-charges a dying task's allocations rather than fail
# them): memory_peak, the high-water mark, was seen one page over it on
# gVisor, whose sentry has many threads dying at once.  Any bomb that was
# not stopped overshoots by its next 1-16 MiB allocation, far above this.
PEAK_SLACK = 1 << 20


def peak_within_limit(r):
    """The sandbox's memory high-water mark is the limit's, give or take
    what dying tasks were charged."""
    return r["sandbox"]["memory_peak"] <= (r["limits"]["mem_mb"] << 20) + \
        PEAK_SLACK


def check(name, h, p, wall):
    for out in (p.stdout, p.stderr):
        at = out.find(SENTINEL.encode())
        if at != -1:
            return "the caller's environment or stdin leaked: %r (the " \
                "value of %s and the content of %s) came back in the " \
                "result: ...%r..." % (SENTINEL, SENTINEL_VAR, STDIN_FILE,
                                      out[max(0, at - 300):at + 100])
    if "expect_refused" in h:
        err = p.stderr.decode(errors="replace")
        if p.returncode == 0:
            return "mcp-exec ran the case; it should have refused it " \
                "(stdout: %r)" % p.stdout[-600:]
        if h["expect_refused"] not in err:
            return "mcp-exec refused, but stderr lacks %r: %r" % (
                h["expect_refused"], err)
        return None
    if p.returncode != 0:
        return "mcp-exec exit %d: %s" % (p.returncode,
                                          p.stderr.decode(errors="replace"))
    try:
        r = json.loads(p.stdout)
    except ValueError as e:
        return "mcp-exec's stdout is not one JSON document (%s): %r" % (
            e, p.stdout[:600])
    env = {"r": r, "os": os, "wall": wall, "json": json, "re": re,
           "peak_within_limit": peak_within_limit}
    if RUNTIME != "native" and h.get(RUNTIME + "_expect"):
        if RUNTIME + "_contained" not in h:
            return "%s_expect without %s_contained: say why the " \
                "difference is still contained" % (RUNTIME, RUNTIME)
        h = dict(h, expect=h[RUNTIME + "_expect"])
        if h.get(RUNTIME + "_host"):
            h = dict(h, host=h[RUNTIME + "_host"])
    if r.get("sandbox", {}).get("runtime") != RUNTIME:
        return "ran on runtime %r, not %r" % (
            r.get("sandbox", {}).get("runtime"), RUNTIME)
    for kind in ("expect", "host"):
        for expr in h[kind]:
            try:
                ok = eval(expr, env)
            except Exception as e:  # noqa: BLE001 - report, do not crash
                ok = False
                expr += "  (%s)" % e
            if not ok:
                return "%s failed: %s\n      stdout: %r\n      stderr: %r\n" \
                    "      exit_code=%s timed_out=%s oom_killed=%s" % (
                        kind, expr, r["stdout"][-600:], r["stderr"][-600:],
                        r["exit_code"], r["timed_out"], r["oom_killed"])
    return None


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--prepare":
        fixtures(sys.argv[2])
        return
    mcp = sys.argv[1]
    cases = sys.argv[2:] or sorted(glob.glob(os.path.join(HERE, "cases",
                                                          "*.py")))
    scratch = tempfile.mkdtemp(prefix="stockade-escape.")
    try:
        suite(mcp, cases, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def gvisor_unavailable(mcp):
    """Why the gVisor (or wasm) runtime cannot run here, or None."""
    p = subprocess.run([mcp, "run", "--rules", RULES, "--state-dir", STATE,
                        "--", "/bin/true"], capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT_S)
    err = p.stderr.decode(errors="replace")
    m = re.search(r"runtime: %s cannot run on this host: .*" % RUNTIME, err)
    return m.group(0) if p.returncode != 0 and m else None


def suite(mcp, cases, scratch):
    fixtures(scratch)
    failed = []
    if RUNTIME != "native":
        why = gvisor_unavailable(mcp)
        if why:
            print("SKIP escape suite on %s: %s" % (RUNTIME, why))
            return
    # ESCAPE_SKIP="name:why;name:why": cases a slow machine cannot time fairly
    # (the emulated guest); each is reported, never silently left out.
    skip = dict(s.split(":", 1) for s in
                os.environ.get("ESCAPE_SKIP", "").split(";") if ":" in s)
    for path in cases:
        name = os.path.basename(path)[:-3]
        if name in skip:
            print("SKIP %s: %s" % (name, skip[name]))
            continue
        h, p, wall = run_case(mcp, path)
        why = check(name, h, p, wall)
        print("%s %s (%.1fs)" % ("PASS" if why is None else "FAIL", name,
                                 wall))
        if RUNTIME != "native" and h.get(RUNTIME + "_contained") and \
                h.get(RUNTIME + "_expect"):
            print("    %s differs, contained: %s" % (
                RUNTIME, h[RUNTIME + "_contained"]))
        if why:
            print("    " + why)
            failed.append(name)
    why = two_at_once(mcp)
    print("%s two_sandboxes_at_once" % ("PASS" if why is None else "FAIL"))
    if why:
        print("    " + why)
        failed.append("two_sandboxes_at_once")
    if failed:
        print("escape cases failed: " + " ".join(failed))
        sys.exit(1)


TWO = r'''
import json, os, time
open("/workspace/mine-%d" % os.getpid(), "w").write("x")
time.sleep(4)
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps({"pids": pids, "files": sorted(os.listdir("/workspace"))}))
'''


def two_at_once(mcp):
    """Two sandboxes at the same time: each sees only its own processes
    and its own workspace, and they run as different host uids."""
    results = [None, None]

    def one(i):
        # Two Pyodides starting at once on a loaded host take a while.
        argv = [mcp, "run", "--rules", RULES, "--state-dir", STATE,
                "--timeout-ms", "30000", "--", PYTHON, "-I", "-c", TWO]
        with open(STDIN_FILE, "rb") as stdin:
            results[i] = subprocess.run(argv, capture_output=True,
                                        stdin=stdin, timeout=60,
                                        env=sentinel_env())

    ts = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    # While both run: two distinct host uids from the range, nothing else.
    # Sampled until both are seen at once or the runs end (a slow machine,
    # the emulated guest, takes a while to start a sandbox).
    # On gVisor each sandbox holds two leases: the sandbox's (sentry and
    # stubs) and its gofer's (docs/runtimes.md).
    want = 4 if RUNTIME == "gvisor" else 2
    uids = set()
    while len(uids) < want and any(t.is_alive() for t in ts):
        now = set()
        for st in glob.glob("/proc/[0-9]*/status"):
            try:
                zombie = False
                for line in open(st):
                    # An earlier case's exited process not yet reaped
                    # (gVisor's stubs are reparented as they die) runs
                    # nothing: only the living count.
                    if line.startswith("State:"):
                        zombie = line.split()[1] == "Z"
                    if line.startswith("Uid:"):
                        u = int(line.split()[1])
                        if 300000 <= u < 301000 and not zombie:
                            now.add(u)
            except OSError:
                pass
        if len(now) > len(uids):
            uids = now
        time.sleep(0.05)
    for t in ts:
        t.join()
    outs = []
    for p in results:
        if p.returncode != 0:
            return "mcp-exec failed: " + p.stderr.decode(errors="replace")
        if SENTINEL.encode() in p.stdout:
            return "the caller's environment or stdin leaked"
        r = json.loads(p.stdout)
        outs.append(json.loads(r["stdout"]))
    if len(uids) != want:
        return "expected %d distinct host uids while both ran, saw %s" % (
            want, uids)
    for o in outs:
        if len(o["files"]) != 1:
            return "a sandbox saw another's workspace: %s" % o["files"]
        if not set(o["pids"]) <= {1, 2}:
            return "a sandbox saw processes beyond its own: %s" % o["pids"]
    return None


if __name__ == "__main__":
    main()
