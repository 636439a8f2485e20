#!/usr/bin/env python3
"""Drives libciq-inject's control channel (CIQ_KERNEL_CONTROL) in a resident
stand-in program (ciq-test-inject-driver LIB serve) and prints what happened,
one line per step, for FileCheck.

  control_channel.py DRIVER LIB DIR

Starts two such programs on one FIFO (DIR/ctl): the first takes the channel,
the second must not. Sends `cut DIR/cutN` three times, each after a request
the program answers, and reports the file each cut wrote (its first line's
pid and status); then ends the programs (their stdin closed) and reports
their output and exit traces (DIR/exit*).
"""
import json
import os
import subprocess
import sys
import time

driver, lib, top = sys.argv[1:4]
fifo = os.path.join(top, "ctl")
os.mkfifo(fifo, 0o600)


def start(name):
    env = dict(os.environ, CIQ_KERNEL_TRACE=os.path.join(top, name), CIQ_KERNEL_CONTROL=fifo, CIQ_KERNEL_TRACE_VERBOSE="1")
    p = subprocess.Popen([driver, lib, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, text=True)
    assert p.stdout.readline() == "program: started\n"
    assert p.stdout.readline() == "program: working in serve mode\n"
    return p


def ask(p, text):
    p.stdin.write(text + "\n")
    p.stdin.flush()
    return p.stdout.readline().rstrip("\n")


def wait_for(directory, seconds=10):
    end = time.time() + seconds
    while time.time() < end:
        if os.path.isdir(directory):
            names = [n for n in os.listdir(directory) if n.startswith("kernels-")]
            if names:
                return names
        time.sleep(0.01)
    return []


first = start("exit1")
second = start("exit2")  # the channel is the first one's
for i in range(3):
    print(ask(first, f"request {i}"), "|", ask(second, f"request {i}"))
    w = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    os.write(w, f"cut {top}/cut{i}\n".encode())
    os.close(w)
    names = wait_for(f"{top}/cut{i}")
    for n in names:
        head = json.loads(open(f"{top}/cut{i}/{n}").readline())
        owner = "first" if head["pid"] == first.pid else "second" if head["pid"] == second.pid else "?"
        print(f"cut{i}: {len(names)} file from the {owner} program, status {head['status']}")
    if not names:
        print(f"cut{i}: nothing written")
for name, p in (("first", first), ("second", second)):
    out, err = p.communicate()
    print(f"{name}: exit {p.returncode}, stderr mentions the channel: "
          + ("listening" if "listening on" in err else "another's" if "another process'" in err else "no"))
for name in ("exit1", "exit2"):
    print(f"{name}: {len(wait_for(os.path.join(top, name), 2))} exit trace")
