"""ciq.protocol: requests and answers as ciq-tuner --bench-server writes and reads them."""
import io
import unittest

from ciq import protocol


class ProtocolTest(unittest.TestCase):
    def test_requests_are_an_id_then_words_then_an_empty_line(self):
        stream = io.StringIO("ciq-request: 7\nbench\n--controls=/r/c\nx=1\n\nciq-request: 8\ncheck\n\nbench\n\n")
        self.assertEqual(protocol.read_request(stream), ("7", ["bench", "--controls=/r/c", "x=1"]))
        self.assertEqual(protocol.read_request(stream), ("8", ["check"]))
        self.assertEqual(protocol.read_request(stream), (None, ["bench"]))  # a tuner before request ids
        self.assertIsNone(protocol.read_request(stream))

    def test_encode_round_trips_and_refuses_what_the_tuner_refuses(self):
        words = ["bench", "--workdir=/a dir/e", "x=1.5"]
        self.assertEqual(protocol.read_request(io.StringIO(protocol.encode_request(words, 3))), ("3", words))
        with self.assertRaises(protocol.ProtocolError):
            protocol.encode_request(["bench", ""], 1)

    def test_answers_end_with_the_status_line_echoing_the_request(self):
        self.assertEqual(protocol.format_answer(["ciq-value: 2"], 0, "12"), "ciq-value: 2\nciq-status: 12 0\n")
        # The tuner takes the first line saying "error" as the reason.
        self.assertEqual(protocol.error_answer("benchmark raised\nValueError", 4),
                         "ciq-error: benchmark raised ValueError\nciq-status: 4 1\n")

    def test_a_status_line_is_read_for_its_own_request_only(self):
        self.assertEqual(protocol.read_status("12 3", 12), 3)
        for bad in ("0", "11 0", "12 maybe", "12 0 0", "", "12 -1"):
            with self.assertRaises(protocol.ProtocolError):
                protocol.read_status(bad, 12)

    def test_values_and_the_metrics_that_read_them_back(self):
        self.assertEqual(protocol.value_lines(2), ["ciq-value: 2"])
        self.assertEqual(protocol.value_lines(0.25), ["ciq-value: 0.25"])
        self.assertEqual(protocol.value_lines([1.5, -3]), ["ciq-value-0: 1.5", "ciq-value-1: -3"])
        self.assertEqual(protocol.value_lines({"ms": 1e-05}), ["ciq-value-ms: 1e-05"])
        self.assertEqual(protocol.metric_patterns(1), ["ciq-value: ([-+0-9.eE]+)"])
        self.assertEqual(protocol.metric_patterns(2)[1], "ciq-value-1: ([-+0-9.eE]+)")
        for bad in (float("nan"), float("inf"), 1e400, 10**400, -10**400, "fast", "3.5", None, True):
            with self.assertRaises(ValueError):
                protocol.value_lines(bad)

    def test_the_number_of_values_is_the_number_of_objectives(self):
        self.assertEqual(protocol.value_lines([2.5], expected=1), ["ciq-value: 2.5"])
        self.assertEqual(protocol.value_lines((1, 2), expected=2), ["ciq-value-0: 1", "ciq-value-1: 2"])
        for result, expected in ((3, 2), ((1, 2), 1), ((1, 2, 3), 2)):
            with self.assertRaisesRegex(ValueError, r"returned \d value\(s\) .*; the tuning has \d objective"):
                protocol.value_lines(result, expected=expected)

    def test_request_words_name_controls_workdir_and_parameters(self):
        r = protocol.parse_request(["check", "--controls=/r/e/candidate.controls", "--workdir=/r/e", "x=1", "z="])
        self.assertEqual((r.action, r.controls_path, r.workdir), ("check", "/r/e/candidate.controls", "/r/e"))
        self.assertEqual(r.params, {"x": "1"})  # z= : knocked out, absent
        for bad in ([], ["run"], ["bench", "--x", "3"], ["bench", "=3"]):
            with self.assertRaises(protocol.ProtocolError):
                protocol.parse_request(bad)

    def test_template_is_what_the_tuner_fills_in(self):
        self.assertEqual(protocol.request_template("bench", ["x", "y"]),
                         "bench --controls={controls} --workdir={workdir} x={param:x} y={param:y}")


if __name__ == "__main__":
    unittest.main()
