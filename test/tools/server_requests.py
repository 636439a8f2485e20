"""The request side of ciq-tuner's --bench-server protocol, for the test
servers: requests() yields each request's words (one a line on stdin, an
empty line ends a request)."""
import sys


def requests(stream=sys.stdin):
    words = []
    for line in stream:
        line = line.rstrip("\n")
        if line:
            words.append(line)
            continue
        yield words
        words = []
