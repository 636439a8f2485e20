"""The server side of ciq-tuner's --bench-server protocol, for the test
servers: requests() yields each request's id and words (a first line
`ciq-request: ID`, then the words one a line, an empty line ends a
request); status_line(ID, S) is the answer's last line, `ciq-status: ID S`.

A request without the id line (a tuner from before request ids) yields the
id None, and its status line is the old `ciq-status: S`: so a test of the
ids can be run against such a tuner and seen to fail for the right reason."""
import sys

PREFIX = "ciq-request: "


def requests(stream=sys.stdin):
    words = []
    for line in stream:
        line = line.rstrip("\n")
        if line:
            words.append(line)
            continue
        if words and words[0].startswith(PREFIX):
            yield words[0][len(PREFIX):], words[1:]
        else:
            yield None, words
        words = []


def status_line(request_id, status):
    return f"ciq-status: {status}" if request_id is None else f"ciq-status: {request_id} {status}"
