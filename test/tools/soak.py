#!/usr/bin/env python3
"""The concurrency soak: many ciq-ptxas compiles at once (hits, misses, and
read-through from a team Redis when one is given) while writers put, rm,
import, export and gc the same cache, and a killer sends SIGKILL to random
wrappers and writers. Every compile that was not killed must succeed with
exactly one of the outputs it may have: the tuned cubin (maxrregcount=32)
or the plain one for the entry's PTX, the plain one for the others. At the
end `ciq-cache verify` must pass and an entry put afresh must still apply.

  soak.py --bin BIN --ptxas PTXAS --ptx FILE --work DIR [--seconds 20]
          [--wrappers 32] [--redis URL]

Prints one summary line; exits 1 on any wrong output, failed compile or a
cache that does not verify.
"""
import argparse
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("--bin", required=True)
p.add_argument("--ptxas", required=True)
p.add_argument("--ptx", required=True)
p.add_argument("--work", required=True)
p.add_argument("--seconds", type=float, default=20)
p.add_argument("--wrappers", type=int, default=32)
p.add_argument("--redis")
A = p.parse_args()
os.makedirs(A.work, exist_ok=True)
cache = os.path.join(A.work, "cache")
env = {k: v for k, v in os.environ.items() if not k.startswith("CIQ_")}
env.update(CIQ_CACHE_DIR=cache, CIQ_REAL_PTXAS=A.ptxas, CIQ_SPACES_DIR=os.environ.get("CIQ_SPACES_DIR", ""))
ciq_ptxas, ciq_cache = os.path.join(A.bin, "ciq-ptxas"), os.path.join(A.bin, "ciq-cache")

# The PTX files: the entry's (tuned), and four others that stay misses
# (their kernels renamed: an unchanged kernel would hit its kernel entry).
source = open(A.ptx).read()
kernels = re.findall(r"\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)", source)
ptx = {"hit": os.path.join(A.work, "hit.ptx")}
open(ptx["hit"], "w").write(source)
for i in range(4):
    text = source
    for k in kernels:
        text = re.sub(r"\b" + re.escape(k) + r"\b", f"{k}_miss{i}", text)
    ptx[f"miss{i}"] = os.path.join(A.work, f"miss{i}.ptx")
    open(ptx[f"miss{i}"], "w").write(text)


def compile_plain(path, extra=()):
    out = path + (".tuned" if extra else ".plain") + ".cubin"
    subprocess.run([A.ptxas, "-arch=sm_90a", *extra, path, "-o", out], check=True)
    return open(out, "rb").read()


allowed = {name: {compile_plain(path)} for name, path in ptx.items()}
tuned = compile_plain(ptx["hit"], ["--maxrregcount=32"])
allowed["hit"].add(tuned)
put = [ciq_cache, "put", "--ptx", ptx["hit"], "--arch", "sm_90a", "--set", "maxrregcount=32"]
subprocess.run(put, env=env, check=True, capture_output=True)
listed = subprocess.run([ciq_cache, "list", "--json"], env=env, check=True, capture_output=True, text=True).stdout
keys = [line.split('"key":"', 1)[1][:12] for line in listed.splitlines() if '"key":"' in line]
pack = os.path.join(A.work, "team.ciqpack")
subprocess.run([ciq_cache, "export", "-o", pack], env=env, check=True, capture_output=True)
if A.redis:
    subprocess.run([ciq_cache, "push", A.redis], env=env, check=True, capture_output=True)

deadline = time.time() + A.seconds
lock = threading.Lock()
running = set()  # Popen objects the killer may pick
stats = {"compiles": 0, "killed": 0, "writes": 0, "writer_kills": 0, "bad": [], "hits": 0, "remote_hits": 0}


def start(cmd, e):
    proc = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with lock:
        running.add(proc)
    return proc


def finish(proc):
    out, err = proc.communicate()
    with lock:
        running.discard(proc)
    return proc.returncode, out, err


def wrapper(n):
    rnd = random.Random(n)
    count = 0
    while time.time() < deadline:
        name = rnd.choice(["hit", "hit", "miss0", "miss1", "miss2", "miss3"])
        # A fresh output each time: a killed wrapper's ptxas child (a hit
        # runs ptxas as a child) may still write the old one.
        count += 1
        out = os.path.join(A.work, f"w{n}-{count}.cubin")
        if os.path.exists(out):
            os.remove(out)
        e = dict(env)
        if A.redis and rnd.random() < 0.3:  # a fresh local cache: read through from Redis
            e["CIQ_CACHE_DIR"] = os.path.join(A.work, f"fresh{n}")
            e["CIQ_REMOTE"] = A.redis
        rc, _, err = finish(start([ciq_ptxas, "-arch=sm_90a", ptx[name], "-o", out], e))
        with lock:
            if rc == -signal.SIGKILL:
                stats["killed"] += 1
                continue
            stats["compiles"] += 1
            data = open(out, "rb").read() if os.path.exists(out) else None
            if data == tuned:
                stats["remote_hits" if "CIQ_REMOTE" in e else "hits"] += 1
            if rc != 0 or data not in allowed[name]:
                stats["bad"].append(f"{name}: exit {rc}, {'no output' if data is None else 'unexpected bytes'}: {err[-300:]!r}")
        if os.path.exists(out):
            os.remove(out)


def writer(n):
    rnd = random.Random(1000 + n)
    ops = [put, [ciq_cache, "rm", *keys], [ciq_cache, "import", pack], [ciq_cache, "gc"],
           [ciq_cache, "export", "-o", os.path.join(A.work, f"out{n}.ciqpack")], [ciq_cache, "list"]]
    while time.time() < deadline:
        rc, _, _ = finish(start(rnd.choice(ops), env))
        with lock:
            stats["writes"] += 1
            if rc == -signal.SIGKILL:
                stats["writer_kills"] += 1
        time.sleep(rnd.random() * 0.05)


def killer():
    rnd = random.Random(99)
    while time.time() < deadline:
        time.sleep(rnd.random() * 0.3)
        with lock:
            victims = [p for p in running if p.poll() is None]
        if victims:
            try:
                rnd.choice(victims).send_signal(signal.SIGKILL)
            except OSError:
                pass


threads = [threading.Thread(target=wrapper, args=(i,)) for i in range(A.wrappers)]
threads += [threading.Thread(target=writer, args=(i,)) for i in range(3)]
threads.append(threading.Thread(target=killer))
for t in threads:
    t.start()
for t in threads:
    t.join()

verify = subprocess.run([ciq_cache, "verify"], env=env, capture_output=True, text=True)
subprocess.run(put, env=env, check=True, capture_output=True)
final = os.path.join(A.work, "final.cubin")
subprocess.run([ciq_ptxas, "-arch=sm_90a", ptx["hit"], "-o", final], env=env, check=True)
tuned_again = open(final, "rb").read() == tuned
print(f"soak: {A.seconds:g} s, {A.wrappers} wrappers{' (with Redis read-through)' if A.redis else ''}: "
      f"{stats['compiles']} compiles ({stats['hits']} local hits, {stats['remote_hits']} read through Redis), "
      f"{stats['killed']} wrappers killed, {stats['writes']} cache writes "
      f"({stats['writer_kills']} killed); bad outputs {len(stats['bad'])}; verify "
      f"{'ok' if verify.returncode == 0 else 'FAILED'}; entry applies after: {'yes' if tuned_again else 'NO'}")
for b in stats["bad"][:10]:
    print("  " + b)
if verify.returncode != 0:
    print(verify.stdout[-2000:] + verify.stderr[-2000:])
hits_seen = stats["hits"] > 0 and (stats["remote_hits"] > 0 or not A.redis)
if not hits_seen:
    print("  no hit was seen: the soak did not exercise the cache")
sys.exit(0 if not stats["bad"] and verify.returncode == 0 and tuned_again and hits_seen else 1)
