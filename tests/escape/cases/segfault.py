# A crash in native code (ctypes.string_at(0) reads address 0): the
# command dies of SIGSEGV and that is what is reported -- exit code 139,
# not a timeout, not an OOM -- and the sandbox ends normally.
# expect: r["exit_code"] == 139
# expect: not r["timed_out"] and not r["oom_killed"]
# expect: "about to crash" in r["stdout"] and "SURVIVED" not in r["stdout"]
# expect: wall < 5
import ctypes, sys
print("about to crash", flush=True)
ctypes.string_at(0)
print("SURVIVED a read of address 0")
