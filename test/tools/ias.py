#!/usr/bin/env python3
"""Runs a command with every argument of the form @@FILE replaced by the
content of FILE (lit's shell has no $(cat ...)); exits with its status."""
import subprocess
import sys

args = [open(a[2:]).read() if a.startswith("@@") else a for a in sys.argv[1:]]
sys.exit(subprocess.call(args))
