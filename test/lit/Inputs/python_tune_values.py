"""ciq.tune(quiet=True) with an objective whose values are not finite
numbers (test/lit/python-tune-values.test): (x - 7)^2 + 1, but 10**400 for
x = 2, 1e400 (inf) for x = 3, nan for x = 4 and -inf for x = 5.
Usage: python_tune_values.py RUN_DIR"""
import sys

import ciq

odd = {2: 10**400, 3: 1e400, 4: float("nan"), 5: float("-inf")}


def objective(c):
    x = c.params["x"]
    return odd.get(x, (x - 7) ** 2 + 1)


result = ciq.tune(objective, budget=14, out=sys.argv[1], seed=2, verify_runs=3,
                  params={"x": ciq.Range(1, 14, 1, default=12)}, quiet=True)
print("best", result.best, "params", result.best_params, "baseline", result.baseline)
for row in sorted(result.rows, key=lambda r: int(r["candidate"].split("=")[1])):
    if row["status"] != "ok":
        print(row["candidate"], row["status"], row["reason"])
