"""Allreduce across MPI ranks (mpi4py): every rank contributes its rank, all must get 0+1+...+(N-1).

Runs under any MPI launcher:
    mpirun -np 4 python3 examples/training/mpi_allreduce.py
and as the launcher of examples/training/mpijob-v2beta1.yaml (mpirun over the worker Pods).
Exits 1 when a rank sees the wrong sum.
"""
import socket
import sys

from mpi4py import MPI


def main() -> int:
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    host = socket.gethostname()
    total = comm.allreduce(rank, op=MPI.SUM)
    expected = size * (size - 1) // 2
    hosts = comm.gather(host, root=0)
    print(f"rank {rank}/{size} on {host}: allreduce sum={total} expected={expected}", flush=True)
    if rank == 0:
        print(f"hosts: {','.join(sorted(set(hosts or [])))}", flush=True)
    ok = comm.allreduce(1 if total == expected else 0, op=MPI.MIN)
    if rank == 0:
        print("allreduce OK" if ok else "allreduce WRONG", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
