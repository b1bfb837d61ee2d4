for c in ().__class__.__base__.__subclasses__():
    pass
f = getattr(__builtins__, 'eval')
