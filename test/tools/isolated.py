#!/usr/bin/env python3
"""Runs a test command in its own HOME, cache and temporary folders, and
fails it if it wrote into that HOME (issue 50; lit tests get the same from
test/lit/isolated_format.py, unit tests from test/unit/isolated_env.cpp).

    isolated.py DIR COMMAND...

DIR/HOME, DIR/XDG_CACHE_HOME (ciq's default cache is $XDG_CACHE_HOME/ciq)
and DIR/TMPDIR are made afresh and set in the command's environment. Exits
with the command's status, or 1 when it passed but left anything in HOME
(named on stderr). The folders stay for a post-mortem; the next run
replaces them."""
import os
import shutil
import subprocess
import sys

root, command = os.path.abspath(sys.argv[1]), sys.argv[2:]
shutil.rmtree(root, ignore_errors=True)
env = dict(os.environ)
for name in ("HOME", "XDG_CACHE_HOME", "TMPDIR"):
    env[name] = os.path.join(root, name)
    os.makedirs(env[name])
for name in ("TMP", "TEMP", "TEMPDIR"):
    env.pop(name, None)
status = subprocess.call(command, env=env)
left = [os.path.relpath(os.path.join(parent, name), env["HOME"])
        for parent, dirs, files in os.walk(env["HOME"]) for name in sorted(dirs + files)]
if left and status == 0:
    print("isolated.py: the test wrote into its HOME (%s), which must stay empty:\n  %s"
          % (env["HOME"], "\n  ".join(left[:20])), file=sys.stderr)
    status = 1
sys.exit(status)
