import os, pty, sys
log = open('run.log', 'w')
os.dup2(log.fileno(), 1)
master, slave = pty.openpty()
subprocess.run(["/bin/sh", "-c", "true"])
