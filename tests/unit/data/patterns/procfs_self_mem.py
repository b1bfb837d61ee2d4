fd = open('/proc/self/mem', 'rb')
