o = __import__('os')
getattr(o, 'system')('id')
