"""The Python half of the table that holds ciq's C++ side and this package to
the same readings (test/vectors/cpp_python.json; the C++ half is
test/unit/cpp_python_test.cpp): control sets (refused, or their digest),
sets checked and rendered against spaces/ptxas-13.space as ciq-ptxas does
(refused, or the options it appends), and the bench server protocol: status
lines (garbled, or the status) and requests (refused, or their text)."""
import json
import os
import unittest

from ciq import protocol
from ciq.controls import ControlSetError, parse_control_set, render_options

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
with open(os.path.join(SOURCE, "test", "vectors", "cpp_python.json"), encoding="utf-8") as f:
    VECTORS = json.load(f)


def input_of(entry):
    """An entry's text as read from a file with surrogateescape (`hex`: any bytes)."""
    if "hex" in entry:
        return bytes.fromhex(entry["hex"]).decode("utf-8", errors="surrogateescape")
    return entry["text"]


class CppPythonTest(unittest.TestCase):
    def test_control_sets_are_refused_or_digested_alike(self):
        self.assertGreaterEqual(len(VECTORS["control_sets"]), 30)
        for e in VECTORS["control_sets"]:
            with self.subTest(e["name"]):
                if e.get("refused"):
                    with self.assertRaises(ControlSetError):
                        parse_control_set(input_of(e))
                else:
                    self.assertEqual(parse_control_set(input_of(e)).digest(), e["digest"])

    def test_sets_are_refused_or_rendered_as_ciq_ptxas_renders_them(self):
        spaces = os.path.join(SOURCE, "spaces")
        self.assertGreaterEqual(len(VECTORS["render"]), 20)
        for e in VECTORS["render"]:
            with self.subTest(e["name"]):
                cs = parse_control_set(input_of(e))
                if e.get("refused"):
                    with self.assertRaises(ControlSetError):
                        render_options(cs, spaces, "ptxas-13", allow_unsafe=e["allow_unsafe"])
                else:
                    self.assertEqual(render_options(cs, spaces, "ptxas-13", allow_unsafe=e["allow_unsafe"]), e["options"])

    def test_status_lines_are_garbled_or_read_alike(self):
        self.assertGreaterEqual(len(VECTORS["status_lines"]), 20)
        for e in VECTORS["status_lines"]:
            with self.subTest(e["rest"]):
                if e.get("garbled"):
                    with self.assertRaises(protocol.ProtocolError):
                        protocol.read_status(e["rest"], e["id"])
                else:
                    self.assertEqual(protocol.read_status(e["rest"], e["id"]), e["status"])

    def test_requests_are_refused_or_encoded_alike(self):
        self.assertGreaterEqual(len(VECTORS["requests"]), 5)
        for e in VECTORS["requests"]:
            with self.subTest(e["words"]):
                if e.get("refused"):
                    with self.assertRaises(protocol.ProtocolError):
                        protocol.encode_request(e["words"], int(e["id"]))
                else:
                    self.assertEqual(protocol.encode_request(e["words"], int(e["id"])), e["encoded"])


if __name__ == "__main__":
    unittest.main()
