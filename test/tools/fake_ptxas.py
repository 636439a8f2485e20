#!/usr/bin/env python3
"""A scripted stand-in for ptxas, for checking the arguments ciq passes.

Prints `fake-ptxas: <args>` to stderr (never stdout) and, given -o, writes
the same line to the output file. `--version` prints a ptxas-like version
(release from $FAKE_PTXAS_RELEASE, default 13.0). Behaviour switches:
  FAKE_PTXAS_NO_ACF=1        reject --apply-controls as an unknown option
  FAKE_PTXAS_FAIL_ON=TEXT    exit 255 when any argument contains TEXT
  FAKE_PTXAS_CRASH=1         die of SIGSEGV
  FAKE_PTXAS_EXIT=N          exit N after doing the work
  FAKE_PTXAS_COPY_INPUT=1    also append the input PTX to the output file
  FAKE_PTXAS_SLOW_VERSION=S  sleep S seconds before answering --version
  FAKE_PTXAS_ACF_INTO_OUTPUT=1  append the --apply-controls file's bytes to the output
  FAKE_PTXAS_REFUSE_ACF=TEXT exit 255 when the --apply-controls file contains TEXT
"""
import os
import signal
import sys

args = sys.argv[1:]
release = os.environ.get("FAKE_PTXAS_RELEASE", "13.0")

if "--apply-controls" in args and os.environ.get("FAKE_PTXAS_NO_ACF") == "1":
    sys.stderr.write("ptxas fatal   : Unknown option '-apply-controls'\n")
    sys.exit(255)
if "--version" in args or "-V" in args:
    import time
    time.sleep(float(os.environ.get("FAKE_PTXAS_SLOW_VERSION", "0")))
    sys.stdout.write("ptxas: NVIDIA (R) Ptx optimizing assembler (fake)\n"
                     f"Cuda compilation tools, release {release}, V{release}.1\n")
    sys.exit(0)
if os.environ.get("FAKE_PTXAS_CRASH") == "1":
    os.kill(os.getpid(), signal.SIGSEGV)

line = "fake-ptxas: " + " ".join(args)
sys.stderr.write(line + "\n")
fail_on = os.environ.get("FAKE_PTXAS_FAIL_ON")
if fail_on and any(fail_on in a for a in args):
    sys.stderr.write("ptxas fatal   : refused " + fail_on + "\n")
    sys.exit(255)

acf = args[args.index("--apply-controls") + 1] if "--apply-controls" in args[:-1] else None
acf_bytes = open(acf).read() if acf and os.path.exists(acf) else ""
refuse = os.environ.get("FAKE_PTXAS_REFUSE_ACF")
if refuse and refuse in acf_bytes:
    sys.stderr.write("ptxas fatal   : Advanced controls file not understood\n")
    sys.exit(255)

out = None
for i, a in enumerate(args):
    if a == "-o" and i + 1 < len(args):
        out = args[i + 1]
    elif a.startswith("--output-file="):
        out = a.split("=", 1)[1]
if out:
    with open(out, "w") as f:
        f.write(line + "\n")
        if os.environ.get("FAKE_PTXAS_ACF_INTO_OUTPUT") == "1":
            f.write(acf_bytes)
        if os.environ.get("FAKE_PTXAS_COPY_INPUT") == "1":
            inputs = [a for a in args if a.endswith(".ptx")]
            for path in inputs:
                with open(path) as p:
                    f.write(p.read())
sys.exit(int(os.environ.get("FAKE_PTXAS_EXIT", "0")))
