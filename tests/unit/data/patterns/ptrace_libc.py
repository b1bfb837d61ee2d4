import ctypes
libc = ctypes.CDLL('libc.so.6')
PTRACE_ATTACH = 16
libc.ptrace(PTRACE_ATTACH, 1, 0, 0)
