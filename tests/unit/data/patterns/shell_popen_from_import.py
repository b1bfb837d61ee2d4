from os import path, popen
print(popen('id').read())
