import os
import importlib
x = getattr(obj, 'name')
builtins_list = []
