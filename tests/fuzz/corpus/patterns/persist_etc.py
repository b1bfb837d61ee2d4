with open('/etc/hosts', 'a') as f:
    f.write('1.2.3.4 x\n')
