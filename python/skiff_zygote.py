"""A warm Python for lightweight kfp components: imports the kfp executor once, then forks a child
per task, so a task starts in milliseconds instead of paying for the interpreter and its imports.

usage: python skiff_zygote.py SOCKET [IDLE_SECONDS]

Protocol on the Unix socket (one connection per task), spoken by native/skiff-pyfork.c:
  client -> zygote: 4-byte big-endian length, then NUL-separated fields
                    argc, argv..., envc, env (KEY=VALUE)..., cwd
                    with the client's stdin, stdout and stderr passed as SCM_RIGHTS
  zygote -> client: "P" + 4-byte pid once the child runs
  client -> zygote: "K" + 4-byte signal number, for every signal the client receives
  zygote -> client: "X" + 4-byte wait status when the child ends
If the client goes away, the child's process group is killed. The zygote exits after IDLE_SECONDS
without a connection or a running child.
"""
import array
import gc
import os
import selectors
import signal
import socket
import struct
import sys

os.environ["_KFP_RUNTIME"] = "true"

import kfp.dsl.executor_main  # noqa: E402,F401  (the point: imported once, before any fork)


def warm():
    """Does once, before any fork, the first-time work every task's executor would repeat: the
    modules imported on first use (locale, by gettext, by argparse), the regular expressions argparse
    and logging compile, enum's and inspect's caches (inspect.signature of an annotated function).
    What it leaves behind are caches only: no handler, logger or parser outlives it."""
    import argparse
    import inspect
    import json
    import locale  # noqa: F401  gettext imports it the first time argparse asks for a message
    import logging

    def component(x: int, xs: list, name: str = "", flag: bool = False) -> int:
        return x

    inspect.signature(component)
    parser = argparse.ArgumentParser(description="warm")
    parser.add_argument("--component_module_path", type=str, help="h")
    parser.add_argument("--function_to_execute", type=str, required=True, help="h")
    parser.parse_known_args(["--function_to_execute", "f", "--other", "x"])
    logging.Formatter("[KFP Executor %(asctime)s %(levelname)s]: %(message)s").format(
        logging.LogRecord("warm", logging.INFO, __file__, 0, "m", None, None)
    )
    json.dumps(json.loads('{"inputs": {"parameterValues": {"x": 1}}}'), indent=4)


warm()


def module_code(name):
    """What `python -m NAME` runs, found and loaded once: its spec and code object (runpy's own
    lookup), so that a task does not search sys.path and read and unmarshal the module again.
    None where runpy has no such helper (it is private): the task then looks the module up itself."""
    import runpy

    get = getattr(runpy, "_get_module_details", None)
    if get is None or not hasattr(runpy, "_run_module_code"):
        return None
    # runpy warns when the module is imported already (as it is here): it runs as __main__ only
    imported = sys.modules.pop(name, None)
    try:
        _name, spec, code = get(name)
        return spec, code
    except Exception:  # noqa: BLE001  the task's own lookup reports whatever is wrong
        return None
    finally:
        if imported is not None:
            sys.modules[name] = imported


# the module every lightweight task runs
PRELOADED = {"kfp.dsl.executor_main": module_code("kfp.dsl.executor_main")}


def recv_exact(conn, n, fds=None):
    buf = b""
    while len(buf) < n:
        if fds is not None and not fds:
            msg, anc, _flags, _addr = conn.recvmsg(n - len(buf), socket.CMSG_SPACE(16 * array.array("i").itemsize))
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    a = array.array("i")
                    a.frombytes(data[: len(data) - (len(data) % a.itemsize)])
                    fds.extend(a)
        else:
            msg = conn.recv(n - len(buf))
        if not msg:
            raise EOFError("the client went away")
        buf += msg
    return buf


def read_request(conn):
    fds = []
    (length,) = struct.unpack(">I", recv_exact(conn, 4, fds))
    body = recv_exact(conn, length, fds if not fds else None)
    fields = body.split(b"\0")
    i = 0

    def take():
        nonlocal i
        v = fields[i]
        i += 1
        return v

    argv = [os.fsdecode(take()) for _ in range(int(take()))]
    env = {}
    for _ in range(int(take())):
        k, _sep, v = take().partition(b"=")
        env[os.fsdecode(k)] = os.fsdecode(v)
    cwd = os.fsdecode(take())
    return argv, env, cwd, fds


def run_child(argv, env, cwd, fds, listener, others):
    """In the forked child: become the process the client asked for, as `python3 ARGV` would."""
    try:
        os.setsid()
        listener.close()
        for s in others:
            s.close()
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.set_wakeup_fd(-1)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        import random

        random.seed()  # every child would otherwise draw the same numbers
        code = 0
        try:
            if len(argv) >= 2 and argv[0] == "-m":
                import runpy

                sys.argv = [argv[1]] + argv[2:]
                sys.path[0:0] = [cwd]
                # `python -m M` runs M as __main__ only; the zygote imported M (the kfp executor)
                # beforehand, and runpy warns into every task's log when it finds M imported already
                sys.modules.pop(argv[1], None)
                loaded = PRELOADED.get(argv[1])
                if loaded is not None:
                    # what run_module(alter_sys=True) does once it has found the module
                    runpy._run_module_code(loaded[1], None, "__main__", loaded[0])
                else:
                    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
            elif len(argv) >= 2 and argv[0] == "-c":
                sys.argv = ["-c"] + argv[2:]
                sys.path[0:0] = [""]
                exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
            else:
                import runpy

                sys.argv = argv
                sys.path[0:0] = [os.path.dirname(os.path.abspath(argv[0]))]
                runpy.run_path(argv[0], run_name="__main__")
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: B902  as the interpreter would: print it, exit 1
            import traceback

            traceback.print_exc()
            code = 1
        try:
            import atexit

            atexit._run_exitfuncs()
        except BaseException:  # noqa: B902
            pass
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except BaseException:  # noqa: B902
                pass
        os._exit(code & 0xFF)
    except BaseException:  # noqa: B902
        os._exit(127)


def main():
    path = sys.argv[1]
    idle = float(sys.argv[2]) if len(sys.argv) > 2 else 120.0
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    os.rename(path + ".tmp", path)  # clients never see a socket that does not listen yet
    listener.listen(128)
    listener.setblocking(False)
    rfd, wfd = os.pipe()
    os.set_blocking(rfd, False)
    os.set_blocking(wfd, False)
    signal.set_wakeup_fd(wfd)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    draining = []
    # asked to stop: take no new task, but let the running ones finish (their Pods outlive servers)
    signal.signal(signal.SIGTERM, lambda *_: draining.append(True))
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "listen")
    sel.register(rfd, selectors.EVENT_READ, "wake")
    children = {}  # pid -> conn
    conns = {}  # conn -> pid
    sys.stdout.flush()
    sys.stderr.flush()
    # what is loaded now (the interpreter, kfp) never becomes garbage: frozen, a child's collector
    # does not walk it, so it does not copy the pages it would touch
    gc.freeze()
    while True:
        events = sel.select(timeout=idle)
        if not events and not children:
            break
        for key, _mask in events:
            if key.data == "listen":
                try:
                    conn, _ = listener.accept()
                except BlockingIOError:
                    continue
                conn.setblocking(True)
                conn.settimeout(10)
                try:
                    argv, env, cwd, fds = read_request(conn)
                except (EOFError, OSError, ValueError, IndexError):
                    conn.close()
                    continue
                conn.settimeout(None)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    run_child(argv, env, cwd, fds, listener, list(conns.keys()) + [conn])
                for fd in fds:
                    os.close(fd)
                children[pid] = conn
                conns[conn] = pid
                try:
                    conn.sendall(b"P" + struct.pack(">I", pid))
                except OSError:
                    pass
                conn.setblocking(False)
                sel.register(conn, selectors.EVENT_READ, "conn")
            elif key.data == "wake":
                try:
                    while os.read(rfd, 512):
                        pass
                except BlockingIOError:
                    pass
            else:
                conn = key.fileobj
                pid = conns.get(conn)
                try:
                    data = conn.recv(5 * 64)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    # the client is gone (killed): nothing may outlive it
                    sel.unregister(conn)
                    if pid is not None:
                        try:
                            os.killpg(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                    continue
                for off in range(0, len(data) - 4, 5):
                    if data[off : off + 1] == b"K" and pid is not None:
                        (sig,) = struct.unpack(">I", data[off + 1 : off + 5])
                        try:
                            os.killpg(pid, sig)
                        except (ProcessLookupError, PermissionError, OSError):
                            pass
        if draining and listener.fileno() >= 0:
            sel.unregister(listener)
            listener.close()
            try:
                os.unlink(path)
            except OSError:
                pass
        # reap whatever ended
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = children.pop(pid, None)
            if conn is None:
                continue
            conns.pop(conn, None)
            try:
                conn.setblocking(True)
                conn.sendall(b"X" + struct.pack(">I", status & 0xFFFFFFFF))
            except OSError:
                pass
            try:
                sel.unregister(conn)
            except (KeyError, ValueError):
                pass
            conn.close()
        if draining and not children:
            break
    if draining:
        return
    try:
        os.unlink(path)
    except OSError:
        pass


if __name__ == "__main__":
    main()
