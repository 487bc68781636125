"""The serving benchmark's baseline: a scikit-learn model behind KServe's own Python model server
(the `kserve` package from PyPI, run from .venv-kserve; see bench/setup-serving.sh).

    python kserve_sklearn.py --model_name NAME --model_dir DIR --http_port PORT [--quiet]

A `kserve.Model` that loads DIR's joblib file in load() and answers V1 requests,
{"instances": rows} -> {"predictions": labels}, in predict(). The server runs one uvicorn worker
(KServe's default; one process, as one Skiff model-server replica) with gRPC off so that it takes no
port or CPU. --quiet turns off the log lines KServe writes per request (uvicorn's access log and the
kserve.trace timing lines), so the baseline is not slowed down by logging that Skiff's server does not do.
"""

import argparse
import glob
import logging
import os
import sys
import time
from importlib.metadata import version

import joblib
import numpy as np
import kserve
from kserve import Model, ModelServer


class SklearnDigits(Model):
    def __init__(self, name, model_dir):
        super().__init__(name)
        self.model_dir = model_dir
        self.model = None
        self.ready = False

    def load(self):
        t0 = time.perf_counter()
        files = [f for f in glob.glob(os.path.join(self.model_dir, "*")) if f.endswith((".joblib", ".pkl"))]
        if len(files) != 1:
            raise RuntimeError(f"expected one .joblib file in {self.model_dir}, found {len(files)}")
        self.model = joblib.load(files[0])
        self.ready = True
        print(f"kserve-baseline: loaded {os.path.basename(files[0])} in {(time.perf_counter() - t0) * 1000:.0f} ms", flush=True)
        return self.ready

    def predict(self, payload, headers=None):
        instances = payload["instances"] if isinstance(payload, dict) else None
        if not isinstance(instances, list):
            raise kserve.errors.InvalidInput('expected {"instances": [...]}')
        result = self.model.predict(np.asarray(instances))
        return {"predictions": result.tolist()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", required=True)
    p.add_argument("--model_dir", required=True)
    p.add_argument("--http_port", type=int, required=True)
    p.add_argument("--quiet", action="store_true")
    args, _ = p.parse_known_args()
    model = SklearnDigits(args.model_name, args.model_dir)
    model.load()
    server = ModelServer(http_port=args.http_port, workers=1, enable_grpc=False, enable_latency_logging=not args.quiet)
    if args.quiet:
        logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
        logging.getLogger("kserve.trace").setLevel(logging.WARNING)
    print(f"kserve-baseline: kserve {version('kserve')}, "
          f"python {sys.version.split()[0]}, 1 worker, gRPC off, port {args.http_port}", flush=True)
    server.start([model])


if __name__ == "__main__":
    main()
