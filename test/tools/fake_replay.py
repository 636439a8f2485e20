#!/usr/bin/env python3
"""A stand-in for `ciq-replay serve` on a machine without a GPU.

  fake_replay.py serve --reference CUBIN [--compare MODE] CAPTURE... (LOG in $FAKE_REPLAY_LOG)
  fake_replay.py size CUBIN KERNEL     (the program's stand-in: prints the same time_ms)

Checks what ciq-tuner's `run --capture` hands a real ciq-replay: the
reference cubin exists, every CAPTURE holds launch.json. Then answers
requests (`--cubin FILE [--check]`) the way ciq-replay does: `time_ms: T`
where T is 100000 / the size of the kernel's code (.text.<kernel> in FILE),
a stand-in for its time that a control set changes; with --check, status 1
and "wrong answer" when the cubin's code for the kernel is empty. Appends
each request to $FAKE_REPLAY_LOG (`size` too, as "request size", when
set). With $FAKE_REPLAY_FAIL_AFTER=N, every timing (not --check) after the
log's first N fails (status 1, "launch failed"), in this process and any
started after it: a GPU that goes bad mid-run; with $FAKE_REPLAY_FAIL_COUNT=M
too, only the M timings after the first N fail (a passing fault).
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_requests import requests, status_line


def text_size(path, kernel):
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = sections[shstrndx]
    names = data[strtab[4]:strtab[4] + strtab[5]]
    for s in sections:
        name = names[s[0]:names.index(b"\0", s[0])].decode()
        if name == ".text." + kernel:
            return s[5]
    return 0


def stand_in_time(size):
    """Larger code "runs faster": the default (the smallest code here) loses
    to what most knobs make, so a search has winners to find."""
    return 100000.0 / size if size else 1e9


def timing_fails(log_path):
    """Whether this timing fails: more than $FAKE_REPLAY_FAIL_AFTER timings
    are in the log (this one included)."""
    limit = int(os.environ.get("FAKE_REPLAY_FAIL_AFTER", "-1"))
    if limit < 0:
        return False
    timed = sum(1 for line in open(log_path) if line.startswith("request ") and "--check" not in line)
    count = int(os.environ.get("FAKE_REPLAY_FAIL_COUNT", "-1"))
    return timed > limit and (count < 0 or timed <= limit + count)


def main():
    args = sys.argv[1:]
    if args[0] == "size":  # the program's stand-in: the same "time" from a cubin, as a process
        log_path = os.environ.get("FAKE_REPLAY_LOG")
        if log_path:
            with open(log_path, "a") as log:
                print("request size", file=log)
            if timing_fails(log_path):
                sys.exit("launch failed: an illegal memory access was encountered")
        print(f"time_ms: {stand_in_time(text_size(args[1], args[2])):.4f}")
        return
    assert args[0] == "serve", args
    reference = args[args.index("--reference") + 1]
    captures = [a for a in args[1:] if os.path.isdir(a)]
    assert os.path.isfile(reference), f"no reference cubin {reference}"
    kernel = json.load(open(os.path.join(captures[0], "launch.json")))["kernel"]
    log = open(os.environ["FAKE_REPLAY_LOG"], "a")
    print(f"start reference={os.path.basename(reference)} captures={len(captures)} kernel={kernel}", file=log, flush=True)
    for request_id, words in requests():
        cubin = words[words.index("--cubin") + 1]
        size = text_size(cubin, kernel)
        print(f"request {' '.join(w if '/' not in w else os.path.basename(w) for w in words)} text={size}", file=log, flush=True)
        if "--check" not in words and timing_fails(os.environ["FAKE_REPLAY_LOG"]):
            print("launch failed: an illegal memory access was encountered")
            status = 1
        elif "--check" in words:
            status = 0 if size else 1
            print("check: ok" if size else f"wrong answer: no code for {kernel}")
        else:
            print(f"time_ms: {stand_in_time(size):.4f}")
            status = 0
        print(status_line(request_id, status), flush=True)


main()
