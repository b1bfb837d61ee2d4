import zlib, marshal
code = b'...'
eval(marshal.loads(zlib.decompress(code)))
