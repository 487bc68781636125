"""A JAXJob replica running real jax.distributed on CPU: it joins the job's processes through the
coordinator the Training Operator's variables name, then sums every process's id across processes
with a cross-process collective (gloo), and checks the result.

  COORDINATOR_ADDRESS (a host, no port), COORDINATOR_PORT, NUM_PROCESSES, PROCESS_ID

By hand:  COORDINATOR_ADDRESS=127.0.0.1 COORDINATOR_PORT=6666 NUM_PROCESSES=2 PROCESS_ID=0 python3 examples/training/jax_psum.py &
          COORDINATOR_ADDRESS=127.0.0.1 COORDINATOR_PORT=6666 NUM_PROCESSES=2 PROCESS_ID=1 python3 examples/training/jax_psum.py
"""
import os
import sys

import jax

# collectives between CPU processes go through gloo (the default CPU client has none)
jax.config.update("jax_cpu_collectives_implementation", "gloo")

import jax.numpy as jnp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402


def main() -> int:
    host, port = os.environ["COORDINATOR_ADDRESS"], os.environ["COORDINATOR_PORT"]
    n = int(os.environ["NUM_PROCESSES"])
    pid = int(os.environ["PROCESS_ID"])
    print(f"jax process {pid}/{n}: coordinator at {host}:{port}", flush=True)
    jax.distributed.initialize(
        coordinator_address=f"{host}:{port}",
        num_processes=n,
        process_id=pid,
        initialization_timeout=int(os.environ.get("JAX_INIT_TIMEOUT", "120")),
    )
    print(f"jax process {jax.process_index()}/{jax.process_count()}: "
          f"{jax.local_device_count()} local of {jax.device_count()} devices", flush=True)

    # every process contributes its own id; the gathered array is the same on all of them
    gathered = multihost_utils.process_allgather(jnp.array([pid], dtype=jnp.int32))
    ids = sorted(int(x) for x in jnp.ravel(gathered))
    # and a psum over one device per process, through pmap across every device of the job
    summed = jax.pmap(lambda x: jax.lax.psum(x, "p"), axis_name="p")(jnp.full((jax.local_device_count(),), pid, dtype=jnp.int32))
    psum = int(summed[0])

    expected = n * (n - 1) // 2
    ok = ids == list(range(n)) and psum == expected * jax.local_device_count()
    print(f"jax process {pid}/{n}: allgather ids {ids}, psum of process ids {psum} expected {expected * jax.local_device_count()} "
          f"{'OK' if ok else 'FAILED'}", flush=True)
    jax.distributed.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
