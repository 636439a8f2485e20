#!/usr/bin/env python3
"""Compares two host objects nvcc wrote: their device code (the .nv_fatbin
section) or their host code (.text).

  fatbin.py A.o B.o same|differ|same-host

Exits 1, saying why, when the objects do not compare as asked.
"""
import os
import subprocess
import sys
import tempfile


def section(obj, name):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "section")
        subprocess.run(["objcopy", "-O", "binary", "--only-section=" + name, obj, out], check=True)
        data = open(out, "rb").read()
    if not data:
        sys.exit(f"{obj} has no {name} section")
    return data


a, b, how = sys.argv[1:4]
name = ".text" if how == "same-host" else ".nv_fatbin"
equal = section(a, name) == section(b, name)
if equal != (how != "differ"):
    sys.exit(f"{name} of {a} and {b}: {'equal' if equal else 'different'}, expected {how}")
