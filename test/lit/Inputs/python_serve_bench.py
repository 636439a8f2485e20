"""A benchmark module for `python3 -m ciq.serve python_serve_bench:setup`
(test/lit/python-serve.test). setup() runs once per server and appends
"setup <pid>" to $SERVE_LOG; bench returns (x - 7)^2 + 1 (best x = 7),
raises for x = 3, returns nan for x = 5 and prints to stdout (which must
not reach the tuner); check says x = 9 is a wrong answer."""
import os


def setup():
    log = open(os.environ["SERVE_LOG"], "a")
    log.write(f"setup {os.getpid()}\n")
    log.flush()

    class Bench:
        def bench(self, c):
            x = c.params["x"]
            print(f"ciq-value: -1000 (a stray print for x = {x})")
            log.write(f"bench {os.getpid()} x={x}\n")
            log.flush()
            if x == 3:
                raise RuntimeError("Triton compilation failed (pretend)")
            if x == 5:
                return float("nan")
            return (x - 7) ** 2 + 1

        def check(self, c):
            if c.params["x"] == 9:
                raise AssertionError("max abs error 0.25 > 1e-3")

    return Bench()
