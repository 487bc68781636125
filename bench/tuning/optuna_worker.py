"""Optuna's side of Skiff's bench/tuning: studies driven by ask/tell over JSON lines.

bench/tuning computes every objective in TypeScript, for Skiff's algorithms and Optuna's alike, so
this process only suggests: the benchmark opens a study, asks for trials, evaluates them itself and
tells the values back, in the same order it uses for Skiff. One request per line on stdin, one
answer per line on stdout:

  {"op": "hello", "warm": ["gp", ...]}   -> versions and threads; runs a short study per sampler
                                           named so that first-use costs (imports, torch's first
                                           kernels) are not charged to the first measured trial
  {"op": "open", "id": "k", "sampler": "tpe", "seed": 7, "space": [{"name", "low", "high", "log"}]}
  {"op": "ask", "id": "k", "n": 4}      -> {"trials": [{"number", "x": [...], "ms"}]}
  {"op": "tell", "id": "k", "number": 3, "value": 1.5}
  {"op": "close", "id": "k"}

"ms" is the wall time of study.ask() alone, measured here so that the pipe is not counted.
Errors answer {"error": "..."} and the process carries on.
"""

import json
import sys
import time
import traceback
import warnings

# the protocol owns stdout; anything a library prints goes to stderr
_out = sys.stdout
sys.stdout = sys.stderr

warnings.filterwarnings("ignore")

import optuna  # noqa: E402
from optuna.distributions import FloatDistribution  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.ERROR)


def set_threads():
    # Skiff's algorithms run on one thread; so does Optuna's GP here unless SKIFF_BENCH_TORCH_THREADS says otherwise
    import os

    import torch

    torch.set_num_threads(int(os.environ.get("SKIFF_BENCH_TORCH_THREADS", "1")))
    return torch


def make_sampler(name, seed):
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)
    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    raise ValueError(f"unknown sampler {name!r}")


class Study:
    def __init__(self, sampler, seed, space):
        self.study = optuna.create_study(direction="minimize", sampler=make_sampler(sampler, seed))
        self.names = [p["name"] for p in space]
        self.dists = {p["name"]: FloatDistribution(float(p["low"]), float(p["high"]), log=bool(p.get("log"))) for p in space}

    def ask(self, n):
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            trial = self.study.ask(self.dists)
            ms = (time.perf_counter() - t0) * 1000
            out.append({"number": trial.number, "x": [trial.params[k] for k in self.names], "ms": ms})
        return out

    def tell(self, number, value):
        self.study.tell(number, float(value))


studies = {}


def warm(samplers):
    space = [{"name": "a", "low": -1, "high": 1}, {"name": "b", "low": -1, "high": 1}]
    for name in samplers:
        s = Study(name, 0, space)
        for _ in range(14):
            t = s.ask(1)[0]
            s.tell(t["number"], sum(v * v for v in t["x"]))


def handle(req):
    op = req.get("op")
    if op == "hello":
        torch = set_threads()
        warm(req.get("warm", []))
        return {"optuna": optuna.__version__, "torch": torch.__version__, "threads": torch.get_num_threads()}
    if op == "open":
        studies[req["id"]] = Study(req["sampler"], int(req["seed"]), req["space"])
        return {}
    if op == "ask":
        return {"trials": studies[req["id"]].ask(int(req.get("n", 1)))}
    if op == "tell":
        studies[req["id"]].tell(int(req["number"]), req["value"])
        return {}
    if op == "close":
        studies.pop(req["id"], None)
        return {}
    raise ValueError(f"unknown op {op!r}")


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = handle(json.loads(line))
        except Exception as e:  # answer the error, keep serving
            traceback.print_exc()
            answer = {"error": f"{type(e).__name__}: {e}"}
        _out.write(json.dumps(answer) + "\n")
        _out.flush()


if __name__ == "__main__":
    main()
