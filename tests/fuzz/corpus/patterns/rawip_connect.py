import socket
s = socket.socket()
s.connect(('198.51.100.2', 80))
