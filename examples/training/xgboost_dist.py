"""Distributed XGBoost training with the collective (rabit) API, as an XGBoostJob runs it.

Reads the XGBoostJob environment: MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK (the master is rank 0
and also runs the tracker). Each rank trains on its shard (every WORLD_SIZE-th row) of scikit-learn's
breast-cancer data set; the trees are built together (histograms are allreduced), so every rank ends
with the same model. By hand, without Skiff (three shells, or with & in one):

    MASTER_ADDR=127.0.0.1 MASTER_PORT=9091 WORLD_SIZE=3 RANK=0 python3 examples/training/xgboost_dist.py &
    MASTER_ADDR=127.0.0.1 MASTER_PORT=9091 WORLD_SIZE=3 RANK=1 python3 examples/training/xgboost_dist.py &
    MASTER_ADDR=127.0.0.1 MASTER_PORT=9091 WORLD_SIZE=3 RANK=2 python3 examples/training/xgboost_dist.py

Prints the held-out log-loss and accuracy; exits 1 when they are not sane or the ranks disagree.
"""
import hashlib
import os
import sys

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from xgboost import collective
from xgboost.tracker import RabitTracker


def main() -> int:
    addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = int(os.environ.get("MASTER_PORT", "9091"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    rounds = int(os.environ.get("ROUNDS", "20"))

    tracker = None
    if rank == 0:
        # the tracker listens on every address of this Pod; workers reach it as MASTER_ADDR
        tracker = RabitTracker(n_workers=world, host_ip="0.0.0.0", port=port)
        tracker.start()
        print(f"rank 0: tracker on port {port} for {world} workers", flush=True)

    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    shard = slice(rank, None, world)
    dtrain = xgb.DMatrix(X_train[shard], label=y_train[shard])
    dtest = xgb.DMatrix(X_test, label=y_test)

    args = {
        "dmlc_communicator": "rabit",
        "dmlc_tracker_uri": addr,
        "dmlc_tracker_port": port,
        "dmlc_task_id": str(rank),
        "dmlc_retry": 10,
        "dmlc_timeout": 120,
    }
    with collective.CommunicatorContext(**args):
        assert collective.get_world_size() == world, (collective.get_world_size(), world)
        params = {"objective": "binary:logistic", "eval_metric": "logloss", "max_depth": 3, "eta": 0.3, "tree_method": "hist", "nthread": 1}
        result: dict = {}
        booster = xgb.train(params, dtrain, num_boost_round=rounds, evals=[(dtest, "test")], evals_result=result, verbose_eval=False)
        digest = hashlib.sha256(booster.save_raw("json")).hexdigest()[:16]
        # every rank must hold the same model: compare digests through the collective
        mine = np.frombuffer(bytes.fromhex(digest), dtype=np.uint8).astype(np.float64)
        agree = bool(np.array_equal(collective.allreduce(mine, collective.Op.MAX), collective.allreduce(mine, collective.Op.MIN)))

    losses = result["test"]["logloss"]
    pred = booster.predict(dtest)
    acc = float(((pred > 0.5) == y_test).mean())
    print(f"rank {rank}/{world}: logloss {losses[0]:.4f} -> {losses[-1]:.4f} after {rounds} rounds, accuracy {acc:.4f}, model {digest}, ranks agree: {agree}", flush=True)
    if tracker is not None:
        tracker.wait_for()
    if rank == 0:
        print(f"final test-logloss={losses[-1]:.4f} accuracy={acc:.4f}", flush=True)
    sane = losses[-1] < losses[0] and losses[-1] < 0.3 and acc > 0.9
    return 0 if sane and agree else 1


if __name__ == "__main__":
    sys.exit(main())
