"""ciq.controls: control sets read in Python, their digest, ptxas options rendered from the space file."""
import os
import tempfile
import unittest

from ciq.candidate import candidate_from_request
from ciq.controls import DEFAULT_DIGEST, ControlSetError, parse_control_set, read_control_set, render_options
from ciq.protocol import parse_request

SPACES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "spaces")

TEXT = """format = ciq-controls/1
space = ptxas-13
maxrregcount = 128      # a module option
_Z5heavyPf:maxnreg = 96
acf = sha256:00FF00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff
nvcc-space = nvcc-13
nvcc.fmad = 0
"""


class ControlsTest(unittest.TestCase):
    def test_every_kind_of_line(self):
        cs = parse_control_set(TEXT)
        self.assertEqual(cs.space, "ptxas-13")
        self.assertEqual(cs.options, {"maxrregcount": "128"})
        self.assertEqual(cs.directives, {"_Z5heavyPf": {"maxnreg": "96"}})
        # The ACF's digest as the C++ side holds it: lower-case hex.
        self.assertEqual((cs.acf, cs.nvcc_space, cs.nvcc), ("sha256:" + "00ff" * 16, "nvcc-13", {"fmad": "0"}))

    def test_values_read_as_the_cpp_side_writes_them(self):
        # format_control_set quotes a value holding `#` or a backslash; the
        # full round trip over every form is lit/python-controls-round-trip.
        cs = parse_control_set('a = "x#y"\nb = "c:\\\\d"  # said\nc = p#q\nd = r #s\n'
                               'e = u\x85v\nf = "\\[x"\n')
        self.assertEqual(cs.options, {"a": "x#y", "b": 'c:\\d', "c": "p#q", "d": "r", "e": "u\x85v", "f": "[x"})
        # Lines end at "\n" only, as in C++: "\r" inside a value stays.
        self.assertEqual(parse_control_set("k:maxnreg = 9\rx\n").directives, {"k": {"maxnreg": "9\rx"}})

    def test_what_the_cpp_reader_refuses_is_refused(self):
        # Before, these were skipped or kept, and ciq-ptxas refused the set.
        for text in ('b = "d\\"e"\n', 'f = "\\n"\n', "[s]\nk = 1\n", "k 1\n", "acf = sha256:00ff\n", "format = x\n"):
            with self.subTest(text), self.assertRaises(ControlSetError):
                parse_control_set(text)

    def test_a_value_that_is_not_utf8_has_a_digest(self):
        # Issue 46, item 9: digest() raised UnicodeEncodeError on a value
        # the C++ reader accepts. Its digest is the C++ one, of the bytes
        # (test/vectors/cpp_python.json).
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "c.controls")
            with open(path, "wb") as f:
                f.write(b"knob = a\xffb\n")
            self.assertEqual(read_control_set(path).digest(), "58f461b99ed3717a")
            candidate = candidate_from_request(parse_request(["bench", "--controls=" + path]), SPACES)
            self.assertEqual(candidate.digest, "58f461b99ed3717a")

    def test_digest_names_the_settings_not_the_text(self):
        a = parse_control_set("maxrregcount = 64\nopt-level = 2\n")
        b = parse_control_set("# same, reordered\nopt-level=2\nspace = ptxas-13\nmaxrregcount =64\n")
        c = parse_control_set("maxrregcount = 32\nopt-level = 2\n")
        self.assertEqual(a.digest(), b.digest())
        self.assertNotEqual(a.digest(), c.digest())
        self.assertEqual(parse_control_set("").digest(), DEFAULT_DIGEST)
        self.assertEqual(parse_control_set("format = ciq-controls/1\nspace = ptxas-13\n").digest(), DEFAULT_DIGEST)
        # A directive is not the module option of the same name.
        self.assertNotEqual(parse_control_set("k:maxnreg = 64").digest(), parse_control_set("maxnreg = 64").digest())

    def test_options_render_as_the_space_file_says(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "ptxas-13.space"), "w") as f:
                f.write("[space]\nname = ptxas-13\ntool = ptxas\nversions = 13.0..13.99\n\n"
                        "[option.maxrregcount]\nrender = --maxrregcount={}\nrange = 16..255\n\n"
                        "[option.flag-knob]\nrender = --a-flag\nvalues = on\n\n"
                        "[directive.maxnreg]\nrender = .maxnreg {}\nrange = 16..255\n")
            cs = parse_control_set("space = ptxas-13\nmaxrregcount = 64\nflag-knob = on\nk:maxnreg = 96\n")
            self.assertEqual(render_options(cs, d), ["--a-flag", "--maxrregcount=64"])  # ciq-ptxas' order: by name
            # An option the space does not list: ciq-ptxas applies none of the set.
            with self.assertRaisesRegex(ControlSetError, "knob 'unlisted' is not in space ptxas-13"):
                render_options(parse_control_set("maxrregcount = 64\nunlisted = 3\n"), d)
            with self.assertRaisesRegex(ControlSetError, "no knob space file ptxas-13.space"):
                render_options(cs, os.path.join(d, "none"))

    def test_the_real_space_file_when_the_tree_has_one(self):
        cs = parse_control_set("opt-level = 1\ndef-load-cache = cg\n")
        self.assertEqual(render_options(cs, SPACES), ["--def-load-cache=cg", "--opt-level=1"])

    def test_an_unsafe_knob_is_never_rendered_by_default(self):
        # Issue 46, item 10: render_options gave `--force-load-cache=cg`,
        # which ciq-ptxas refuses, to Triton users as ptx_options.
        cs = parse_control_set("maxrregcount = 64\nforce-load-cache = cg\n")
        old = os.environ.pop("CIQ_ALLOW_UNSAFE", None)
        try:
            with self.assertRaisesRegex(ControlSetError, "knob 'force-load-cache' changes program semantics"):
                render_options(cs, SPACES)
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "c.controls")
                with open(path, "w") as f:
                    f.write("maxrregcount = 64\nforce-load-cache = cg\n")
                candidate = candidate_from_request(parse_request(["bench", "--controls=" + path]), SPACES)
                self.assertEqual(candidate.options, [])
                self.assertIn("force-load-cache", candidate.options_refused)
            # As ciq-ptxas: CIQ_ALLOW_UNSAFE=1 lets it through.
            os.environ["CIQ_ALLOW_UNSAFE"] = "Yes"
            self.assertEqual(render_options(cs, SPACES), ["--force-load-cache=cg", "--maxrregcount=64"])
        finally:
            os.environ.pop("CIQ_ALLOW_UNSAFE", None)
            if old is not None:
                os.environ["CIQ_ALLOW_UNSAFE"] = old


if __name__ == "__main__":
    unittest.main()
