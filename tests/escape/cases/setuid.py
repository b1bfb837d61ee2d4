# Setuid-root binaries from the host's /usr (su, passwd): /usr is mounted
# nosuid and no_new_privs is set, so they start as the sandbox user.  The
# kernel's own word on it is the aux vector (LD_SHOW_AUXV is honoured only
# when the exec was not privileged): AT_EUID 65534, AT_SECURE 0.  su -c
# must fail and print no uid 0.
# expect: r["exit_code"] == 0 and "setuid checked" in r["stdout"]
# expect: "/usr/bin/su mode setuid" in r["stdout"]
# expect: "/usr nosuid: True" in r["stdout"] and "no_new_privs: 1" in r["stdout"]
# expect: "/usr/bin/su: AT_UID=65534 AT_EUID=65534 AT_SECURE=0" in r["stdout"]
# expect: "/usr/bin/passwd: AT_UID=65534 AT_EUID=65534 AT_SECURE=0" in r["stdout"] or "/usr/bin/passwd absent" in r["stdout"]
# expect: "ROOT" not in r["stdout"]
# expect: re.search(r"^su -c exit [1-9]", r["stdout"], re.M)
# gvisor_expect: r["exit_code"] == 0 and "setuid checked" in r["stdout"]
# gvisor_expect: "/usr/bin/su mode setuid" in r["stdout"] and "no_new_privs: 1" in r["stdout"]
# gvisor_expect: "/usr/bin/su: AT_UID=65534 AT_EUID=65534 AT_SECURE=0" in r["stdout"]
# gvisor_expect: "ROOT" not in r["stdout"] and re.search(r"^su -c exit [1-9]", r["stdout"], re.M)
# gvisor_contained: gVisor ignores the nosuid mount option, but no_new_privs holds (the setuid binary runs as 65534, AT_SECURE=0, su fails), and the sentry's root would still be no host uid
# wasm_expect: r["exit_code"] == 1 and 'unknown symbol "prctl"' in r["stderr"]
# wasm_contained: WebAssembly code makes no system call of its own: ctypes reaches only the symbols of Pyodide's wasm module, which has no prctl(); every host call is node's, under the native filter and walls
import ctypes, os, re, stat, subprocess

libc = ctypes.CDLL(None, use_errno=True)
print("no_new_privs:", libc.prctl(39, 0, 0, 0, 0))   # PR_GET_NO_NEW_PRIVS
print("/usr nosuid:", bool(os.statvfs("/usr").f_flag & os.ST_NOSUID))
for b in ("/usr/bin/su", "/usr/bin/passwd"):
    try:
        st = os.stat(b)
    except OSError:
        print(b, "absent")
        continue
    # The owner, host root, is unmapped here and shows as the overflow
    # uid (65534 too): only the mode bit can be checked.
    if st.st_mode & stat.S_ISUID:
        print(b, "mode setuid")
    else:
        print(b, "mode %o (not setuid: the probe proves less)" % st.st_mode)
    p = subprocess.run([b, "--help"], capture_output=True,
                       stdin=subprocess.DEVNULL,
                       env=dict(os.environ, LD_SHOW_AUXV="1"))
    aux = dict(re.findall(rb"^(AT_\w+):\s+(\S+)", p.stdout, re.M))
    if not aux:
        print("ROOT? %s ran as a privileged exec (no aux vector shown)" % b)
        continue
    print("%s: AT_UID=%s AT_EUID=%s AT_SECURE=%s" % (
        b, aux[b"AT_UID"].decode(), aux[b"AT_EUID"].decode(),
        aux[b"AT_SECURE"].decode()))
    if aux[b"AT_EUID"] == b"0":
        print("ROOT: %s started with euid 0" % b)

p = subprocess.run(["/usr/bin/su", "-c", "id -u", "root"], capture_output=True,
                   input=b"root\nroot\n", timeout=10)
print("su -c exit %d out %r err %r" % (p.returncode, p.stdout[:100],
                                       p.stderr[:200]))
if p.stdout.strip() == b"0":
    print("ROOT: su ran a command as uid 0")
print("setuid checked")
