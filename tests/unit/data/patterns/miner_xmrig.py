import subprocess
subprocess.Popen(['./XMRig', '--donate-level', '1'])
