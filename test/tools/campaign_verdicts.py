#!/usr/bin/env python3
"""Prints a campaign.json's outcome per kernel, one line each, without the
paths: kernel, state, verdict, baseline, best, shipped, controls (for
comparing two campaigns with diff)."""
import json
import sys

for k in json.load(open(sys.argv[1]))["kernels"]:
    print(k["kernel"], k["state"], repr(k["verdict"]), k["baseline"], k["best"], k["shipped"], k["controls"], sep=" | ")
