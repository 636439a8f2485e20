#!/usr/bin/env python3
"""The fault-injection matrix: ciq-ptxas and ciq-nvcc under every fault we
can make here (and `ciq-cache import-acfs` under hostile zips), each compared with the plain tool run the same way: exit
status, stdout, stderr and the output file's bytes must be identical, and a
shim in front of the real ptxas records every argv ciq-ptxas gave it, which
must be exactly the caller's (nothing from a damaged or hostile source may
reach ptxas). Prints the matrix and exits 1 unless every fault tried was
survived.

  fault_matrix.py --bin BUILD/bin --ptxas PTXAS --nvcc NVCC --inputs DIR --work DIR

A fault that cannot be made on this machine (a small tmpfs needs mount
rights) is listed as not tried, with the reason.
"""
import argparse
import hashlib
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import warnings

warnings.filterwarnings("ignore", "Duplicate name")  # the duplicate-names zip is on purpose


def args():
    p = argparse.ArgumentParser()
    for name in ("--bin", "--ptxas", "--nvcc", "--inputs", "--work"):
        p.add_argument(name, required=True)
    return p.parse_args()


A = args()
WORK = os.path.abspath(A.work)
PTX = os.path.join(A.inputs, "light.ptx")
CU = os.path.join(A.inputs, "light.cu")
A.bin = os.path.abspath(A.bin)
CIQ_PTXAS = os.path.join(A.bin, "ciq-ptxas")
CIQ_NVCC = os.path.join(A.bin, "ciq-nvcc")
CIQ_CACHE = os.path.join(A.bin, "ciq-cache")
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("CIQ_")}
BASE_ENV["CIQ_SPACES_DIR"] = os.environ.get("CIQ_SPACES_DIR", "")
results = []  # (tool, fault, status) status: "survived", "FAILED: why", "not tried: why"


def shim(name, body):
    """A stand-in for the real ptxas: logs its argv (one line, NUL-separated
    words) to $SHIM_LOG, then runs `body`."""
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nprintf '%s\\0' \"$@\" >> \"$SHIM_LOG\"; printf '\\n' >> \"$SHIM_LOG\"\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


REAL = SEGV = EXIT3 = None  # the shims, made in main()


def run(cmd, env, out, stdin=None, cwd=None, timeout=60):
    """(exit status, stdout, stderr, output bytes, seconds); a run that
    outlives `timeout` is killed and reads as exit status "hung"."""
    import time
    if os.path.exists(out):
        os.remove(out)
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, timeout=timeout, input=stdin, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return "hung", e.stdout, e.stderr, None, time.monotonic() - start
    data = open(out, "rb").read() if os.path.exists(out) else None
    return r.returncode, r.stdout, r.stderr, data, time.monotonic() - start


def ptxas_case(fault, env_extra, real, setup=None, expect_extra=(), argv=None, stdin=None, in_dir=False,
               same_argv=True, max_extra=None, after=None):
    """ciq-ptxas under `env_extra` against `real` run directly (given
    `expect_extra` too: what a fault that leaves the entry usable applies).
    `argv(d)` replaces the usual arguments, `stdin` is fed to both sides,
    `in_dir` runs both in the case's directory; `same_argv=False` when ciq
    may legitimately try ptxas with controls first (a failing entry);
    `max_extra`: seconds ciq may take beyond the plain tool; `after(d)`:
    a last check, returning what is wrong ("" when nothing)."""
    d = os.path.join(WORK, "ptxas-" + str(len(results)))
    os.makedirs(d, exist_ok=True)
    try:
        extra = setup(d) if setup else env_extra
    except Exception as e:  # the fault cannot be made here
        results.append(("ciq-ptxas", fault, f"not tried: {e}"))
        return
    args = argv(d) if argv else ["-arch=sm_90a", PTX, "-o", os.path.join(d, "out.cubin")]
    logs = {}
    got = {}
    try:
        for side, tool in (("plain", real), ("ciq", CIQ_PTXAS)):
            env = dict(BASE_ENV, SHIM_LOG=os.path.join(d, side + ".argv"), CIQ_REAL_PTXAS=real, **(extra or {}))
            if side == "plain":
                env = {k: v for k, v in env.items() if not k.startswith("CIQ_")}
                env["SHIM_LOG"] = os.path.join(d, "plain.argv")
            got[side] = run([tool] + args + (list(expect_extra) if side == "plain" else []), env,
                            os.path.join(d, "out.cubin"), stdin=stdin, cwd=d if in_dir else None)
            # ciq-ptxas identifies a ptxas it has not seen with one probe run
            # (--version): not a compile, so not compared.
            lines = open(env["SHIM_LOG"], "rb").read().split(b"\n") if os.path.exists(env["SHIM_LOG"]) else []
            logs[side] = b"\n".join(l for l in lines if b"\0--version\0" not in b"\0" + l)
    finally:
        release_holders()
    compare("ciq-ptxas", fault, got, logs if same_argv else None, max_extra, after(d) if after else "")


def compare(tool, fault, got, logs=None, max_extra=None, also=""):
    import re
    # ptxas -v reports its own compile time, which differs run to run.
    got = {side: (r[0], r[1], re.sub(rb"Compile time = [0-9.]+ ms", b"Compile time = T ms", r[2] or b""), *r[3:])
           for side, r in got.items()}
    plain, ciq = got["plain"], got["ciq"]
    why = []
    for i, what in enumerate(("exit status", "stdout", "stderr", "output bytes")):
        if plain[i] != ciq[i]:
            why.append(f"{what} differs ({plain[i]!r:.60} vs {ciq[i]!r:.60})" if i == 0 else f"{what} differs")
    if logs is not None and logs["plain"] != logs["ciq"]:
        why.append(f"ptxas got other arguments: {logs['ciq']!r:.200}")
    if max_extra is not None and ciq[4] > plain[4] + max_extra:
        why.append(f"took {ciq[4]:.2f} s against the plain tool's {plain[4]:.2f} s (allowed: +{max_extra} s)")
    if also:
        why.append(also)
    results.append((tool, fault, "survived" if not why else "FAILED: " + "; ".join(why)))


HOLDERS = []  # processes holding a cache's locks for one case


def release_holders():
    for p in HOLDERS:
        p.kill()
        p.wait()
    HOLDERS.clear()


def hold_writer(cache):
    """Holds `cache`'s LMDB write transaction open as a stopped writer would
    (mdb_load -T begins one and then waits for input that never comes),
    with ciq's own writer lock taken too, as a stopped ciq-cache holds it."""
    import time
    db = os.path.join(cache, "db")
    locker = subprocess.Popen([sys.executable, "-c",
                               "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
                               "print('locked', flush=True); time.sleep(600)", os.path.join(db, "writer.lock")],
                              stdout=subprocess.PIPE, text=True)
    HOLDERS.append(locker)
    assert locker.stdout.readline().strip() == "locked"
    loader = subprocess.Popen(["mdb_load", "-T", "-s", "records", db], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    HOLDERS.append(loader)
    time.sleep(0.3)  # in its transaction by now
    if loader.poll() is not None:
        raise RuntimeError("mdb_load could not hold the write transaction")


def missing_ptxas():
    """The real ptxas missing: ciq-ptxas must fail as a shell would (127),
    saying what is missing."""
    d = os.path.join(WORK, "missing-ptxas")
    os.makedirs(d, exist_ok=True)
    missing = os.path.join(d, "no", "ptxas")
    shell = subprocess.run(["/bin/sh", "-c", missing + " -arch=sm_90a x.ptx"], capture_output=True)
    r = subprocess.run([CIQ_PTXAS, "-arch=sm_90a", PTX, "-o", os.path.join(d, "out.cubin")],
                       env=dict(BASE_ENV, CIQ_REAL_PTXAS=missing, CIQ_CACHE_DIR=os.path.join(d, "cache")), capture_output=True)
    ok = r.returncode == shell.returncode == 127 and missing.encode() in r.stderr
    results.append(("ciq-ptxas", "the real ptxas missing", "survived" if ok else
                    f"FAILED: exit {r.returncode} (a shell: {shell.returncode}), said {r.stderr[-200:]!r}"))


def lock_garbage(d):
    cache = cache_with_entry(d)
    overwrite(os.path.join(cache, "db", "lock.mdb"), lambda f, n: f.write(random.Random(7).randbytes(n)))
    return {"CIQ_CACHE_DIR": cache}


def cache_with_entry(d):
    cache = os.path.join(d, "cache")
    env = dict(BASE_ENV, CIQ_CACHE_DIR=cache, CIQ_REAL_PTXAS=A.ptxas)
    subprocess.run([CIQ_CACHE, "put", "--ptx", PTX, "--arch", "sm_90a", "--set", "maxrregcount=32"], env=env, check=True,
                   capture_output=True)
    return cache


def overwrite(path, data_fn):
    n = os.path.getsize(path)
    with open(path, "r+b") as f:
        data_fn(f, n)


def damaged_cache(kind):
    def setup(d):
        cache = cache_with_entry(d)
        db = os.path.join(cache, "db", "data.mdb")
        rnd = random.Random(7)
        if kind == "random":
            overwrite(db, lambda f, n: f.write(rnd.randbytes(n)))
        elif kind == "pages":
            overwrite(db, lambda f, n: (f.seek(8192), f.write(rnd.randbytes(n - 8192))))
        elif kind == "truncated":
            os.truncate(db, 4096)
        elif kind == "empty":
            os.truncate(db, 0)
        elif kind == "directory":
            os.remove(db)
            os.mkdir(db)
        return {"CIQ_CACHE_DIR": cache}
    return setup


def controls(content):
    def setup(d):
        path = os.path.join(d, "controls")
        if content is None:
            return {"CIQ_CONTROLS": path, "CIQ_CACHE_DIR": os.path.join(d, "empty")}
        if content == "dir":
            os.mkdir(path)
        elif content == "fifo":
            os.mkfifo(path, 0o600)
        elif content == "zero":
            os.symlink("/dev/zero", path)
        else:
            open(path, "wb").write(content)
        return {"CIQ_CONTROLS": path, "CIQ_CACHE_DIR": os.path.join(d, "empty")}
    return setup


def log_file(kind):
    """CIQ_LOG_FILE where a log cannot (or must not) go: the compile is the
    plain tool's, and never waits for a FIFO's reader."""
    def setup(d):
        path = os.path.join(d, "log")
        if kind in ("fifo", "stalled"):
            os.mkfifo(path, 0o600)
            if kind == "stalled":  # a reader that opens it and never reads
                reader = subprocess.Popen([sys.executable, "-c", "import os, sys, time; os.open(sys.argv[1], os.O_RDONLY | "
                                           "os.O_NONBLOCK); print('open', flush=True); time.sleep(600)", path],
                                          stdout=subprocess.PIPE, text=True)
                HOLDERS.append(reader)
                assert reader.stdout.readline().strip() == "open"
        else:
            other = os.path.join(d, "not-yours")
            open(other, "w").write("someone else's\n")
            os.symlink(other, path)
            if os.geteuid() == 0:  # as root, both are another user's, as an attacker leaves them
                os.chown(other, 65534, 65534)
                os.lchown(path, 65534, 65534)
        return {"CIQ_LOG_FILE": path, "CIQ_CACHE_DIR": os.path.join(d, "empty")}
    return setup


def pack(kind):
    def setup(d):
        cache = cache_with_entry(d)
        path = os.path.join(d, "team.ciqpack")
        subprocess.run([CIQ_CACHE, "export", "-o", path], env=dict(BASE_ENV, CIQ_CACHE_DIR=cache), check=True, capture_output=True)
        text = open(path, "rb").read()
        if kind == "truncated":
            text = text[: len(text) // 2]
        elif kind == "random":
            text = random.Random(3).randbytes(len(text))
        elif kind == "checksum":
            text = text.replace(b"maxrregcount = 32", b"maxrregcount = 64")
        elif kind == "hostile":  # a knob no space allows, with a checksum that matches
            head, body = text.split(b"\n\n", 1)
            body = body.replace(b"maxrregcount = 32", b"output-file = /tmp/x")
            head = b"\n".join(b"checksum = sha256:" + hashlib.sha256(body).hexdigest().encode() if l.startswith(b"checksum")
                              else l for l in head.split(b"\n"))
            text = head + b"\n\n" + body
        open(path, "wb").write(text)
        return {"CIQ_PACKS": path, "CIQ_CACHE_DIR": os.path.join(d, "empty")}
    return setup


def server(reply, drip=0.0):
    """A loopback server that reads a request and answers `reply` (None:
    never answers; with `drip`, one byte every `drip` seconds); returns its
    redis:// URL."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)

    def serve():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            try:
                c.recv(65536)
                if reply is not None and drip:
                    threading.Thread(target=drip_out, args=(c, reply, drip), daemon=True).start()
                    continue
                if reply is not None:
                    c.sendall(reply)
            except OSError:
                pass
            threading.Timer(5, c.close).start()
    threading.Thread(target=serve, daemon=True).start()
    return f"redis://127.0.0.1:{s.getsockname()[1]}/0"


def drip_out(c, reply, delay):
    import time
    try:
        for b in reply:
            c.sendall(bytes([b]))
            time.sleep(delay)
    except OSError:
        pass


def bulk(value):
    return b"$" + str(len(value)).encode() + b"\r\n" + value + b"\r\n"


def remote(url_fn):
    def setup(d):
        return {"CIQ_REMOTE": url_fn(), "CIQ_CACHE_DIR": os.path.join(d, "empty")}
    return setup


def tmpfs(options, fill):
    def setup(d):
        mnt = os.path.join(d, "mnt")
        os.makedirs(mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("cannot mount a tmpfs here (" + r.stderr.strip()[:80] + ")")
        MOUNTS.append(mnt)
        cache = os.path.join(mnt, "cache")
        if fill:
            os.makedirs(cache)
            try:
                with open(os.path.join(mnt, "filler"), "wb") as f:
                    while True:
                        f.write(b"\0" * 4096)
                        f.flush()
            except OSError:  # ENOSPC: full, as wanted
                pass
        if options:
            subprocess.run(["mount", "-o", "remount," + options, mnt], check=True)
        return {"CIQ_CACHE_DIR": cache}
    return setup


MOUNTS = []
REDIS = []  # directories of the real redis-servers started, stopped at the end


def full_cache_remote_hit(d):
    """A remote hit (a real redis-server holding the entry) whose read-through
    copy cannot be written: the local cache is on a full file system. The
    entry must still apply, as the plain tool given its option."""
    url = real_redis_with_entry(d)
    return dict(tmpfs("", True)(d), CIQ_REMOTE=url)


def damaged_acf_entry(d):
    """An entry whose ACF blob ptxas cannot read (ptxas fails with it, so the
    wrapper reruns it plain and quarantines the entry) while a stopped
    writer holds the cache."""
    cache = os.path.join(d, "cache")
    acf = os.path.join(d, "damaged.acf")
    open(acf, "wb").write(random.Random(5).randbytes(4096))
    env = dict(BASE_ENV, CIQ_CACHE_DIR=cache, CIQ_REAL_PTXAS=A.ptxas)
    subprocess.run([CIQ_CACHE, "put", "--ptx", PTX, "--arch", "sm_90a", "--acf", acf], env=env, check=True,
                   capture_output=True)
    hold_writer(cache)
    return {"CIQ_CACHE_DIR": cache}


def replaced_data_file(kind):
    def setup(d):
        cache = cache_with_entry(d)
        db = os.path.join(cache, "db", "data.mdb")
        os.remove(db)
        if kind == "zero":
            os.symlink("/dev/zero", db)
        else:
            os.mkfifo(db)
        return {"CIQ_CACHE_DIR": cache}
    return setup


def huge_counters(d):
    cache = cache_with_entry(d)
    with open(os.path.join(cache, "stats"), "a") as f:
        f.truncate(1 << 30)  # sparse
    return {"CIQ_CACHE_DIR": cache}


def remote_hit_writer_stopped(d):
    """A remote hit (a real redis-server) while a stopped writer holds the
    local cache: the read-through copy cannot be made; the hit must apply."""
    url = real_redis_with_entry(d)
    local = os.path.join(d, "local")
    subprocess.run([CIQ_CACHE, "put", "--ptx", PTX, "--arch", "sm_90a", "--flags=-O2", "--set", "maxrregcount=40"],
                   env=dict(BASE_ENV, CIQ_CACHE_DIR=local, CIQ_REAL_PTXAS=A.ptxas), check=True, capture_output=True)
    hold_writer(local)
    return {"CIQ_CACHE_DIR": local, "CIQ_REMOTE": url}


def real_redis_with_entry(d):
    if not shutil.which("redis-server"):
        raise RuntimeError("no redis-server here")
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "redis.py")
    rd = os.path.join(d, "redis")
    subprocess.run([sys.executable, tool, "start", rd], check=True, capture_output=True)
    REDIS.append((tool, rd))
    url = open(os.path.join(rd, "url")).read().strip()
    subprocess.run([CIQ_CACHE, "push", url], env=dict(BASE_ENV, CIQ_CACHE_DIR=cache_with_entry(d)), check=True,
                   capture_output=True)
    return url


def record(fields, controls):
    return bulk(b"format = ciq-record/1\nkind = module\n" + fields + b"[controls]\nformat = ciq-controls/1\n"
                b"space = ptxas-13\n" + controls)


ON_TARGET = b"target = sm_90a\nptxas = 13.0.88\n"


def big_pack(d):
    """A pack of 64 MiB (four 12 MiB ACF blobs beside the entry): too big to
    index inside a compile."""
    cache = cache_with_entry(d)
    path = os.path.join(d, "big.ciqpack")
    subprocess.run([CIQ_CACHE, "export", "-o", path], env=dict(BASE_ENV, CIQ_CACHE_DIR=cache), check=True,
                   capture_output=True)
    text = open(path, "rb").read().decode()
    head, body = text.split("\n\n", 1)
    body = body[: -len("--- end\n")]
    import base64
    rnd = random.Random(11)
    for _ in range(4):
        blob = rnd.randbytes(12 << 20)
        enc = base64.b64encode(blob).decode()
        body += f"--- blob {hashlib.sha256(blob).hexdigest()} {len(blob)}\n" + \
            "".join(enc[i:i + 76] + "\n" for i in range(0, len(enc), 76))
    body += "--- end\n"
    head = "\n".join("blobs = 4" if l.startswith("blobs") else
                     "checksum = sha256:" + hashlib.sha256(body.encode()).hexdigest() if l.startswith("checksum")
                     else l for l in head.split("\n"))
    open(path, "w").write(head + "\n\n" + body)
    return {"CIQ_PACKS": path, "CIQ_CACHE_DIR": os.path.join(d, "cache2")}


def pack_indexed_once(d):
    """After a compile met the big pack: within 60 s one index of it exists
    and no half-built index is left behind."""
    import glob
    import time
    packs = os.path.join(d, "cache2", "packs")
    for _ in range(600):
        built = [p for p in glob.glob(os.path.join(packs, "*")) if ".building." not in p and os.path.isdir(p)]
        if built and not glob.glob(os.path.join(packs, "*.building.*")):
            return ""
        time.sleep(0.1)
    return f"the pack's index was not finished, or was left half-built: {sorted(os.listdir(packs)) if os.path.isdir(packs) else 'no packs dir'}"


def stdin_case(fault, argv, stdin, cwd_file=None):
    def setup(d):
        if cwd_file:
            open(os.path.join(d, "-"), "wb").write(cwd_file)
        return {"CIQ_CACHE_DIR": cache_with_entry(d)}
    ptxas_case(fault, None, REAL, setup, argv=argv, stdin=stdin, in_dir=cwd_file is not None)


def loop_case(tool, fault, make):
    """A loop back into a ciq wrapper must end at once with exit status 127
    and say it is a loop, not exec for ever."""
    import time
    d = os.path.join(WORK, "loop-" + str(len(results)))
    os.makedirs(d)
    cmd, env = make(d)
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, timeout=20)
        rc, err = r.returncode, r.stderr
    except subprocess.TimeoutExpired:
        rc, err = "hung", b""
    took = time.monotonic() - start
    ok = rc == 127 and b"loop" in err.lower() and took < 5
    results.append((tool, fault, "survived" if ok else f"FAILED: exit {rc} after {took:.1f} s, said {err[-160:]!r}"))


def wrapper_named(d, sub, wrapper, name, copy):
    os.makedirs(os.path.join(d, sub))
    path = os.path.join(d, sub, name)
    if copy:
        shutil.copy(wrapper, path)
    else:
        os.symlink(wrapper, path)
    return os.path.join(d, sub)


def two_ptxas_on_path(d):
    path = wrapper_named(d, "a", CIQ_PTXAS, "ptxas", False) + ":" + wrapper_named(d, "b", CIQ_PTXAS, "ptxas", True)
    env = dict(BASE_ENV, PATH=path + ":" + os.path.dirname(A.ptxas) + ":" + os.environ["PATH"],
               CIQ_CACHE_DIR=os.path.join(d, "cache"))
    return [os.path.join(d, "a", "ptxas"), "-arch=sm_90a", PTX, "-o", os.path.join(d, "out.cubin")], env


def real_ptxas_script_loops(d):
    script = os.path.join(d, "ptxas")
    open(script, "w").write(f'#!/bin/sh\nexec {CIQ_PTXAS} "$@"\n')
    os.chmod(script, 0o755)
    env = dict(BASE_ENV, CIQ_REAL_PTXAS=script, CIQ_CACHE_DIR=os.path.join(d, "cache"))
    return [CIQ_PTXAS, "-arch=sm_90a", PTX, "-o", os.path.join(d, "out.cubin")], env


def two_nvcc_on_path(d):
    env = {k: v for k, v in BASE_ENV.items() if k != "CIQ_REAL_NVCC"}
    path = wrapper_named(d, "a", CIQ_NVCC, "nvcc", False) + ":" + wrapper_named(d, "b", CIQ_NVCC, "nvcc", True)
    env = dict(env, PATH=path + ":" + os.path.dirname(A.nvcc) + ":" + os.environ["PATH"],
               CIQ_CACHE_DIR=os.path.join(d, "cache"))
    return [os.path.join(d, "a", "nvcc"), "-arch=sm_90a", "-cubin", CU, "-o", os.path.join(d, "out.cubin")], env


def zip_case(fault, make, refused):
    """`ciq-cache import-acfs` of a hostile zip into a fresh cache: it must end
    without a signal, write nothing outside the cache, and (when `refused`)
    refuse the zip and store no candidate set."""
    import zipfile
    d = os.path.join(WORK, "zip-" + str(len(results)))
    os.makedirs(d)
    path = os.path.join(d, "hostile.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        make(z)
    patch = getattr(make, "patch", None)
    if patch:
        patch(path)
    outside = os.path.join(WORK, "outside")
    os.makedirs(outside, exist_ok=True)
    before = set(os.listdir(outside)) | set(os.listdir("/tmp"))
    cache = os.path.join(outside, "cache")
    r = subprocess.run([CIQ_CACHE, "import-acfs", path, "--name", "set"], env=dict(BASE_ENV, CIQ_CACHE_DIR=cache),
                       capture_output=True, timeout=60, cwd=os.path.join(outside))
    after = (set(os.listdir(outside)) | set(os.listdir("/tmp"))) - {"cache"}
    why = []
    if r.returncode < 0:
        why.append(f"killed by signal {-r.returncode}")
    new = {n for n in after - before if n.startswith("ciq-evil") or n == "evil.acf"}
    if new:
        why.append(f"wrote outside the cache: {sorted(new)}")
    stored = os.path.exists(os.path.join(cache, "acf-candidates", "set.list"))
    if refused and (r.returncode == 0 or stored):
        why.append("not refused")
    shutil.rmtree(cache, ignore_errors=True)
    results.append(("ciq-cache", "import-acfs: " + fault, "survived" if not why else "FAILED: " + "; ".join(why)))


def lying_sizes(path):
    """Patches every declared uncompressed size to 100 bytes (the data
    inflates to far more)."""
    data = bytearray(open(path, "rb").read())
    for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.find(sig)
        while at >= 0:
            data[at + offset:at + offset + 4] = (100).to_bytes(4, "little")
            at = data.find(sig, at + 4)
    open(path, "wb").write(bytes(data))


def nvcc_case(fault, setup, max_extra=None):
    d = os.path.join(WORK, "nvcc-" + str(len(results)))
    os.makedirs(d, exist_ok=True)
    extra = setup(d)
    got = {}
    try:
        for side, tool in (("plain", A.nvcc), ("ciq", CIQ_NVCC)):
            env = dict(BASE_ENV, CIQ_REAL_NVCC=A.nvcc, **extra) if side == "ciq" else \
                {k: v for k, v in BASE_ENV.items() if not k.startswith("CIQ_")}
            # -cubin: nvcc -c writes objects that differ from run to run.
            got[side] = run([tool, "-arch=sm_90a", "-cubin", CU, "-o", os.path.join(d, "out.cubin")], env,
                            os.path.join(d, "out.cubin"))
    finally:
        release_holders()
    compare("ciq-nvcc", fault, got, max_extra=max_extra)


def unmount_under(root):
    """Unmounts the tmpfs a crashed earlier run left under `root`."""
    with open("/proc/mounts") as f:
        for line in f:
            point = line.split()[1]
            if point.startswith(root + "/"):
                subprocess.run(["umount", point], capture_output=True)


def main():
    try:
        run_matrix()
    finally:
        for m in MOUNTS:
            subprocess.run(["umount", m], capture_output=True)


def run_matrix():
    unmount_under(WORK)
    if os.path.exists(WORK):
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    globals()["REAL"] = shim("ptxas-shim", f'exec {A.ptxas} "$@"')
    globals()["SEGV"] = shim("ptxas-segv", "kill -SEGV $$")
    globals()["EXIT3"] = shim("ptxas-exit3", f'{A.ptxas} "$@"; exit 3')
    afile = os.path.join(WORK, "afile")
    open(afile, "w").close()
    cases = [
        ("cache directory missing", None, lambda d: {"CIQ_CACHE_DIR": os.path.join(d, "no", "such")}),
        ("cache directory is a file", None, lambda d: {"CIQ_CACHE_DIR": afile}),
        ("cache directory unwritable (under /proc)", None, lambda d: {"CIQ_CACHE_DIR": "/proc/ciq-cache"}),
        ("data.mdb random bytes", None, damaged_cache("random")),
        ("data.mdb data pages garbage", None, damaged_cache("pages")),
        ("data.mdb truncated to 4 KiB", None, damaged_cache("truncated")),
        ("data.mdb empty", None, damaged_cache("empty")),
        ("data.mdb is a directory", None, damaged_cache("directory")),
        ("disk full (256 KiB tmpfs, filled)", None, tmpfs("", True)),
        ("read-only file system", None, tmpfs("ro", False)),
        ("CIQ_TRACE is a file", None, lambda d: {"CIQ_TRACE": afile, "CIQ_CACHE_DIR": os.path.join(d, "empty")}),
        ("CIQ_TRACE under /proc", None, lambda d: {"CIQ_TRACE": "/proc/ciq-trace", "CIQ_CACHE_DIR": os.path.join(d, "e")}),
        ("CIQ_CONTROLS garbage text", None, controls(b"this is = not\n[a control set\n")),
        ("CIQ_CONTROLS 8 MiB of random bytes", None, controls(random.Random(1).randbytes(8 << 20))),
        ("CIQ_CONTROLS binary (NULs)", None, controls(b"format = ciq-controls/1\0\0\0space = ptxas-13\n")),
        ("CIQ_CONTROLS missing", None, controls(None)),
        ("CIQ_CONTROLS is a directory", None, controls("dir")),
        ("CIQ_CONTROLS is a FIFO nobody writes", None, controls("fifo")),
        ("CIQ_CONTROLS is a link to /dev/zero", None, controls("zero")),
        ("CIQ_LOG_FILE is a FIFO nobody reads", None, log_file("fifo")),
        ("CIQ_LOG_FILE is a FIFO read by nobody after it opens", None, log_file("stalled")),
        ("CIQ_LOG_FILE is a link to a file of another user", None, log_file("foreign")),
        ("CIQ_CONTROLS unknown knob", None, controls(b"format = ciq-controls/1\nspace = ptxas-13\noutput-file = /tmp/x\n")),
        ("CIQ_CONTROLS value out of range", None, controls(b"format = ciq-controls/1\nspace = ptxas-13\nmaxrregcount = 100000\n")),
        ("CIQ_CONTROLS unknown space", None, controls(b"format = ciq-controls/1\nspace = ptxas-99\nmaxrregcount = 64\n")),
        ("pack truncated", None, pack("truncated")),
        ("pack random bytes", None, pack("random")),
        ("pack checksum mismatch", None, pack("checksum")),
        ("pack with a hostile knob (valid checksum)", None, pack("hostile")),
        ("Redis: nothing listening", None, remote(lambda: "redis://127.0.0.1:1/0")),
        ("Redis: never answers", None, remote(lambda: server(None))),
        ("Redis: garbage reply", None, remote(lambda: server(b"!!garbage\r\n"))),
        ("Redis: announces 1 GB", None, remote(lambda: server(b"$999999999\r\nabc"))),
        ("Redis: error reply", None, remote(lambda: server(b"-ERR no\r\n"))),
        ("Redis: drips a reply, a byte per 50 ms", None, remote(lambda: server(bulk(b"x" * 200), drip=0.05))),
        ("Redis: hostile record", None, remote(lambda: server(bulk(
            b"format = ciq-record/1\nkind = module\ntarget = sm_90a\nptxas = 13.0.88\n[controls]\n"
            b"format = ciq-controls/1\nspace = ptxas-13\noutput-file = /tmp/x\n")))),
        ("ptxas killed by SIGSEGV", SEGV, lambda d: {"CIQ_CACHE_DIR": os.path.join(d, "empty")}),
        ("ptxas exits 3", EXIT3, lambda d: {"CIQ_CACHE_DIR": os.path.join(d, "empty")}),
    ]
    for fault, real, setup in cases:
        ptxas_case(fault, None, real or REAL, setup)
    # LMDB rebuilds a lock file no process holds: the entry still applies,
    # exactly as the plain tool given the entry's option.
    ptxas_case("lock.mdb random bytes (the entry still applies)", None, REAL, lock_garbage, ["--maxrregcount=32"])
    ptxas_case("a remote hit the full local cache cannot copy (disk full)", None, REAL, full_cache_remote_hit,
               ["--maxrregcount=32"])
    missing_ptxas()
    # Found by an outside attack (issue 24): each must be survived, in
    # bounded time.
    ptxas_case("a damaged ACF's quarantine while a stopped writer holds the cache", None, REAL, damaged_acf_entry,
               same_argv=False, max_extra=1.0)
    ptxas_case("data.mdb is /dev/zero", None, REAL, replaced_data_file("zero"), max_extra=0.5)
    ptxas_case("data.mdb is a FIFO", None, REAL, replaced_data_file("fifo"), max_extra=0.5)
    ptxas_case("a 1 GiB (sparse) counters file, a hit with -v", None, REAL, huge_counters, ["--maxrregcount=32"],
               argv=lambda d: ["-arch=sm_90a", PTX, "-o", os.path.join(d, "out.cubin"), "-v"], max_extra=0.5)
    ptxas_case("a remote hit while a stopped writer holds the local cache", None, REAL, remote_hit_writer_stopped,
               ["--maxrregcount=32"], max_extra=1.0)
    for fault, fields, knobs in [
        ("Redis: a record for sm_80 filed under the sm_90a key", b"target = sm_80\nptxas = 13.0.88\n", b"maxrregcount = 32\n"),
        ("Redis: a record for another ptxas filed under this one's key", b"target = sm_90a\nptxas = 12.0.1\n",
         b"maxrregcount = 32\n"),
        ("Redis: a record with other codegen flags than its key", ON_TARGET + b"flags = opt-level=1\n", b"maxrregcount = 32\n"),
        ("Redis: maxrregcount = 017 (octal 15 to ptxas)", ON_TARGET, b"maxrregcount = 017\n"),
        ("Redis: maxrregcount = +32", ON_TARGET, b"maxrregcount = +32\n"),
        ("Redis: maxrregcount = 60,000 digits 000...032", ON_TARGET, b"maxrregcount = " + b"0" * 60000 + b"32\n"),
        ("Redis: opt-level = 0002 beside Ofast-compile", ON_TARGET, b"Ofast-compile = max\nopt-level = 0002\n"),
    ]:
        ptxas_case(fault, None, REAL, remote(lambda f=fields, k=knobs: server(record(f, k))))
    ptxas_case("CIQ_PACKS: a 64 MiB pack (indexed once, aside)", None, REAL, big_pack, max_extra=0.5,
               after=pack_indexed_once)
    light = open(PTX, "rb").read()
    stdin_case("PTX through a pipe (/dev/stdin)", lambda d: ["-arch=sm_90a", "/dev/stdin", "-o",
                                                             os.path.join(d, "out.cubin")], light)
    stdin_case("--options-file through a pipe (/dev/stdin)", lambda d: [
        "-arch=sm_90a", "--options-file", "/dev/stdin", PTX, "-o", os.path.join(d, "out.cubin")], b"--maxrregcount=40\n")
    stdin_case("input '-' (stdin) beside a file named '-'", lambda d: ["-arch=sm_90a", "-", "-o",
                                                                       os.path.join(d, "out.cubin")],
               light.replace(b".entry ", b".entry renamed_"), cwd_file=light)
    loop_case("ciq-ptxas", "two ciq-ptxas named ptxas on PATH (a link, a copy)", two_ptxas_on_path)
    loop_case("ciq-ptxas", "CIQ_REAL_PTXAS is a script that runs ciq-ptxas", real_ptxas_script_loops)
    loop_case("ciq-nvcc", "two ciq-nvcc named nvcc on PATH (a link, a copy)", two_nvcc_on_path)
    for fault, setup in [
        ("data.mdb random bytes", damaged_cache("random")),
        ("cache directory is a file", lambda d: {"CIQ_CACHE_DIR": afile}),
        ("CIQ_CONTROLS garbage text", controls(b"this is = not\n[a control set\n")),
        ("Redis: never answers", remote(lambda: server(None))),
        ("pack with a hostile knob (valid checksum)", pack("hostile")),
    ]:
        nvcc_case(fault, setup)
    nvcc_case("a damaged ACF's quarantine while a stopped writer holds the cache", damaged_acf_entry, max_extra=1.5)
    import zipfile

    def symlink(z):
        info = zipfile.ZipInfo("link.acf")
        info.external_attr = 0o120777 << 16  # a symlink to /etc/passwd
        z.writestr(info, "/etc/passwd")

    def lying(z):
        z.writestr("big.acf", b"\0" * (1 << 20))
    lying.patch = lying_sizes
    for fault, make, refused in [
        ("path traversal (../ciq-evil.acf)", lambda z: z.writestr("../ciq-evil.acf", b"x"), False),
        ("absolute name (/tmp/ciq-evil.acf)", lambda z: z.writestr("/tmp/ciq-evil.acf", b"x"), False),
        ("a symlink entry", symlink, False),
        ("duplicate names", lambda z: (z.writestr("a.acf", b"one"), z.writestr("a.acf", b"two")), False),
        ("a bomb (17 MiB of zeros, 17 KiB deflated)", lambda z: z.writestr("bomb.acf", b"\0" * (17 << 20)), True),
        ("sizes that lie (100 B declared, 1 MiB inside)", lying, True),
        ("a manifest whose sha256 does not match", lambda z: (z.writestr("a.acf", b"one"), z.writestr(
            "manifest.json", '{"cuda_version":"13.0","controls_stage":"ptxas","files":[{"path":"a.acf","sha256":"' +
            "0" * 64 + '"}]}')), True),
    ]:
        zip_case(fault, make, refused)
    for tool, rd in REDIS:
        subprocess.run([sys.executable, tool, "stop", rd], capture_output=True)
    tried = [r for r in results if not r[2].startswith("not tried")]
    survived = [r for r in tried if r[2] == "survived"]
    width = max(len(r[1]) for r in results)
    print(f"{'tool':<10} {'fault':<{width}}  result")
    for tool, fault, status in results:
        print(f"{tool:<10} {fault:<{width}}  {status}")
    pct = 100 * len(survived) // max(1, len(tried))
    print(f"fault matrix: {len(survived)}/{len(tried)} tried survived ({pct} %), byte-identical to the plain tool; "
          f"{len(results) - len(tried)} not tried here")
    sys.exit(0 if len(survived) == len(tried) else 1)


if __name__ == "__main__":
    main()
