"""Checks the coordinator environment of a JAXJob or a PaddleJob, without JAX or Paddle: the process
the variables name as coordinator listens on its port, every process connects to it and to the
coordinator only, and the coordinator waits until it has heard from all of them.

  JAXJob:    COORDINATOR_ADDRESS (a host, no port), COORDINATOR_PORT, NUM_PROCESSES, PROCESS_ID
  PaddleJob: PADDLE_MASTER (host:port; the coordinator's own is its Pod IP), PADDLE_NNODES, POD_IP

By hand:  COORDINATOR_ADDRESS=127.0.0.1 COORDINATOR_PORT=6666 NUM_PROCESSES=2 PROCESS_ID=0 python3 examples/training/coordinator_check.py &
          COORDINATOR_ADDRESS=127.0.0.1 COORDINATOR_PORT=6666 NUM_PROCESSES=2 PROCESS_ID=1 python3 examples/training/coordinator_check.py
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rendezvous import Mesh  # noqa: E402


def main() -> int:
    timeout = float(os.environ.get("CHECK_TIMEOUT", "60"))
    if "PADDLE_MASTER" in os.environ:
        host, port = os.environ["PADDLE_MASTER"].rsplit(":", 1)
        n = int(os.environ["PADDLE_NNODES"])
        me_ip = os.environ.get("POD_IP", "127.0.0.1")
        # the coordinator's PADDLE_MASTER names its own IP ($(POD_IP_DUMMY)); others name its Pod
        coordinator = host in (me_ip, "127.0.0.1") if "POD_IP" in os.environ else os.environ.get("PADDLE_RANK", "0") == "0"
        me = "coordinator" if coordinator else f"node@{socket.gethostname()}"
        kind = f"paddle job {os.environ.get('PADDLE_JOB_ID', '')} nnodes={n}"
    else:
        host, port = os.environ["COORDINATOR_ADDRESS"], os.environ["COORDINATOR_PORT"]
        n = int(os.environ["NUM_PROCESSES"])
        pid = int(os.environ["PROCESS_ID"])
        coordinator = pid == 0
        me = "coordinator" if coordinator else f"process-{pid}"
        kind = f"jax process {pid}/{n}"
    print(f"{me}: {kind}, coordinator at {host}:{port}", flush=True)
    start = time.time()
    if coordinator:
        # it waits for everyone; each peer's own name is unknown to it, so count them
        heard = Counter(int(port), n - 1, timeout).run()
        ok = heard == n - 1
        print(f"coordinator: heard from {heard}/{n - 1} processes {'OK' if ok else 'FAILED'}", flush=True)
    else:
        ok = Mesh(me, 0, {"coordinator": f"{host}:{port}"}, timeout)._reach("coordinator", f"{host}:{port}", start + timeout)
        print(f"{me}: {'OK' if ok else 'FAILED'}", flush=True)
    return 0 if ok else 1


class Counter:
    """Accepts connections until `want` distinct peers said their names (or time runs out)."""

    def __init__(self, port: int, want: int, timeout: float):
        self.port, self.want, self.timeout = port, want, timeout

    def run(self) -> int:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", self.port))
        srv.listen(64)
        names: set = set()
        deadline = time.time() + self.timeout
        while len(names) < self.want and time.time() < deadline:
            srv.settimeout(max(0.1, min(1.0, deadline - time.time())))
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                names.add(conn.recv(256).decode().strip())
                conn.sendall(b"ok\n")
        srv.close()
        return len(names)


if __name__ == "__main__":
    sys.exit(main())
