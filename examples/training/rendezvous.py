"""A tiny all-to-all connectivity check, used by tf_config_check.py and coordinator_check.py: each
participant listens on a port (every address of its host or Pod) and connects to every peer, sending
its name; it is done when it has reached every peer and has been reached by every other one."""
import socket
import threading
import time


class Mesh:
    def __init__(self, me: str, port: int, peers: dict, timeout: float = 60.0):
        self.me, self.port, self.peers, self.timeout = me, port, peers, timeout
        self.heard: set = set()
        self.lock = threading.Lock()
        self.reached_all = threading.Event()

    def _serve(self, srv: socket.socket, deadline: float) -> None:
        others = set(self.peers) - {self.me}
        while time.time() < deadline:
            with self.lock:
                # keep answering until this side is done too: it may still be reaching itself
                if others <= self.heard and self.reached_all.is_set():
                    return
            srv.settimeout(max(0.1, min(1.0, deadline - time.time())))
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                name = conn.recv(256).decode().strip()
                conn.sendall(b"ok\n")
                with self.lock:
                    self.heard.add(name)

    def _reach(self, name: str, addr: str, deadline: float) -> bool:
        host, port = addr.rsplit(":", 1)
        while time.time() < deadline:
            try:
                with socket.create_connection((host, int(port)), timeout=2) as s:
                    s.sendall(self.me.encode() + b"\n")
                    if s.recv(16).startswith(b"ok"):
                        print(f"{self.me}: reached {name} at {addr}", flush=True)
                        return True
            except OSError:
                time.sleep(0.2)
        print(f"{self.me}: could not reach {name} at {addr}", flush=True)
        return False

    def run(self) -> bool:
        deadline = time.time() + self.timeout
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", self.port))
        srv.listen(64)
        server = threading.Thread(target=self._serve, args=(srv, deadline), daemon=True)
        server.start()
        reached = all([self._reach(n, a, deadline) for n, a in self.peers.items()])
        self.reached_all.set()
        server.join(max(0.0, deadline - time.time()))
        srv.close()
        with self.lock:
            missing = set(self.peers) - {self.me} - self.heard
        if missing:
            print(f"{self.me}: never reached by {', '.join(sorted(missing))}", flush=True)
        return reached and not missing
