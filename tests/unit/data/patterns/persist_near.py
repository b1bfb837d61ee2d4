print(open('/etc/hosts').read())
rel = open('/etc/os-release', 'r').read()
keys = 'known_hosts'
