#!/usr/bin/env python3
"""A throwaway Redis for tests (loopback, free port, no persistence).

  redis.py start DIR [PASSWORD]   start redis-server (requiring PASSWORD if given);
                                  writes DIR/url and DIR/port
  redis.py hang DIR               a server that accepts and never answers (DIR/url)
  redis.py slow DIR MS            a server that answers every command after MS ms:
                                  +OK to AUTH and SELECT, a miss to GET (DIR/url
                                  has a password and database 3, so a client
                                  sends AUTH and SELECT first)
  redis.py run DIR -- CMD ...     run CMD with every '{url}' in it replaced
  redis.py get DIR KEY            print a value
  redis.py set DIR KEY FILE       set KEY to FILE's bytes
  redis.py keys DIR PATTERN       print matching keys, sorted
  redis.py dump DIR PATTERN       print matching keys, sorted, each followed by its value
  redis.py tamper DIR OLD NEW     in every ciq record, replace OLD by NEW
                                  (backslash escapes such as \\n allowed)
  redis.py stop DIR               stop whatever start/hang started

Every server is killed after 120 s: a failed test leaks nothing for long.
"""
import codecs
import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(d, name):
    with open(os.path.join(d, name)) as f:
        return f.read().strip()


def daemon(d, port, on_connection):
    """Forks a daemon (120 s at most) that listens on `port` and hands every
    connection to `on_connection`; waits until it wrote DIR/pid."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            with open(os.path.join(d, "pid"), "w") as f:
                f.write(str(os.getpid()))
            deadline = time.time() + 120
            listener.settimeout(1)
            while time.time() < deadline:
                try:
                    on_connection(listener.accept()[0])
                except OSError:
                    pass
        os._exit(0)
    os.wait()
    listener.close()
    for _ in range(100):
        if os.path.exists(os.path.join(d, "pid")):
            break
        time.sleep(0.02)


def hang(d, port):
    """A daemon that accepts connections and never answers."""
    held = []
    daemon(d, port, held.append)


def serve_slowly(conn, delay):
    """Answers RESP commands on `conn`, each after `delay` seconds."""
    f = conn.makefile("rb")
    try:
        while True:
            header = f.readline()
            if not header.startswith(b"*"):
                return
            args = []
            for _ in range(int(header[1:])):
                n = int(f.readline()[1:])
                args.append(f.read(n + 2)[:-2])
            time.sleep(delay)
            conn.sendall(b"$-1\r\n" if args and args[0].upper() == b"GET" else b"+OK\r\n")
    except (OSError, ValueError):
        return


def slow(d, port, delay):
    """A daemon that answers every command after `delay` seconds."""
    import threading
    daemon(d, port, lambda conn: threading.Thread(target=serve_slowly, args=(conn, delay), daemon=True).start())


def cli(d, *args):
    auth = ["-a", read(d, "password"), "--no-auth-warning"] if os.path.exists(os.path.join(d, "password")) else []
    return subprocess.run(["redis-cli", "-p", read(d, "port"), *auth, *args], check=True, capture_output=True).stdout


def main():
    cmd, d = sys.argv[1], sys.argv[2]
    if cmd in ("start", "hang", "slow"):
        os.makedirs(d, exist_ok=True)
        port = free_port()
        password = sys.argv[3] if cmd == "start" and len(sys.argv) > 3 else ""
        if password:
            with open(os.path.join(d, "password"), "w") as f:
                f.write(password)
        if cmd == "start":
            subprocess.run(["redis-server", "--daemonize", "yes", "--pidfile", os.path.join(d, "redis.pid"),
                            "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                            *(["--requirepass", password] if password else []),
                            "--appendonly", "no", "--dir", d, "--logfile", os.path.join(d, "redis.log")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=True)
        elif cmd == "slow":
            slow(d, port, float(sys.argv[3]) / 1000)
        else:
            hang(d, port)
        with open(os.path.join(d, "port"), "w") as f:
            f.write(str(port))
        with open(os.path.join(d, "url"), "w") as f:
            f.write(f"redis://:secret@127.0.0.1:{port}/3" if cmd == "slow" else
                    f"redis://:{password}@127.0.0.1:{port}/0" if password else f"redis://127.0.0.1:{port}/0")
        for _ in range(100):  # until it accepts connections
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        if cmd == "start":  # the daemon's pid, once it wrote it
            for _ in range(250):
                if os.path.exists(os.path.join(d, "redis.pid")) and os.path.getsize(os.path.join(d, "redis.pid")):
                    break
                time.sleep(0.02)
            with open(os.path.join(d, "redis.pid")) as f:
                pid = int(f.read())
            with open(os.path.join(d, "pid"), "w") as f:
                f.write(str(pid))
            # Never outlive the test run by long, even if `stop` never comes.
            subprocess.Popen(["sh", "-c", f"sleep 120; kill -9 {pid}"], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return 0
    if cmd == "stop":
        try:
            pid = int(read(d, "pid"))
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        return 0
    if cmd == "run":
        url = read(d, "url")
        argv = [a.replace("{url}", url) for a in sys.argv[4:]]
        return subprocess.run(argv).returncode
    if cmd == "get":
        sys.stdout.buffer.write(cli(d, "GET", sys.argv[3]))
        return 0
    if cmd == "set":
        with open(sys.argv[4], "rb") as f:
            subprocess.run(["redis-cli", "-p", read(d, "port"), "-x", "SET", sys.argv[3]], input=f.read(), check=True,
                           capture_output=True)
        return 0
    if cmd == "tamper":
        old, new = (codecs.decode(x, "unicode_escape") for x in sys.argv[3:5])
        for key in cli(d, "KEYS", "ciq:1:record:*").decode().split():
            value = cli(d, "GET", key).decode()[:-1]  # redis-cli adds a newline
            if old in value:
                subprocess.run(["redis-cli", "-p", read(d, "port"), "-x", "SET", key], input=value.replace(old, new).encode(),
                               check=True, capture_output=True)
        return 0
    if cmd == "dump":
        for key in sorted(cli(d, "KEYS", sys.argv[3]).decode().split()):
            print(key)
            print(cli(d, "GET", key).decode().rstrip("\n"))
        return 0
    if cmd == "keys":
        print("\n".join(sorted(cli(d, "KEYS", sys.argv[3]).decode().split())))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
