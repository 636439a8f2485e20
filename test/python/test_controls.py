"""ciq.controls: control sets read in Python, their digest, ptxas options rendered from the space file."""
import os
import tempfile
import unittest

from ciq.controls import DEFAULT_DIGEST, parse_control_set, render_options

TEXT = """format = ciq-controls/1
space = ptxas-13
maxrregcount = 128      # a module option
_Z5heavyPf:maxnreg = 96
acf = sha256:00ff
nvcc-space = nvcc-13
nvcc.fmad = 0
"""


class ControlsTest(unittest.TestCase):
    def test_every_kind_of_line(self):
        cs = parse_control_set(TEXT)
        self.assertEqual(cs.space, "ptxas-13")
        self.assertEqual(cs.options, {"maxrregcount": "128"})
        self.assertEqual(cs.directives, {"_Z5heavyPf": {"maxnreg": "96"}})
        self.assertEqual((cs.acf, cs.nvcc_space, cs.nvcc), ("sha256:00ff", "nvcc-13", {"fmad": "0"}))

    def test_values_read_as_the_cpp_side_writes_them(self):
        # format_control_set quotes a value holding `#` or a backslash; the
        # full round trip over every form is lit/python-controls-round-trip.
        cs = parse_control_set('a = "x#y"\nb = "c:\\\\d\\"e"  # said\nc = p#q\nd = r #s\n'
                               'e = u\x85v\nf = "\\n"\n')
        self.assertEqual(cs.options, {"a": "x#y", "b": 'c:\\d"e', "c": "p#q", "d": "r", "e": "u\x85v", "f": "\n"})
        # Lines end at "\n" only, as in C++: "\r" inside a value stays.
        self.assertEqual(parse_control_set("k:maxnreg = 9\rx\n").directives, {"k": {"maxnreg": "9\rx"}})

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
                f.write("[option.maxrregcount]\nrender = --maxrregcount={}\n\n"
                        "[option.flag-knob]\nrender = --a-flag\n\n[directive.maxnreg]\nrender = .maxnreg {}\n")
            cs = parse_control_set("space = ptxas-13\nmaxrregcount = 64\nflag-knob = on\nunlisted = 3\nk:maxnreg = 96\n")
            self.assertEqual(render_options(cs, d), ["--maxrregcount=64", "--a-flag", "--unlisted=3"])

    def test_the_real_space_file_when_the_tree_has_one(self):
        spaces = os.path.join(os.path.dirname(__file__), "..", "..", "spaces")
        cs = parse_control_set("opt-level = 1\ndef-load-cache = cg\n")
        self.assertEqual(render_options(cs, spaces), ["--opt-level=1", "--def-load-cache=cg"])


if __name__ == "__main__":
    unittest.main()
