"""The seed example of ciq.tune (test/lit/python-tune.test): minimise x^2 + y,
x in [1, 20] step 0.5, y in {1, 2, 3}, z a literal knocked out half the time.
The objective raises for y = 3 and x > 10, to show such candidates become
invalid with the exception as the reason. Usage: python_tune_seed.py RUN_DIR CALLS_LOG [--quiet]"""
import os
import sys

import ciq

calls = open(sys.argv[2], "w")


def objective(c):
    calls.write(f"{os.getpid()} {sorted(c.params.items())}\n")
    calls.flush()
    x, y = c.params["x"], c.params["y"]
    if y == 3 and x > 10:
        raise ValueError(f"y = 3 with x = {x} is out of the model's range")
    return x ** 2 + y


result = ciq.tune(objective, budget=60, out=sys.argv[1], seed=2,
                  params={"x": ciq.Range(1, 20, 0.5, default=10), "y": ciq.Choice(1, 2, 3),
                          "z": ciq.Literal(7, knockout=0.5)}, quiet="--quiet" in sys.argv)
print("best", result.best, "params", result.best_params, "baseline", result.baseline)
print("verdict", result.verdict, "shipped", result.shipped)
print("rows", len(result.rows), "invalid", sum(r["status"] == "invalid" for r in result.rows))
print("server pid", os.getpid())
