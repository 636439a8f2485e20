#!/usr/bin/env python3
"""Runs a command from a directory with a hostile name, and records what a
stand-in benchmark receives: for tests of how the tuner quotes values.

  hostile_names.py run DIR -- CMD ...   makes DIR/<hostile>, runs CMD there
                                        with every @HOSTILE@ in it replaced
                                        by <hostile> (@Q@ by ', @QQ@ by ");
                                        exits with its status
  hostile_names.py print VALUE          writes VALUE to stdout, as it is
  hostile_names.py args LOG FILE ARG... appends the ARGs and FILE's content
                                        to LOG as one JSON list; prints f=1

<hostile> holds a space, single and double quotes, $(touch PWNED),
backticks and a newline: run through a shell unquoted, it creates a file
named PWNED (or pwned-bq) and splits into several words.
"""
import json
import os
import subprocess
import sys

HOSTILE = "a b 'sq' \"dq\" $(touch PWNED) `touch pwned-bq` nl\nend"

if sys.argv[1] == "run":
    where = os.path.join(sys.argv[2], HOSTILE)
    os.makedirs(where, exist_ok=True)
    command = [a.replace("@HOSTILE@", HOSTILE).replace("@QQ@", '"').replace("@Q@", "'") for a in sys.argv[4:]]
    sys.exit(subprocess.run(command, cwd=where).returncode)
elif sys.argv[1] == "print":
    sys.stdout.write(sys.argv[2])
else:
    log, path = sys.argv[2], sys.argv[3]
    with open(path) as f:
        content = f.read()
    with open(log, "a") as f:
        f.write(json.dumps(sys.argv[4:] + [content]) + "\n")
    print("f=1")
