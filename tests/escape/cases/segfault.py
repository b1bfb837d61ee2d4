# A crash in native code (ctypes.string_at(0) reads address 0): the
# command dies of SIGSEGV and that is what is reported -- exit code 139,
# not a timeout, not an OOM -- and the sandbox ends normally.
# expect: r["exit_code"] == 139
# expect: not r["timed_out"] and not r["oom_killed"]
# expect: "about to crash" in r["stdout"] and "SURVIVED" not in r["stdout"]
# expect: wall < 5
# wasm_expect: r["exit_code"] == 0 and "SURVIVED" in r["stdout"]
# wasm_contained: address 0 is the start of the wasm module's own linear memory: reading it reads the code's memory, never node's or the host's
import ctypes, sys
print("about to crash", flush=True)
ctypes.string_at(0)
print("SURVIVED a read of address 0")
