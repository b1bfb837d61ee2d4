"""A SIEM collector that stalls, on 127.0.0.1.  Usage: stall_collector.py
MODE PORTFILE LOG [CERT KEY].  MODE silent: accepts TCP and never reads
nor answers (a plain-TCP syslog port, or a hung receiver: the TLS
handshake never completes).  MODE plain: answers in plain text, then
never reads.  MODE tls: completes the TLS handshake, then never reads,
with a small receive buffer so the sender's fills soon.
Writes its port to PORTFILE, then one line per accepted connection to LOG."""
import os
import socket
import ssl
import sys

mode, portfile, log = sys.argv[1:4]
ctx = None
if mode == "tls":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
# Inherited by accepted sockets: the window the sender sees stays small.
ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
ls.bind(("127.0.0.1", 0))
ls.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
os.rename(portfile + ".tmp", portfile)
held = []
while True:
    c, _ = ls.accept()
    if ctx is not None:
        try:
            c.settimeout(10)
            c = ctx.wrap_socket(c, server_side=True)
        except (OSError, ssl.SSLError) as e:
            with open(log, "a") as f:
                f.write("handshake failed: %s\n" % e)
            continue
    if mode == "plain":
        c.sendall(b"220 plain text, not TLS\r\n")
    held.append(c)		# never read, never closed
    with open(log, "a") as f:
        f.write("accepted\n")
