cfg = open('/etc/shadowsocks/config.json').read()
print(open('/etc/passwd').read())
