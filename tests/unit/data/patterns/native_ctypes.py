import ctypes
libc = ctypes.CDLL(None)
