import subprocess
subprocess.run(["ls", "-l"], shell=False)
use_shell = True
