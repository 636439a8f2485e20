#!/usr/bin/env python3
"""A Redis that refuses AUTH the way a server with AUTH renamed away does:
"-ERR unknown command 'AUTH', with args beginning with: '<password>'",
quoting the password back. Runs a command against it.

  echo_redis.py PASSWORD -- CMD... ({url} in CMD becomes redis://:PASSWORD@127.0.0.1:PORT/0)

Exits with CMD's status.
"""
import socket
import subprocess
import sys
import threading

password = sys.argv[1]
cmd = sys.argv[sys.argv.index("--") + 1:]
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(8)
port = server.getsockname()[1]


def serve():
    while True:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(f"-ERR unknown command 'AUTH', with args beginning with: '{password}' \r\n".encode())
        conn.close()


threading.Thread(target=serve, daemon=True).start()
url = f"redis://:{password}@127.0.0.1:{port}/0"
sys.exit(subprocess.run([a.replace("{url}", url) for a in cmd]).returncode)
