"""`python3 -m ciq.serve MODULE:FUNC [--listen SOCKET]`: a resident benchmark for ciq-tuner.

    ciq-tuner run --bench-server 'python3 -m ciq.serve my_bench:setup' \\
        --bench 'bench --controls={controls} --workdir={workdir} BLOCK={param:BLOCK}' \\
        --check 'check --controls={controls} --workdir={workdir} BLOCK={param:BLOCK}' \\
        --metric 'ciq-value: ([-+0-9.eE]+)' ...

imports MODULE (from the current directory or PYTHONPATH) and calls FUNC()
once: it sets up (imports torch and Triton, makes inputs) and returns the
benchmark: an object with `bench(candidate)` and optionally `check`, `build`
and `caches` (cache layers, e.g. ciq.triton_caches.TritonCaches([kernel])),
or a dict with those keys, or a plain function (the bench). Then it answers
the tuner's requests (ciq.server.BenchServer; ciq.protocol for the words).

Your code's prints, and anything Triton or CUDA writes to stdout, go to
stderr (the tuner's bench-server*.log): stdout carries only answers. If
FUNC fails, every request is answered with that error, so the tuner's
first evaluation (the default) fails with it as the reason.

`--listen SOCKET` also answers requests on a Unix socket, for builds the
tuner runs as separate processes: `--build 'python3 -m ciq.relay SOCKET
build --controls={controls} --workdir={workdir}'` makes this process
compile the candidate (traced by ciq-ptxas). The server must be running
before the tuner's first build (its discovery build comes before it starts
any --bench-server): start it yourself and give the tuner `--bench-server
'python3 -m ciq.relay SOCKET'`, or use ciq.tune, which does all of this. Use
it with one GPU: each server of `--gpus` would need its own socket.
"""
import argparse
import importlib
import io
import os
import sys
import traceback

from .server import BenchServer, SocketListener, benchmark_parts


def load_setup(spec):
    """The function MODULE:FUNC names. ValueError for a spec without ':'."""
    module_name, sep, func_name = spec.partition(":")
    if not sep or not module_name or not func_name:
        raise ValueError(f"expected MODULE:FUNC, got {spec!r}")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    obj = importlib.import_module(module_name)
    for part in func_name.split("."):
        obj = getattr(obj, part)
    return obj


def protect_stdout():
    """A private text stream on the original stdout (the answers); fd 1 and
    sys.stdout then point at stderr, so no print reaches the tuner as an answer."""
    answers = io.TextIOWrapper(os.fdopen(os.dup(1), "wb", buffering=0), encoding="utf-8", newline="\n",
                               write_through=True)
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return answers


def make_server(spec):
    """A BenchServer for MODULE:FUNC; one that answers every request with the
    setup's error when FUNC cannot be loaded or fails."""
    try:
        bench, check, build, caches = benchmark_parts(load_setup(spec)())
    except Exception as e:
        traceback.print_exc()
        return BenchServer(setup_error=f"{spec}: {type(e).__name__}: {' '.join(str(e).split())}")
    return BenchServer(bench, check, build, caches)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m ciq.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("setup", metavar="MODULE:FUNC", help="returns the benchmark (see the module's help)")
    parser.add_argument("--listen", metavar="SOCKET", help="also answer requests (builds) on this Unix socket")
    args = parser.parse_args(argv)
    answers = protect_stdout()
    server = make_server(args.setup)
    listener = SocketListener(server, args.listen).start() if args.listen else None
    try:
        server.serve_stream(sys.stdin, answers)
    except KeyboardInterrupt:
        return 130
    finally:
        if listener:
            listener.close()
    return 1 if server.setup_error else 0  # every answer was that error: say so in the status too


if __name__ == "__main__":
    sys.exit(main())
