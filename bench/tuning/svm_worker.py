"""The real task of Skiff's bench/tuning: an RBF SVM on scikit-learn's digits, 3-fold cross-validated.

One request per line on stdin, {"C": 1.0, "gamma": 0.001}; one answer per line on stdout,
{"value": 1 - mean accuracy, "ms": time of the cross-validation}
(a failure answers {"error": "..."}). The data loads once; the
folds are scikit-learn's default (stratified, unshuffled), so a point always scores the same and a
repeated point is answered from memory.
"""

import json
import sys
import time

_out = sys.stdout
sys.stdout = sys.stderr

from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import cross_val_score  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

X, y = load_digits(return_X_y=True)
seen = {}


def evaluate(c, gamma):
    key = (c, gamma)
    if key not in seen:
        seen[key] = 1.0 - float(cross_val_score(SVC(C=c, gamma=gamma), X, y, cv=3).mean())
    return seen[key]


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            t0 = time.perf_counter()
            err = evaluate(float(req["C"]), float(req["gamma"]))
            answer = {"value": err, "ms": (time.perf_counter() - t0) * 1000}
        except Exception as e:
            answer = {"error": f"{type(e).__name__}: {e}"}
        _out.write(json.dumps(answer) + "\n")
        _out.flush()


if __name__ == "__main__":
    main()
