import os


os.popen('id')
x = 1
open('/etc/shadow')
