"""Checks a TFJob's TF_CONFIG the way a TensorFlow cluster would use it, without TensorFlow: each
replica listens on its own address from TF_CONFIG (cluster[task.type][task.index]) and connects to
every address in the cluster, itself included, telling each who it is. It is done once it reached all
of them and every other replica reached it.

By hand (two shells):
    TF_CONFIG='{"cluster":{"worker":["127.0.0.1:2222","127.0.0.1:2223"]},"task":{"type":"worker","index":0}}' python3 examples/training/tf_config_check.py
    TF_CONFIG='{"cluster":{"worker":["127.0.0.1:2222","127.0.0.1:2223"]},"task":{"type":"worker","index":1}}' python3 examples/training/tf_config_check.py
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rendezvous import Mesh  # noqa: E402


def main() -> int:
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        print("TF_CONFIG is not set", flush=True)
        return 1
    conf = json.loads(raw)
    cluster, task = conf["cluster"], conf["task"]
    me = f"{task['type']}:{task['index']}"
    peers = {f"{t}:{i}": addr for t, addrs in sorted(cluster.items()) for i, addr in enumerate(addrs)}
    print(f"{me}: TF_CONFIG has {len(peers)} tasks: {' '.join(f'{k}={v}' for k, v in peers.items())}", flush=True)
    own = peers[me]
    port = int(own.rsplit(":", 1)[1])
    ok = Mesh(me, port, peers, timeout=float(os.environ.get("CHECK_TIMEOUT", "60"))).run()
    print(f"{me}: {'reached every task and was reached by every task' if ok else 'FAILED'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
