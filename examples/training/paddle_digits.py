"""Data-parallel training of a small MLP on scikit-learn's digits with Paddle's collective mode (gloo on
CPU), as a PaddleJob runs it: each replica starts

    python -m paddle.distributed.launch examples/training/paddle_digits.py

and the launcher meets the others through the PaddleJob's PADDLE_MASTER, PADDLE_NNODES and
PADDLE_JOB_ID (and POD_IP, the address it advertises), then starts this program with
PADDLE_TRAINER_ID, PADDLE_TRAINERS_NUM and PADDLE_TRAINER_ENDPOINTS, which init_parallel_env() reads.
Nothing here names a peer.

Each rank seeds its own initial weights differently and trains on its own shard: paddle.DataParallel
broadcasts rank 0's weights and all-reduces the gradients, so every rank ends with the same weights,
which the program checks by all-gathering a checksum of them. Rank 0 prints the mean loss over all
ranks per epoch (`epoch N loss L`) and saves the weights to MODEL_PATH when one is given.

By hand, two nodes on one machine:

    POD_IP=127.0.0.1 PADDLE_MASTER=127.0.0.1:36543 PADDLE_NNODES=2 python -m paddle.distributed.launch examples/training/paddle_digits.py &
    POD_IP=127.0.0.2 PADDLE_MASTER=127.0.0.1:36543 PADDLE_NNODES=2 python -m paddle.distributed.launch examples/training/paddle_digits.py

Settings: EPOCHS (default 8), BATCH_SIZE (32), LR (0.05), MODEL_PATH, FAIL (raise this message
before training: the job's failure path). Exits 1 when the weights differ or the loss did not fall.
"""
import hashlib
import os
import sys
import time

import numpy as np
import paddle
import paddle.distributed as dist
from paddle import nn
from sklearn.datasets import load_digits


def checksum(model: nn.Layer) -> str:
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(p.numpy().tobytes())
    return h.hexdigest()[:16]


def main() -> int:
    epochs = int(os.environ.get("EPOCHS", "8"))
    batch = int(os.environ.get("BATCH_SIZE", "32"))
    lr = float(os.environ.get("LR", "0.05"))
    model_path = os.environ.get("MODEL_PATH", "")

    paddle.set_device("cpu")
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    print(f"rank {rank}/{world} joined: trainer endpoints {os.environ.get('PADDLE_TRAINER_ENDPOINTS', '')}", flush=True)
    if os.environ.get("FAIL"):
        raise RuntimeError(os.environ["FAIL"])

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    y = y.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(X))
    test, train = order[:297], order[297:]
    shard = train[rank::world]

    # different initial weights on every rank: DataParallel's broadcast of rank 0's is what makes them one
    paddle.seed(1000 + rank)
    model = paddle.DataParallel(nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)))
    opt = paddle.optimizer.Momentum(learning_rate=lr, momentum=0.9, parameters=model.parameters())
    loss_fn = nn.CrossEntropyLoss()

    losses = []
    steps = 0
    start = time.perf_counter()
    rng = np.random.default_rng(1 + rank)
    for epoch in range(epochs):
        idx = rng.permutation(shard)
        total = np.zeros(2, dtype=np.float32)
        # the same number of steps on every rank: each step's all-reduce needs all of them
        n_steps = len(train) // world // batch
        for i in range(n_steps):
            b = idx[i * batch:(i + 1) * batch]
            xb, yb = paddle.to_tensor(X[b]), paddle.to_tensor(y[b])
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            opt.clear_grad()
            total += np.array([float(loss) * len(b), len(b)], dtype=np.float32)
            steps += 1
        t = paddle.to_tensor(total)
        dist.all_reduce(t)
        mean = float(t[0] / t[1])
        losses.append(mean)
        if rank == 0:
            print(f"epoch {epoch} loss {mean:.4f}", flush=True)
    elapsed = time.perf_counter() - start

    model.eval()
    with paddle.no_grad():
        acc = float((model(paddle.to_tensor(X[test])).argmax(1).numpy() == y[test]).mean())
    mine = checksum(model._layers)
    sums: list = []
    dist.all_gather_object(sums, mine)
    same = all(s == mine for s in sums)
    print(f"rank {rank}: {steps / elapsed:.1f} steps/s, held-out accuracy {acc:.3f}, weights {mine}", flush=True)
    fell = len(losses) >= 2 and losses[-1] < losses[0]
    if rank == 0:
        print(f"weights identical on all {world} ranks: {same} ({', '.join(sums)})", flush=True)
        print(f"loss fell: {fell} ({losses[0]:.4f} -> {losses[-1]:.4f}), held-out accuracy {acc:.3f}", flush=True)
        if model_path:
            os.makedirs(os.path.dirname(os.path.abspath(model_path)), exist_ok=True)
            paddle.save(model._layers.state_dict(), model_path)
            print(f"model saved to {model_path} (checksum {mine})", flush=True)
    return 0 if same and fell else 1


if __name__ == "__main__":
    sys.exit(main())
