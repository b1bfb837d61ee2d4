import os

os.system("ls -l /tmp")
