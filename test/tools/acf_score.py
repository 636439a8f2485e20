#!/usr/bin/env python3
"""Scores a fake-ptxas output by the ACF copied into it: ACF-FAST 1, ACF-SLOW 3, none 2."""
import sys

text = open(sys.argv[1]).read()
print("score=" + ("1" if "ACF-FAST" in text else "3" if "ACF-SLOW" in text else "2"))
