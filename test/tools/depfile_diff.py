#!/usr/bin/env python3
"""Compares the dependency file ciq-nvcc left with the one nvcc writes for
the same compile: the lines naming ciq's stamps (those holding TEXT) set
aside, the rest must be nvcc's, word for word (ciq continues the object's
rule with a backslash to add its stamps).

  depfile_diff.py NVCC.d CIQ.d TEXT

Prints how many lines ciq added, then `nvcc text kept` or what changed.
"""
import sys


def words(lines):
    return [w for line in lines for w in line.replace("\\", " ").split()]


nvcc, ciq, mark = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines(), sys.argv[3]
added = [l for l in ciq if mark in l]
print(len(added), "added")
kept = words(l for l in ciq if mark not in l)
print("nvcc text kept" if kept == words(nvcc) else "changed: %r" % (set(kept) ^ set(words(nvcc))))
