import my_ctypes_helper
from ctypeslib import x
ctype = 'text/csv'
