#!/usr/bin/env python3
"""Token files for llm.c's train_gpt2cu without a download: its data format
(a header of 256 int32: magic 20240520, version 1, the token count; then the
tokens as uint16), filled with random GPT-2 token ids. Timing a training
step does not depend on what the tokens say.

  llmc_data.py DIR [TOKENS]   writes DIR/train.bin and DIR/val.bin
"""
import array
import os
import random
import sys

directory = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20
os.makedirs(directory, exist_ok=True)
rng = random.Random(1)
for name in ("train.bin", "val.bin"):
    header = array.array("i", [0] * 256)
    header[0], header[1], header[2] = 20240520, 1, count
    tokens = array.array("H", (rng.randrange(50257) for _ in range(count)))
    with open(os.path.join(directory, name), "wb") as f:
        header.tofile(f)
        tokens.tofile(f)
