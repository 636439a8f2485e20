"""ciq.server and python3 -m ciq.serve: requests become calls of Python functions;
errors and wrong answers become invalid answers with the reason; the server goes on."""
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

import ciq
from ciq import protocol
from ciq.jit import KernelCache
from ciq.server import BenchServer, SocketListener, benchmark_parts
from ciq.tune import socket_folder

# The directory holding the copy of ciq under test (the source tree's, or one
# pip installed): the subprocesses below import that same copy.
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(ciq.__file__)))


def request(action, controls="", workdir="", **params):
    words = [action]
    if controls:
        words.append(f"--controls={controls}")
    if workdir:
        words.append(f"--workdir={workdir}")
    return words + [f"{k}={v}" for k, v in params.items()]


class BenchServerTest(unittest.TestCase):
    def setUp(self):
        # Sockets live here: a folder short enough for their addresses even
        # under a deep $TMPDIR (lit gives each test one inside the checkout).
        self.dir = socket_folder()
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.log = io.StringIO()
        self.seen = []

    def controls(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def server(self, **kw):
        return BenchServer(log=self.log, **kw)

    def test_bench_answers_the_value_for_the_candidate(self):
        def bench(c):
            self.seen.append((c.params, c.controls.options, os.environ.get("CIQ_CONTROLS"), os.environ.get("CIQ_TRACE")))
            return c.params["x"] ** 2 + c.params["y"]
        path = self.controls("a.controls", "maxrregcount = 64\n")
        s = self.server(bench=bench)
        self.assertEqual(s.answer(request("bench", path, "/r/e1", x="1.5", y="2", z=""), 7),
                         "ciq-value: 4.25\nciq-status: 7 0\n")
        self.assertEqual(self.seen, [({"x": 1.5, "y": 2}, {"maxrregcount": "64"}, path, "/r/e1/trace")])

    def test_sys_exit_in_a_function_is_that_candidate_s_failure(self):
        def bench(c):
            sys.exit(3)
        s = self.server(bench=bench, values=1)
        answer = s.answer(request("bench", "", "/r/e1"), 7)
        self.assertIn("ciq-error: benchmark raised SystemExit (sys.exit(3))", answer)
        self.assertTrue(answer.endswith("ciq-status: 7 1\n"))

    def test_a_value_count_that_is_not_the_objectives_is_named(self):
        s = self.server(bench=lambda c: (1.0, 2.0), values=1)
        self.assertIn("ciq-error: benchmark returned 2 value(s) ((1.0, 2.0)); the tuning has 1 objective(s)",
                      s.answer(request("bench", "", "/r/e1"), 7))

    def test_failures_are_invalid_answers_and_the_server_goes_on(self):
        def bench(c):
            if c.params["x"] == 3:
                raise ZeroDivisionError("division by zero")
            if c.params["x"] == 4:
                return float("nan")
            return c.params["x"]

        def check(c):
            if c.params["x"] == 5:
                return False
            if c.params["x"] == 6:
                raise AssertionError("max error 0.5 > 1e-3")

        s = self.server(bench=bench, check=check)
        self.assertEqual(s.answer(request("bench", x=3), 7),
                         "ciq-error: benchmark raised ZeroDivisionError: division by zero\nciq-status: 7 1\n")
        self.assertIn("Traceback", self.log.getvalue())   # the server log has the traceback
        self.assertEqual(s.answer(request("bench", x=4), 7),
                         "ciq-error: benchmark returned nan, not a finite number\nciq-status: 7 1\n")
        self.assertEqual(s.answer(request("check", x=5), 7), "ciq-error: wrong answer: check returned False\nciq-status: 7 1\n")
        self.assertEqual(s.answer(request("check", x=6), 7),
                         "ciq-error: check raised AssertionError: max error 0.5 > 1e-3\nciq-status: 7 1\n")
        self.assertEqual(s.answer(request("check", x=7), 7), "ciq-check: ok\nciq-status: 7 0\n")
        self.assertEqual(s.answer(["frobnicate"], 7).splitlines()[-1], "ciq-status: 7 1")
        self.assertIn("cannot read the candidate's controls",
                      s.answer(request("bench", "/no/such/file", x=1), 7))
        self.assertEqual(s.answer(request("bench", x=7), 7), "ciq-value: 7\nciq-status: 7 0\n")
        self.assertEqual(s.requests, 8)

    def test_no_check_function_is_a_wrong_answer_not_a_pass(self):
        self.assertIn("ciq-status: 7 1", self.server(bench=lambda c: 1).answer(request("check"), 7))

    def test_build_forgets_and_compiles_once_then_bench_reuses(self):
        compiled = []
        cache = KernelCache(lambda kernel, c: compiled.append((kernel, c.controls_text)) or kernel)
        a = self.controls("a", "opt-level = 1\n")
        b = self.controls("b", "opt-level = 2\n")

        def bench(c):
            cache.get("matmul")
            return 1.0

        s = self.server(bench=bench, caches=[cache])
        for action, path in (("build", a), ("bench", a), ("bench", a), ("build", b), ("bench", b), ("bench", a),
                             ("build", a)):
            self.assertTrue(s.answer(request(action, path), 7).endswith("ciq-status: 7 0\n"))
        # build a compiles; bench a reuses; build b compiles; bench a reuses; a
        # second build of a forgets and compiles again (so ciq-ptxas traces it).
        self.assertEqual(compiled, [("matmul", "opt-level = 1\n"), ("matmul", "opt-level = 2\n"),
                                    ("matmul", "opt-level = 1\n")])

    def test_build_errors_name_the_step(self):
        def build(c):
            raise RuntimeError("PTXAS error: internal")
        answer = self.server(bench=lambda c: 1, build=build).answer(request("build"), 7)
        self.assertEqual(answer, "ciq-error: build raised RuntimeError: PTXAS error: internal\nciq-status: 7 1\n")

    def test_setup_error_answers_every_request(self):
        s = self.server(setup_error="m:f: ImportError: no module named torch")
        for _ in range(2):
            self.assertEqual(s.answer(request("bench"), 7), "ciq-error: the benchmark could not be set up: "
                             "m:f: ImportError: no module named torch\nciq-status: 7 1\n")

    def test_benchmark_shapes(self):
        f = lambda c: 1
        self.assertEqual(benchmark_parts(f), (f, None, None, []))
        self.assertEqual(benchmark_parts({"bench": f, "check": f}), (f, f, None, []))

        class B:
            caches = ["c"]
            def bench(self, c): return 1
        self.assertEqual(benchmark_parts(B())[3], ["c"])
        with self.assertRaises(TypeError):
            benchmark_parts(42)

    def test_values_that_are_not_finite_numbers_are_errors_and_the_server_goes_on(self):
        class Hostile:
            def __float__(self):
                raise RuntimeError("no float here")

            def __repr__(self):
                raise RuntimeError("no repr either")

        values = {1: 10**400, 2: float("nan"), 3: Hostile(), 4: {"a b": 1}, 5: [10**400]}
        s = self.server(bench=lambda c: values.get(c.params["x"], 3))
        answers = [s.answer(request("bench", x=x), x) for x in range(1, 7)]
        self.assertEqual(answers[0], "ciq-error: benchmark returned 100000000000000000000000000000...(401 characters), "
                                     "not a finite number (too large for a double)\nciq-status: 1 1\n")
        self.assertEqual(answers[1], "ciq-error: benchmark returned nan, not a finite number\nciq-status: 2 1\n")
        self.assertEqual(answers[2], "ciq-error: benchmark returned <a Hostile>, not a number\nciq-status: 3 1\n")
        self.assertEqual(answers[3], "ciq-error: benchmark returned a value named 'a b': a name is one word without ':'"
                                     "\nciq-status: 4 1\n")
        self.assertTrue(answers[4].endswith("not a finite number (too large for a double)\nciq-status: 5 1\n"))
        self.assertEqual(answers[5], "ciq-value: 3\nciq-status: 6 0\n")
        self.assertEqual(self.log.getvalue(), "")  # a value is not an exception: no traceback

    def test_a_socket_server_survives_an_overflowing_value_quietly(self):
        # ciq.tune(quiet=True): its listener thread died of OverflowError,
        # printing a traceback on the terminal, and answered nothing more.
        s = self.server(bench=lambda c: 10**400 if c.params["x"] == 1 else 4)
        path = os.path.join(self.dir, "q.sock")
        listener = SocketListener(s, path).start()
        self.addCleanup(listener.close)
        env = dict(os.environ, PYTHONPATH=PACKAGE, PYTHONDONTWRITEBYTECODE="1")
        stream = protocol.encode_request(request("bench", x=1), 1) + protocol.encode_request(request("bench", x=2), 2)
        stderr = io.StringIO()
        hook, threading.excepthook = threading.excepthook, lambda args: stderr.write(f"thread died: {args.exc_value!r}")
        self.addCleanup(setattr, threading, "excepthook", hook)
        run = subprocess.run([sys.executable, "-m", "ciq.relay", path], input=stream, capture_output=True, text=True,
                             env=env, timeout=60)
        self.assertEqual(run.stdout.splitlines()[1:], ["ciq-status: 1 1", "ciq-value: 4", "ciq-status: 2 0"])
        self.assertEqual((run.returncode, stderr.getvalue()), (0, ""))

    def test_socket_and_relay(self):
        s = self.server(bench=lambda c: c.params["x"] * 2)
        path = os.path.join(self.dir, "s.sock")
        listener = SocketListener(s, path).start()
        self.addCleanup(listener.close)
        env = dict(os.environ, PYTHONPATH=PACKAGE, PYTHONDONTWRITEBYTECODE="1")
        stream = protocol.encode_request(request("bench", x=2), 5) + protocol.encode_request(request("bench", x=-1), 6)
        run = subprocess.run([sys.executable, "-m", "ciq.relay", path], input=stream, capture_output=True, text=True,
                             env=env, timeout=60)
        self.assertEqual(run.stdout, "ciq-value: 4\nciq-status: 5 0\nciq-value: -2\nciq-status: 6 0\n")
        once = subprocess.run([sys.executable, "-m", "ciq.relay", path, "bench", "x=x"], capture_output=True,
                              text=True, env=env, timeout=60)
        self.assertEqual((once.returncode, once.stdout), (1, "ciq-error: benchmark returned 'xx', not a number\n"))
        gone = subprocess.run([sys.executable, "-m", "ciq.relay", path + ".missing"], input="ciq-request: 1\nbench\n\n",
                              capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(gone.returncode, 2)
        self.assertIn("ciq.relay: error:", gone.stderr)

    def test_a_garbled_status_line_fails_the_relay(self):
        # Issue 46, item 11: `ciq-status: 1 256` made the one-shot relay exit
        # 256 % 256 = 0 (success), and `1 00` exit 0; the C++ tuner calls
        # them garbled (test/vectors/cpp_python.json has the whole table).
        path = os.path.join(self.dir, "raw.sock")
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind(path)
        listening.listen(4)
        self.addCleanup(listening.close)
        answers = ["ciq-status: 1 256", "ciq-status: 1 512", "ciq-status: 1 00", "ciq-status: 1 7"]

        def answer_each():
            for line in answers:
                conn, _ = listening.accept()
                with conn, conn.makefile("rb") as requests:
                    while requests.readline() not in (b"\n", b""):
                        pass
                    conn.sendall(line.encode() + b"\n")
        threading.Thread(target=answer_each, daemon=True).start()
        env = dict(os.environ, PYTHONPATH=PACKAGE, PYTHONDONTWRITEBYTECODE="1")
        for line in answers:
            with self.subTest(line):
                once = subprocess.run([sys.executable, "-m", "ciq.relay", path, "bench"], capture_output=True, text=True,
                                      env=env, timeout=60)
                if line.endswith(" 7"):
                    self.assertEqual(once.returncode, 7)
                else:
                    self.assertEqual(once.returncode, 2)
                    self.assertIn(f"ciq.relay: error: the answer's status line is '{line}'", once.stderr)

    def serve_raw(self, name, answers):
        """A server on a socket that answers each request with the next
        bytes of `answers` (a callable gets the socket and sends itself)."""
        path = os.path.join(self.dir, name)
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind(path)
        listening.listen(1)
        self.addCleanup(listening.close)

        def serve():
            conn, _ = listening.accept()
            with conn, conn.makefile("rb") as requests:
                for answer in answers:
                    while requests.readline() not in (b"\n", b""):
                        pass
                    answer(conn) if callable(answer) else conn.sendall(answer)
        threading.Thread(target=serve, daemon=True).start()
        return path, dict(os.environ, PYTHONPATH=PACKAGE, PYTHONDONTWRITEBYTECODE="1")

    def test_output_after_an_answer_fails_the_relay(self):
        # The second outside attack (issue 46): in stream mode a line the
        # server wrote after its status line became the start of the next
        # request's answer; the C++ tuner calls it garbled ("wrote more
        # after its answer"), and so must the relay.
        path, env = self.serve_raw("extra.sock", [b"time_ms: 5\nciq-status: 1 0\ntime_ms: 0.001\n", b""])
        stream = protocol.encode_request(["bench"], 1) + protocol.encode_request(["bench"], 2)
        run = subprocess.run([sys.executable, "-m", "ciq.relay", path], input=stream, capture_output=True, text=True,
                             env=env, timeout=60)
        self.assertEqual(run.returncode, 2)
        self.assertIn("ciq.relay: error: the server wrote more after its answer to request 1", run.stderr)
        self.assertNotIn("ciq-status: 2", run.stdout)

    def test_output_a_little_after_an_answer_fails_the_relay(self):
        # The third outside attack: a line written 3 ms after the status
        # line came after the relay looked, and joined the next answer.
        def late(conn):
            conn.sendall(b"time_ms: 5\nciq-status: 1 0\n")
            time.sleep(0.003)
            conn.sendall(b"time_ms: 0.001\n")
        path, env = self.serve_raw("late.sock", [late, b"time_ms: 5\nciq-status: 2 0\n"])
        relay = subprocess.Popen([sys.executable, "-m", "ciq.relay", path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env)
        relay.stdin.write(protocol.encode_request(["bench"], 1).encode())
        relay.stdin.flush()
        time.sleep(0.3)
        out, err = relay.communicate(protocol.encode_request(["bench"], 2).encode(), timeout=60)
        self.assertEqual(relay.returncode, 2)
        self.assertIn(b"the server wrote more after its answer to request 1", err)
        self.assertNotIn(b"ciq-status: 2", out)

class ServeMainTest(unittest.TestCase):
    """python3 -m ciq.serve as the tuner runs it: requests on stdin, answers alone on stdout."""

    def run_serve(self, module_text, stdin, spec="bench_mod:setup"):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "bench_mod.py"), "w") as f:
                f.write(textwrap.dedent(module_text))
            env = dict(os.environ, PYTHONPATH=PACKAGE, PYTHONDONTWRITEBYTECODE="1")
            return subprocess.run([sys.executable, "-m", "ciq.serve", spec], input=stdin, capture_output=True,
                                  text=True, cwd=d, env=env, timeout=60)

    def test_prints_go_to_the_log_answers_to_stdout(self):
        run = self.run_serve("""
            import os, sys
            print("setting up")
            def setup():
                class B:
                    def bench(self, c):
                        print("ciq-status: 7 (a user's print)")
                        os.write(1, b"C-level write\\n")
                        return c.params["x"] + 1
                    def check(self, c):
                        return c.params["x"] != 9
                return B()
            """, "ciq-request: 1\nbench\nx=1\n\nciq-request: 2\nbench\nx=oops\n\n"
                 "ciq-request: 3\ncheck\nx=9\n\nciq-request: 4\nbench\nx=2\n\n")
        self.assertEqual(run.stdout, "ciq-value: 2\nciq-status: 1 0\n"
                                     "ciq-error: benchmark raised TypeError: can only concatenate str (not \"int\") to str\n"
                                     "ciq-status: 2 1\n"
                                     "ciq-error: wrong answer: check returned False\nciq-status: 3 1\n"
                                     "ciq-value: 3\nciq-status: 4 0\n")
        self.assertIn("setting up", run.stderr)
        self.assertIn("a user's print", run.stderr)
        self.assertIn("C-level write", run.stderr)
        self.assertEqual(run.returncode, 0)

    def test_a_failing_setup_is_every_answer(self):
        run = self.run_serve("def setup():\n    raise ImportError('No module named triton')\n",
                             "ciq-request: 1\nbench\n\nciq-request: 2\nbench\n\n")
        self.assertEqual(run.stdout.count("ciq-error: the benchmark could not be set up: bench_mod:setup: "
                                          "ImportError: No module named triton"), 2)
        self.assertEqual(run.returncode, 1)  # alone at a terminal, the status says it too
        run = self.run_serve("", "ciq-request: 1\nbench\n\n", spec="no_colon")
        self.assertIn("expected MODULE:FUNC", run.stdout)

    def test_each_answer_echoes_its_request_and_one_without_an_id_is_told_why(self):
        run = self.run_serve("def setup():\n    return lambda c: 2\n",
                             "ciq-request: 41\nbench\n\nbench\n\nciq-request: 43\nbench\n\n")
        self.assertEqual(run.stdout, "ciq-value: 2\nciq-status: 41 0\n"
                                     f"ciq-error: {protocol.NO_REQUEST_ID}\nciq-status: 1\n"
                                     "ciq-value: 2\nciq-status: 43 0\n")

    def test_a_value_too_large_for_a_double_is_that_candidates_error(self):
        # 10**400 made float() raise OverflowError: ciq.serve died with a
        # traceback and left every later request unanswered.
        run = self.run_serve("""
            def setup():
                return lambda c: {1: 10**400, 2: 1e400, 3: float("-inf"), 4: 10**5000}.get(c.params["x"], 2.5)
            """, "".join(f"ciq-request: {k}\nbench\nx={k}\n\n" for k in range(1, 6)))
        self.assertEqual(run.stdout.splitlines(), [
            "ciq-error: benchmark returned 100000000000000000000000000000...(401 characters), not a finite number "
            "(too large for a double)", "ciq-status: 1 1",
            "ciq-error: benchmark returned inf, not a finite number", "ciq-status: 2 1",
            "ciq-error: benchmark returned -inf, not a finite number", "ciq-status: 3 1",
            "ciq-error: benchmark returned <a int>, not a finite number (too large for a double)", "ciq-status: 4 1",
            "ciq-value: 2.5", "ciq-status: 5 0"])
        self.assertNotIn("Traceback", run.stderr)
        self.assertEqual(run.returncode, 0)


if __name__ == "__main__":
    unittest.main()
