"""Forwards protocol requests to a BenchServer on a Unix socket.

    python3 -m ciq.relay SOCKET              a --bench-server: requests from
                                             stdin, answers to stdout
    python3 -m ciq.relay SOCKET WORDS...     one request (e.g. a --build:
                                             `build --controls=... --workdir=...`);
                                             prints the answer, exits with its status

This is how ciq.tune makes its own Python process the tuner's resident
server: the tuner starts this small relay (standard library only, no
import of your code) and the requests reach the process that called
ciq.tune. A socket that cannot be reached, or closes mid-answer, ends the
relay with status 2 and the reason on stderr; the tuner records it.
"""
import socket
import sys

from . import protocol


def _connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def _read_answer(reader):
    """(output lines, status) of one answer; ConnectionError if it ends early."""
    lines = []
    for line in reader:
        line = line.rstrip("\n")
        if line.startswith(protocol.STATUS_PREFIX):
            return lines, line[len(protocol.STATUS_PREFIX):]
        lines.append(line)
    raise ConnectionError("the ciq server closed the connection before answering")


def main(argv):
    if not argv:
        sys.stderr.write("usage: python3 -m ciq.relay SOCKET [WORDS...]\n")
        return 2
    try:
        conn = _connect(argv[0])
        reader = conn.makefile("r", encoding="utf-8", newline="\n")
        if len(argv) > 1:
            conn.sendall(protocol.encode_request(argv[1:]).encode())
            lines, status = _read_answer(reader)
            for line in lines:
                print(line)
            return int(status) if status.strip().lstrip("-").isdigit() else 1
        while True:
            words = protocol.read_request(sys.stdin)
            if words is None:
                return 0
            conn.sendall(protocol.encode_request(words).encode())
            lines, status = _read_answer(reader)
            sys.stdout.write("".join(line + "\n" for line in lines) + protocol.STATUS_PREFIX + status + "\n")
            sys.stdout.flush()
    except (OSError, ConnectionError, protocol.ProtocolError) as e:
        sys.stderr.write(f"ciq.relay: error: {e} (socket {argv[0]})\n")
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
