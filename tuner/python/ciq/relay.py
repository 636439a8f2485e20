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
import select
import socket
import sys

from . import protocol


def _connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


class _Answers:
    """A server's answers, read from the socket as bytes (the C++ tuner reads
    them so too): lines up to a status line, and whatever the server wrote
    beyond it."""

    def __init__(self, conn):
        self.conn = conn
        self.pending = b""
        self.last_id = None

    def _line(self):
        while b"\n" not in self.pending:
            chunk = self.conn.recv(65536)
            if not chunk:
                raise ConnectionError("the ciq server closed the connection before answering")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode("utf-8", errors="surrogateescape")

    def read(self, request_id):
        """(output lines, status) of the answer to request `request_id`;
        ConnectionError if it ends early, ProtocolError for another
        request's, or for output after the answer (as the C++ tuner: an
        answer must be the server's only output)."""
        lines = []
        while True:
            line = self._line()
            if line.startswith(protocol.STATUS_PREFIX):
                status = protocol.read_status(line[len(protocol.STATUS_PREFIX):], request_id)
                break
            lines.append(line)
        self.last_id = request_id
        self.check_nothing_more()
        return lines, status

    def check_nothing_more(self):
        """ProtocolError when the server wrote anything after its last
        answer: asked right after an answer, and again before the next
        request is sent (output that came a little later)."""
        extra = len(self.pending)
        if not extra and select.select([self.conn], [], [], 0)[0]:
            self.conn.setblocking(False)
            try:
                extra = len(self.conn.recv(65536, socket.MSG_PEEK))
            except BlockingIOError:
                extra = 0
            finally:
                self.conn.setblocking(True)
        if extra and self.last_id is not None:
            raise protocol.ProtocolError(f"the server wrote more after its answer to request {self.last_id} "
                                         f"({extra} bytes or more)")


def main(argv):
    if not argv:
        sys.stderr.write("usage: python3 -m ciq.relay SOCKET [WORDS...]\n")
        return 2
    try:
        conn = _connect(argv[0])
        answers = _Answers(conn)
        if len(argv) > 1:
            conn.sendall(protocol.encode_request(argv[1:], 1).encode())
            lines, status = answers.read(1)
            for line in lines:
                print(line)
            return status
        while True:
            request = protocol.read_request(sys.stdin)
            if request is None:
                return 0
            request_id, words = request
            if request_id is None:
                sys.stdout.write(protocol.error_answer(protocol.NO_REQUEST_ID, None))
            else:
                answers.check_nothing_more()
                conn.sendall(protocol.encode_request(words, request_id).encode())
                sys.stdout.write(protocol.format_answer(*answers.read(request_id), request_id))
            sys.stdout.flush()
    except (OSError, ConnectionError, protocol.ProtocolError) as e:
        sys.stderr.write(f"ciq.relay: error: {e} (socket {argv[0]})\n")
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
