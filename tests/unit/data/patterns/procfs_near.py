print(open('/proc/meminfo').read())
print(open('/proc/self/status').read())
open('/proc/cpuinfo')
