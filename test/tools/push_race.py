#!/usr/bin/env python3
"""Two pushers race for one Redis entry.

  push_race.py REDIS_DIR DELAY_MS SLOW_CMD... -- FAST_CMD...

A proxy in front of the server of REDIS_DIR (redis.py start) passes
requests on at once and holds each reply back DELAY_MS. SLOW_CMD runs
against the proxy ({url} in it is the proxy's URL); once it has sent its
first request, FAST_CMD runs against the server itself ({url}: the
server's). So FAST_CMD's writes land between what SLOW_CMD reads and what
it then writes. Prints both commands' output; exits 1 if either failed.
"""
import os
import socket
import subprocess
import sys
import threading
import time

redis_dir, delay = sys.argv[1], float(sys.argv[2]) / 1000
rest = sys.argv[3:]
split = rest.index("--")
slow_cmd, fast_cmd = rest[:split], rest[split + 1:]
port = int(open(os.path.join(redis_dir, "port")).read())
first_request = threading.Event()


def pump(src, dst, hold):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if hold:
                time.sleep(delay)
            else:
                first_request.set()
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)


def accept():
    while True:
        client, _ = listener.accept()
        upstream = socket.create_connection(("127.0.0.1", port))
        threading.Thread(target=pump, args=(client, upstream, False), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client, True), daemon=True).start()


threading.Thread(target=accept, daemon=True).start()
proxy_url = f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
server_url = f"redis://127.0.0.1:{port}/0"
slow = subprocess.Popen([a.replace("{url}", proxy_url) for a in slow_cmd], stdout=subprocess.PIPE, text=True)
first_request.wait(30)
time.sleep(0.05)
fast = subprocess.run([a.replace("{url}", server_url) for a in fast_cmd], stdout=subprocess.PIPE, text=True)
slow_out, _ = slow.communicate(timeout=60)
print("fast:", fast.stdout.strip())
print("slow:", slow_out.strip())
sys.exit(1 if slow.returncode or fast.returncode else 0)
