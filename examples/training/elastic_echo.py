"""A torchrun worker for an elastic PyTorchJob: joins the process group torchrun set up (c10d
rendezvous; torchrun reads its flags from the PET_* variables the job sets), prints who it is and
checks an allreduce.

    torchrun --nnodes 1 --nproc_per_node 2 examples/training/elastic_echo.py      # by hand
Exits 1 when the allreduce is wrong.
"""
import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist


def main() -> int:
    dist.init_process_group("gloo", timeout=timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    env = {k: os.environ.get(k, "") for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT")}
    print(f"rank {rank}/{world} on {socket.gethostname()}: {' '.join(f'{k}={v}' for k, v in env.items())}", flush=True)
    t = torch.ones(1) * (rank + 1)
    dist.all_reduce(t)
    expected = world * (world + 1) / 2
    ok = t.item() == expected
    print(f"rank {rank}: allreduce {t.item():g} expected {expected:g} {'OK' if ok else 'WRONG'}", flush=True)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
