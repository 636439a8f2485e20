#!/usr/bin/env python3
"""A toolkit upgrade in a test: the real ptxas, reporting another release.

`--version` prints the real ptxas' answer with its release replaced by
$PTXAS_RELEASE (e.g. 13.2: "release 13.2, V13.2.0"), so that cache keys,
which hold the version text, change; everything else runs the real ptxas
($PTXAS_RELEASE_REAL) with the arguments unchanged.
"""
import os
import re
import subprocess
import sys

real = os.environ["PTXAS_RELEASE_REAL"]
release = os.environ.get("PTXAS_RELEASE", "13.2")
if "--version" in sys.argv[1:] or "-V" in sys.argv[1:]:
    text = subprocess.run([real, "--version"], capture_output=True, text=True, check=True).stdout
    sys.stdout.write(re.sub(r"release [0-9.]+, V[0-9.]+", f"release {release}, V{release}.0", text))
    sys.exit(0)
os.execv(real, [real] + sys.argv[1:])
