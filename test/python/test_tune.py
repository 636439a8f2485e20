"""ciq.tune's pure parts: the ciq-tuner arguments it passes, and reading a run directory back.
(The end-to-end run through the real ciq-tuner is test/lit/python-tune.test.)"""
import os
import shlex
import shutil
import tempfile
import unittest
from unittest import mock

import ciq
from ciq.server import BenchServer, SocketListener
from ciq.tune import find_tuner, read_rows, socket_folder, split_candidate, tuner_arguments


class TuneArgumentsTest(unittest.TestCase):
    def test_params_specs(self):
        self.assertEqual(ciq.Range(1, 20, 0.5, default=10), "range:1:20:0.5,default=10")
        self.assertEqual(ciq.Choice(1, 2, 3), "choice:1,2,3")
        self.assertEqual(ciq.Choice([64, 128], default=128), "choice:64,128,default=128")
        self.assertEqual(ciq.Literal(7, knockout=0.5), "literal:7,knockout=0.5")
        # They are what they look like: specs, not strings, that print as their text.
        spec = ciq.Range(1, 2, 1)
        self.assertIsInstance(spec, ciq.Range)
        self.assertIsInstance(spec, ciq.ParamSpec)
        self.assertNotIsInstance(spec, str)
        self.assertEqual(str(spec), "range:1:2:1")
        self.assertEqual(repr(spec), "Range('range:1:2:1')")

    def test_choice_values_the_param_syntax_cannot_hold_are_refused(self):
        for bad in ("c,d", "a;b", "", " x"):
            with self.assertRaises(ValueError):
                ciq.Choice("ok", bad)

    def test_a_tuner_that_cannot_run_is_a_tune_error(self):
        with self.assertRaisesRegex(ciq.TuneError, "cannot run ciq-tuner"):
            ciq.tune(lambda c: 1, params={"x": ciq.Range(1, 2, 1)}, tuner="/nonexistent/ciq-tuner")

    def test_a_run_that_fails_early_is_a_tune_error_with_its_reason(self):
        # `run --json` puts a failed summary on stdout when it stops before
        # its search ends (here a stand-in tuner, as ciq-tuner does).
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "ciq-tuner")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho 'ciq-tuner: error: no GPU' >&2\n"
                        "echo '{\"run_dir\":\"\",\"outcome\":\"failed\",\"reason\":\"no CUDA driver here\"}'\nexit 1\n")
            os.chmod(fake, 0o755)
            with self.assertRaisesRegex(ciq.TuneError, "^ciq-tuner: no CUDA driver here"):
                ciq.tune(lambda c: 1, params={"x": ciq.Range(1, 2, 1)}, tuner=fake, quiet=True)

    def test_space_none_needs_no_build(self):
        args = tuner_arguments("/t/s.sock", params={"x": ciq.Range(1, 3, 1), "y": [1, 2]}, budget=9, python="/py")
        self.assertEqual(args[:4], ["run", "--space=none", "--param=x=range:1:3:1", "--param=y=choice:1,2"])
        server = args[args.index("--bench-server") + 1]
        self.assertEqual(shlex.split(server), ["/py", "-S", "-m", "ciq.relay", "/t/s.sock"])
        self.assertEqual(args[args.index("--bench") + 1],
                         "bench --controls={controls} --workdir={workdir} x={param:x} y={param:y}")
        self.assertNotIn("--build", args)
        self.assertNotIn("--check", args)
        self.assertEqual(args[args.index("--metric") + 1], "ciq-value: ([-+0-9.eE]+)")
        for flag, value in (("--budget", "9"), ("--repeats", "1"), ("--jobs", "1"), ("--direction", "min")):
            self.assertEqual(args[args.index(flag) + 1], value)
        self.assertIn("--json", args)
        self.assertNotIn("--no-ship", args)

    def test_compiler_space_builds_in_this_process_and_options_pass_through(self):
        args = tuner_arguments("/t/s.sock", space="ptxas-13", directions=["min", "max"], check=True, ship=False,
                               out="/r", cache_dir="/c", kernels="*mm*", python="/py")
        build = shlex.split(args[args.index("--build") + 1])
        self.assertEqual(build, ["/py", "-S", "-m", "ciq.relay", "/t/s.sock", "build", "--controls={controls}",
                                 "--workdir={workdir}"])
        self.assertEqual(args[args.index("--check") + 1], "check --controls={controls} --workdir={workdir}")
        self.assertEqual([args[i + 1] for i, a in enumerate(args) if a == "--metric"],
                         ["ciq-value-0: ([-+0-9.eE]+)", "ciq-value-1: ([-+0-9.eE]+)"])
        self.assertEqual([args[i + 1] for i, a in enumerate(args) if a == "--direction"], ["min", "max"])
        self.assertIn("--no-ship", args)
        for flag, value in (("--out", "/r"), ("--cache-dir", "/c"), ("--kernels", "*mm*"), ("--space=ptxas-13", None)):
            self.assertTrue(flag in args if value is None else args[args.index(flag) + 1] == value)

    def test_the_servers_socket_binds_under_a_deep_tmpdir(self):
        # CI's checkout gives each test a TMPDIR near 70 bytes deep; a user's may be deeper.
        # d itself must be short (this test's own $TMPDIR may not be).
        with tempfile.TemporaryDirectory(dir="/tmp") as d:
            deep = os.path.join(d, "t" * 120)
            os.mkdir(deep)
            with mock.patch.object(tempfile, "tempdir", deep):
                folder = socket_folder()
            try:
                self.assertEqual(os.stat(folder).st_mode & 0o777, 0o700)
                path = os.path.join(folder, "server.sock")
                listener = SocketListener(BenchServer(lambda c: 1.0), path)
                listener.sock.close()
                self.assertTrue(os.path.exists(path))
            finally:
                shutil.rmtree(folder)
            with mock.patch.object(tempfile, "tempdir", d):
                folder = socket_folder()
            self.assertEqual(os.path.dirname(folder), d)  # $TMPDIR when it fits
            os.rmdir(folder)

    def test_finding_the_tuner(self):
        with mock.patch.dict(os.environ, {"CIQ_TUNER": "/opt/ciq/bin/ciq-tuner"}):
            self.assertEqual(find_tuner(), "/opt/ciq/bin/ciq-tuner")
            self.assertEqual(find_tuner("/x/ciq-tuner"), "/x/ciq-tuner")
        with mock.patch.dict(os.environ, {"PATH": "/nonexistent"}, clear=True):
            with self.assertRaises(ciq.TuneError):
                find_tuner()


class RunDirectoryTest(unittest.TestCase):
    def test_candidates_split_into_params_and_knobs(self):
        self.assertEqual(split_candidate("maxrregcount=64;k:maxnreg=96;param:x=1.5;param:y=1;param:mode=fast"),
                         ({"x": 1.5, "y": 1, "mode": "fast"}, ["maxrregcount=64", "k:maxnreg=96"]))
        self.assertEqual(split_candidate(""), ({}, []))

    def test_results_csv_rows(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "results.csv"), "w") as f:
                f.write('number,generation,candidate,"metric:ciq-value: ([-+0-9.eE]+)",status,reason,build_s,bench_s\n'
                        "0,0,param:x=10;param:y=1,101,ok,,0.003,0.4\n"
                        '1,0,param:x=3;param:y=1,,invalid,"benchmark exit status 1: ciq-error: boom, twice",0.01,0\n'
                        "2,1,param:x=1")   # a partial last line
            rows = read_rows(d)
        self.assertEqual(len(rows), 2)
        self.assertEqual(rows[0], {"number": 0, "generation": 0, "candidate": "param:x=10;param:y=1",
                                   "params": {"x": 10, "y": 1}, "knobs": [], "values": [101.0], "status": "ok",
                                   "reason": ""})
        self.assertEqual((rows[1]["values"], rows[1]["reason"]), ([None], "benchmark exit status 1: ciq-error: boom, twice"))

    def test_result_reads_the_summary(self):
        r = ciq.TuneResult("/r", {"best": 2, "baseline": 101, "controls": "maxrregcount=64;param:x=1",
                                  "verdict": "better than the default", "shipped": True})
        self.assertEqual((r.best, r.baseline, r.best_params, r.best_knobs, r.shipped), (2, 101, {"x": 1},
                                                                                      ["maxrregcount=64"], True))


if __name__ == "__main__":
    unittest.main()
