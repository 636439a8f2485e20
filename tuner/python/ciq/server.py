"""A resident benchmark server for JIT kernels: ciq's side of `--bench-server`.

BenchServer turns one protocol request (ciq.protocol) into calls of your
Python functions: `bench(candidate)` returns the objective value(s),
`check(candidate)` returns False or raises for a wrong answer, `build(candidate)`
compiles only. Before each call it points the compilations of this process
at the candidate (CIQ_CONTROLS and CIQ_TRACE in os.environ, for ciq-ptxas
started as Triton's `TRITON_PTXAS_PATH`) and selects the candidate in every
cache layer (ciq.jit), so a new candidate compiles and a known one is reused.
A `build` request first forgets what was compiled for the candidate's
controls, so that ciq-ptxas runs (and traces) again; without a `build`
function it calls `bench` once and discards the value.

Whatever your functions do (raise, return nan or 10**400, return False
from check, sys.exit()), the answer is a well-formed one: status 1 with a
`ciq-error:` line that the tuner records as the candidate's reason, an
exception's traceback in the server's log (stderr, the tuner's
bench-server*.log; ciq.tune(quiet=True) keeps it out of the terminal), and
the server goes on to the next request.

Requests come from the tuner on stdin (`serve_stream`), or from a Unix
socket (`SocketListener`: ciq.tune, and `ciq.serve --listen` for builds
sent by `python3 -m ciq.relay`); they are answered one at a time, as the
controls are process-wide.
"""
import os
import socket
import stat
import sys
import threading
import traceback

from . import protocol
from .candidate import candidate_from_request
from .jit import candidate_environment


def _describe(error):
    if isinstance(error, SystemExit):
        return f"SystemExit (sys.exit({protocol.shown(error.code)}))"
    try:
        text = " ".join(str(error).split())
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises
        text = ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class BenchServer:
    """Answers requests with `bench`, `check` and `build` (callables taking a
    Candidate; check and build optional), selecting the candidate in `caches`
    (objects with select(candidate) and forget(digest)) first. `setup_error`:
    why the benchmark could not be set up; every request is then answered
    with it."""

    def __init__(self, bench=None, check=None, build=None, caches=(), log=None, spaces_dir=None, setup_error="",
                 values=None):
        self.bench, self.check, self.build = bench, check, build
        self.values = values  # how many objective values bench must return (None: any)
        self.caches = list(caches)
        self.log = log if log is not None else sys.stderr
        self.spaces_dir = spaces_dir
        self.setup_error = setup_error
        self.lock = threading.Lock()
        self.requests = 0

    def _failed(self, what, error):
        try:
            traceback.print_exception(type(error), error, error.__traceback__, file=self.log)
            self.log.flush()
        except Exception:  # noqa: BLE001 - a log that cannot be written costs the log, not the answer
            pass
        return protocol.error_lines(f"{what} raised {_describe(error)}")

    def answer(self, words, request_id):
        """The answer's text for one request's words, its status line echoing
        `request_id` (None: the request had no `ciq-request:` line; it is
        answered with an error that says so). Never raises but for
        KeyboardInterrupt: whatever goes wrong is the answer's error."""
        with self.lock:
            self.requests += 1
            if request_id is None:
                return protocol.error_answer(protocol.NO_REQUEST_ID, None)
            try:
                lines, status = self._answer(words)
            except (Exception, SystemExit) as e:  # a bug of ours, or of what the user's objects do in ways not caught below
                lines, status = self._failed("the ciq server", e)
            return protocol.format_answer(lines, status, request_id)

    def _answer(self, words):
        """(output lines, status) for one request's words."""
        try:
            request = protocol.parse_request(words)
        except protocol.ProtocolError as e:
            return protocol.error_lines(f"bad request: {e}")
        if self.setup_error:
            return protocol.error_lines(f"the benchmark could not be set up: {self.setup_error}")
        try:
            candidate = candidate_from_request(request, self.spaces_dir)
        except (OSError, ValueError) as e:  # ValueError: controls.ControlSetError, a set ciq's C++ reader refuses
            return protocol.error_lines(f"cannot read the candidate's controls: {e}")
        candidate_environment(candidate)
        try:
            if request.action == "build":
                for cache in self.caches:
                    cache.forget(candidate.digest)
            for cache in self.caches:
                cache.select(candidate)
        except (Exception, SystemExit) as e:  # a cache layer of the user's
            return self._failed("selecting the candidate's caches", e)

        if request.action == "check":
            if self.check is None:
                return protocol.error_lines("wrong answer: a check was requested but the benchmark has no check function")
            try:
                verdict = self.check(candidate)
            except (Exception, SystemExit) as e:
                return self._failed("check", e)
            if verdict is False:
                return protocol.error_lines("wrong answer: check returned False")
            return ["ciq-check: ok"], 0

        if request.action == "build":
            try:
                (self.build or self.bench)(candidate)
            except (Exception, SystemExit) as e:
                return self._failed("build" if self.build else "build (a first benchmark run)", e)
            return [f"ciq-built: {candidate.digest}"], 0

        if self.bench is None:
            return protocol.error_lines("the benchmark has no bench function")
        try:
            result = self.bench(candidate)
        except (Exception, SystemExit) as e:
            return self._failed("benchmark", e)
        try:
            return protocol.value_lines(result, self.values), 0
        except ValueError as e:
            return protocol.error_lines(f"benchmark {e}")
        except (Exception, SystemExit) as e:  # the returned object's own methods (__len__, __float__) raised
            return self._failed("reading the benchmark's value", e)

    def serve_stream(self, instream, outstream):
        """Answers requests from `instream` on `outstream` until end of input."""
        while True:
            request = protocol.read_request(instream)
            if request is None:
                return
            request_id, words = request
            outstream.write(self.answer(words, request_id))
            outstream.flush()


class SocketListener:
    """Serves `server` on a Unix socket at `path` from background threads:
    each connection is a stream of requests, as on the tuner's stdin."""

    def __init__(self, server, path):
        self.server, self.path = server, path
        if os.path.exists(path) and stat.S_ISSOCK(os.stat(path).st_mode):
            os.unlink(path)  # a socket an earlier server left
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(16)
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            with conn, conn.makefile("r", encoding="utf-8", newline="\n") as rd, \
                    conn.makefile("w", encoding="utf-8", newline="\n") as wr:
                self.server.serve_stream(rd, wr)
        except (OSError, ValueError):
            pass  # the client went away (the tuner timed a request out, or ended)
        except Exception as e:  # noqa: BLE001 - to the server's log, never a thread's traceback on the terminal
            self.server._failed("the ciq server's connection", e)

    def close(self):
        try:
            self.sock.close()
        finally:
            try:
                os.unlink(self.path)
            except OSError:
                pass


def benchmark_parts(obj):
    """(bench, check, build, caches) of what a setup function returned: an
    object with `bench` (and optional `check`, `build`, `caches`), a dict
    with those keys, or a plain callable (the bench). TypeError otherwise."""
    if isinstance(obj, dict):
        get = obj.get
    elif hasattr(obj, "bench"):
        def get(name, default=None):
            return getattr(obj, name, default)
    elif callable(obj):
        return obj, None, None, []
    else:
        raise TypeError(f"the setup returned {obj!r}: expected an object with bench(), a dict or a callable")
    if not callable(get("bench")):
        raise TypeError("the benchmark's bench is not callable")
    return get("bench"), get("check"), get("build"), list(get("caches", None) or [])
