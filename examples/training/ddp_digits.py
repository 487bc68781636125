"""Data-parallel training of a small MLP on scikit-learn's digits with torch DistributedDataParallel
(gloo, CPU), as a PyTorchJob runs it.

Reads the usual environment: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE (set by a PyTorchJob, by
torchrun, or by hand). Each rank trains on its shard (DistributedSampler); DDP averages gradients,
so every rank ends with the same weights, which the program checks by all-gathering a checksum of
them. Rank 0 saves the model to MODEL_PATH (or --model-path) when one is given.

    python3 examples/training/ddp_digits.py                          # one process
    torchrun --nproc_per_node 3 examples/training/ddp_digits.py       # three, by hand

Settings: EPOCHS (default 8), BATCH_SIZE (32), LR (0.05), STEPS (stop after this many steps per
epoch; for benchmarks), READY_DIR (each rank writes the time it joined to READY_DIR/rank-N). Prints one `epoch N loss L` line per epoch (the mean over all ranks), then
`steps/s`, the checksum and `weights identical on all N ranks`. Exits 1 when the weights differ or
the loss did not fall.
"""
import argparse
import hashlib
import os
import sys
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from sklearn.datasets import load_digits
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def checksum(model: nn.Module) -> str:
    h = hashlib.sha256()
    for p in model.state_dict().values():
        h.update(p.detach().cpu().numpy().tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-path", default=os.environ.get("MODEL_PATH", ""))
    ap.add_argument("--epochs", type=int, default=int(os.environ.get("EPOCHS", "8")))
    ap.add_argument("--batch-size", type=int, default=int(os.environ.get("BATCH_SIZE", "32")))
    ap.add_argument("--lr", type=float, default=float(os.environ.get("LR", "0.05")))
    ap.add_argument("--steps", type=int, default=int(os.environ.get("STEPS", "0")), help="steps per epoch (0: the whole shard)")
    a = ap.parse_args()

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world, timeout=timedelta(seconds=120))
    print(f"rank {rank}/{world} joined via {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}", flush=True)
    if os.environ.get("READY_DIR"):  # benchmarks: when each rank had joined
        with open(os.path.join(os.environ["READY_DIR"], f"rank-{rank}"), "w") as f:
            f.write(f"{time.time()}\n")

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    data = TensorDataset(torch.from_numpy(X), torch.from_numpy(y.astype(np.int64)))
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=a.batch_size, sampler=sampler)

    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    model = DDP(nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    losses = []
    steps = 0
    start = time.perf_counter()
    for epoch in range(a.epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros(2)
        for i, (xb, yb) in enumerate(loader):
            if a.steps and i >= a.steps:
                break
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            total += torch.tensor([loss.item() * len(yb), len(yb)])
            steps += 1
        dist.all_reduce(total)
        mean = (total[0] / total[1]).item()
        losses.append(mean)
        if rank == 0:
            print(f"epoch {epoch} loss {mean:.4f}", flush=True)
    elapsed = time.perf_counter() - start

    with torch.no_grad():
        acc = (model(torch.from_numpy(X)).argmax(1).numpy() == y).mean()
    mine = checksum(model.module)
    sums: list = [None] * world
    dist.all_gather_object(sums, mine)
    same = all(s == mine for s in sums)
    print(f"rank {rank}: {steps / elapsed:.1f} steps/s, accuracy {acc:.3f}, weights {mine}", flush=True)
    if rank == 0:
        print(f"steps/s {steps / elapsed:.2f} ({steps} steps in {elapsed:.2f}s)", flush=True)
        print(f"weights identical on all {world} ranks: {same} ({', '.join(sums)})", flush=True)
        if a.model_path:
            os.makedirs(os.path.dirname(os.path.abspath(a.model_path)), exist_ok=True)
            torch.save(model.module.state_dict(), a.model_path)
            print(f"model saved to {a.model_path} (checksum {mine})", flush=True)
    dist.destroy_process_group()
    fell = len(losses) < 2 or losses[-1] < losses[0]
    if rank == 0 and len(losses) >= 2:
        print(f"loss fell: {fell} ({losses[0]:.4f} -> {losses[-1]:.4f})", flush=True)
    code = 0 if same and fell else 1
    # Leave without tearing anything down: with torch 1.13 on Python 3.11, freeing the DDP model (its
    # reducer joins a gloo thread that may be waiting for the GIL this thread holds) can hang for good.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
