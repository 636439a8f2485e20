#!/usr/bin/env python3
"""A torch.compile'd GPT-2 (Hugging Face transformers' GPT2LMHeadModel, random
weights: no download) trained for a few steps on random tokens: a Triton
program nobody here wrote, for bench/gpu/capture-replay.sh's `torch` step.

  gpt2_compile.py [--steps N] [--batch B] [--seq T]

Prints one line per step, `step K: M ms`, after a synchronise; the first
steps include compilation.
"""
import argparse
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--batch", type=int, default=8)
parser.add_argument("--seq", type=int, default=256)
args = parser.parse_args()

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config()).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
step = torch.compile(lambda x: model(x, labels=x).loss)
tokens = torch.randint(0, 50257, (args.batch, args.seq), device="cuda")
for k in range(args.steps):
    began = time.perf_counter()
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = step(tokens)
    loss.backward()
    optimizer.step()
    torch.cuda.synchronize()
    print(f"step {k}: {1000 * (time.perf_counter() - began):.2f} ms loss {loss.item():.4f}", flush=True)
