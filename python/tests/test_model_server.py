"""Skiff's model server (python/skiff_model_server.py), as a process: real models trained on the digits
data set, every answer compared with the model's own output in this process.

Run: .venv/bin/python -m unittest python/tests/test_model_server.py
"""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import uuid
import warnings

import joblib
import numpy as np
import torch
import xgboost as xgb
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

try:  # the serving bench's comparison server (--http_server uvicorn); Pods run the built-in one
    import httptools  # noqa: F401
    import uvicorn  # noqa: F401
    HAVE_UVICORN = True
except ImportError:
    HAVE_UVICORN = False

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = os.path.join(REPO, "python", "skiff_model_server.py")

X, Y = load_digits(return_X_y=True)
ROWS = X[:7]

TMP = None
MODELS = {}
SERVERS = {}


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 16)
        self.b = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 3)

    def forward(self, x):
        y = self.a(x)
        return y, y.argmax(dim=1)


class Server:
    """One server process on a free port of 127.0.0.1."""

    def __init__(self, model_dir, *extra, env=None, name="digits"):
        self.name = name
        cmd = [sys.executable, SERVER, "--model_name", name, "--model_dir", model_dir,
               "--http_host", "127.0.0.1", "--http_port", "0", *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        self.port = None
        self.line = None

    def wait_ready(self, timeout=60):
        # the first stdout line says where it listens (the model is loaded before the port opens)
        result = {}

        def read():
            result["line"] = self.proc.stdout.readline()

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        line = result.get("line", "")
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r} {self.proc.stderr.read()}")
        self.line = line.strip()
        self.port = int(re.search(r"listening on \S+:(\d+)", line).group(1))
        return self

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def request(self, method, path, body=None, headers=None):
        c = self.conn()
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, dict((k.lower(), v) for k, v in r.getheaders()), r.read()
        finally:
            c.close()

    def json(self, method, path, obj=None, headers=None):
        body = None if obj is None else json.dumps(obj).encode()
        h = {"Content-Type": "application/json", **(headers or {})} if body is not None else headers
        status, _, data = self.request(method, path, body, h)
        return status, json.loads(data)

    def alive(self):
        return self.request("GET", "/v2/health/live")[0] == 200

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        for f in (self.proc.stdout, self.proc.stderr):
            f.close()


def setUpModule():
    global TMP
    TMP = tempfile.mkdtemp(prefix="skiff-model-server-test-")
    d = lambda *p: os.path.join(TMP, *p)  # noqa: E731
    for sub in ("sk", "xgjson", "xgubj", "pt", "pt2", "empty", "two", "mar"):
        os.makedirs(d(sub))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lr = LogisticRegression(max_iter=300).fit(X, Y)
    joblib.dump(lr, d("sk", "model.joblib"))
    booster = xgb.train({"objective": "multi:softprob", "num_class": 10, "max_depth": 3, "nthread": 1},
                        xgb.DMatrix(X, label=Y), num_boost_round=5)
    booster.save_model(d("xgjson", "model.json"))
    booster.save_model(d("xgubj", "model.ubj"))
    torch.manual_seed(0)
    torch.jit.script(MLP().eval()).save(d("pt", "model.pt"))
    torch.jit.script(TwoHeads().eval()).save(d("pt2", "model.pt"))
    joblib.dump(lr, d("two", "a.joblib"))
    joblib.dump(lr, d("two", "b.pkl"))
    with open(d("mar", "mnist.mar"), "wb") as f:
        f.write(b"PK\x03\x04")
    MODELS.update(sk=lr, xgb=booster, pt=torch.jit.load(d("pt", "model.pt")), pt2=torch.jit.load(d("pt2", "model.pt")))

    SERVERS.update(
        sk=Server(d("sk"), "--max_body_bytes", "1000000"),
        proba=Server(d("sk"), env={"PREDICT_PROBA": "true"}),
        xgjson=Server(d("xgjson")),
        xgubj=Server(d("xgubj", "model.ubj"), "--format", "xgboost"),  # a file, not a directory
        pt=Server(d("pt")),
        pt2=Server(d("pt2"), "--format", "pytorch"),
    )
    if HAVE_UVICORN:
        SERVERS["uvicorn"] = Server(d("sk"), "--max_body_bytes", "1000000", "--http_server", "uvicorn")
    try:
        for s in SERVERS.values():
            s.wait_ready()
    except Exception:
        tearDownModule()
        raise


def tearDownModule():
    for s in SERVERS.values():
        s.stop()
    shutil.rmtree(TMP, ignore_errors=True)


def v2_binary(inputs, outputs=None, parameters=None):
    """(header JSON, body) of a binary-extension request: inputs = [(name, datatype, ndarray)]."""
    blobs = []
    specs = []
    for name, dt, arr in inputs:
        blob = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        specs.append({"name": name, "shape": list(arr.shape), "datatype": dt,
                      "parameters": {"binary_data_size": len(blob)}})
        blobs.append(blob)
    req = {"inputs": specs}
    if outputs is not None:
        req["outputs"] = outputs
    if parameters is not None:
        req["parameters"] = parameters
    head = json.dumps(req).encode()
    return head, head + b"".join(blobs)


def parse_binary_response(headers, body):
    n = int(headers["inference-header-content-length"])
    head = json.loads(body[:n])
    off = n
    arrays = {}
    types = {"FP32": "<f4", "FP64": "<f8", "INT64": "<i8", "INT32": "<i4", "BOOL": "?"}
    for o in head["outputs"]:
        if "parameters" in o and "binary_data_size" in o["parameters"]:
            size = o["parameters"]["binary_data_size"]
            arrays[o["name"]] = np.frombuffer(body[off:off + size], dtype=types[o["datatype"]]).reshape(o["shape"])
            off += size
    assert off == len(body)
    return head, arrays


def read_response(f):
    """One HTTP response from a socket file: (status, headers, body)."""
    status_line = f.readline()
    if not status_line:
        return None
    status = int(status_line.split()[1])
    headers = {}
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            break
        k, _, v = line.decode().partition(":")
        headers[k.strip().lower()] = v.strip()
    body = f.read(int(headers.get("content-length", "0")))
    return status, headers, body


def raw(server, data, responses=1, shut=False):
    """Send raw bytes on a new connection and read `responses` answers (None for each missing one)."""
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
        f = s.makefile("rb")
        return [read_response(f) for _ in range(responses)]
    finally:
        s.close()


class SklearnTest(unittest.TestCase):
    s = property(lambda self: SERVERS["sk"])

    def expected(self, rows=ROWS):
        return MODELS["sk"].predict(rows).tolist()

    def test_startup_line(self):
        self.assertRegex(self.s.line, r"^skiff-model-server: model digits loaded \(sklearn\) in \d+ ms; "
                                      r"listening on 127\.0\.0\.1:\d+$")

    def test_health_and_metadata(self):
        self.assertEqual(self.s.json("GET", "/"), (200, {"status": "alive"}))
        self.assertEqual(self.s.json("GET", "/v1/models"), (200, {"models": ["digits"]}))
        self.assertEqual(self.s.json("GET", "/v1/models/digits"), (200, {"name": "digits", "ready": True}))
        self.assertEqual(self.s.json("GET", "/v2/health/live"), (200, {"live": True}))
        self.assertEqual(self.s.json("GET", "/v2/health/ready"), (200, {"ready": True}))
        status, v2 = self.s.json("GET", "/v2")
        self.assertEqual((status, v2["name"], v2["extensions"]), (200, "skiff-model-server", ["binary_tensor_data"]))
        status, meta = self.s.json("GET", "/v2/models/digits")
        self.assertEqual(status, 200)
        self.assertEqual(meta["name"], "digits")
        self.assertEqual(meta["platform"], "sklearn")
        self.assertEqual(meta["inputs"][0]["shape"], [-1, 64])
        self.assertEqual(meta["outputs"][0], {"name": "output-0", "datatype": "INT64", "shape": [-1]})
        self.assertEqual(self.s.json("GET", "/v2/models/digits/ready"), (200, {"name": "digits", "ready": True}))
        self.assertEqual(self.s.json("GET", "/v2/models/digits/versions/1/ready")[0], 200)

    def test_v1_predict(self):
        self.assertEqual(self.s.json("POST", "/v1/models/digits:predict", {"instances": ROWS.tolist()}),
                         (200, {"predictions": self.expected()}))
        # inputs wins over instances; %3A; a content type with parameters; none at all
        status, _, body = self.s.request(
            "POST", "/v1/models/digits%3Apredict",
            json.dumps({"instances": ROWS[:1].tolist(), "inputs": ROWS[2:5].tolist()}).encode(),
            {"Content-Type": "application/json; charset=utf-8"})
        self.assertEqual((status, json.loads(body)), (200, {"predictions": self.expected(ROWS[2:5])}))
        status, _, body = self.s.request("POST", "/v1/models/digits:predict",
                                         json.dumps({"instances": ROWS[:2].tolist()}).encode())
        self.assertEqual((status, json.loads(body)), (200, {"predictions": self.expected(ROWS[:2])}))

    def test_v1_predict_proba(self):
        status, got = SERVERS["proba"].json("POST", "/v1/models/digits:predict", {"instances": ROWS.tolist()})
        self.assertEqual(status, 200)
        self.assertEqual(got["predictions"], MODELS["sk"].predict_proba(ROWS).tolist())

    def test_v1_objects_need_pandas(self):
        status, body = self.s.json("POST", "/v1/models/digits:predict", {"instances": [{"a": 1}]})
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.assertEqual(status, 400)
            self.assertIn("pandas", body["error"])
        else:
            self.assertEqual(status, 500)  # the model was trained without column names

    def test_v2_json_flat_and_nested(self):
        want = self.expected()
        for data in (ROWS.tolist(), ROWS.ravel().tolist()):
            for dt in ("FP64", "FP32", "INT64"):
                req = {"id": "r-1", "inputs": [{"name": "x", "shape": list(ROWS.shape), "datatype": dt, "data": data}]}
                status, got = self.s.json("POST", "/v2/models/digits/infer", req)
                self.assertEqual(status, 200, got)
                self.assertEqual(got, {"model_name": "digits", "id": "r-1", "outputs": [
                    {"name": "output-0", "datatype": "INT64", "shape": [len(ROWS)], "data": want}]})

    def test_v2_id_generated_and_versions_path(self):
        req = {"inputs": [{"name": "x", "shape": [1, 64], "datatype": "FP64", "data": ROWS[0].tolist()}],
               "parameters": {"anything": "goes"}}
        status, got = self.s.json("POST", "/v2/models/digits/versions/1/infer", req)
        self.assertEqual(status, 200, got)
        uuid.UUID(got["id"])
        self.assertNotIn("model_version", got)

    def test_v2_outputs_subset(self):
        req = {"inputs": [{"name": "x", "shape": [2, 64], "datatype": "FP64", "data": ROWS[:2].tolist()}],
               "outputs": [{"name": "output-0"}]}
        status, got = self.s.json("POST", "/v2/models/digits/infer", req)
        self.assertEqual((status, got["outputs"][0]["data"]), (200, self.expected(ROWS[:2])))
        req["outputs"] = [{"name": "nope"}]
        status, got = self.s.json("POST", "/v2/models/digits/infer", req)
        self.assertEqual(status, 400)
        self.assertIn("nope", got["error"])

    def test_v2_binary(self):
        head, body = v2_binary([("x", "FP32", ROWS.astype(np.float32))], parameters={"binary_data_output": True})
        status, headers, data = self.s.request("POST", "/v2/models/digits/infer", body, {
            "Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(head))})
        self.assertEqual(status, 200, data)
        self.assertEqual(headers["content-type"], "application/octet-stream")
        meta, arrays = parse_binary_response(headers, data)
        self.assertEqual(meta["outputs"][0]["datatype"], "INT64")
        self.assertEqual(arrays["output-0"].tolist(), self.expected())
        # per output binary_data: false wins over the request-level default: plain JSON comes back
        head, body = v2_binary([("x", "FP64", ROWS)], outputs=[{"name": "output-0", "parameters": {"binary_data": False}}],
                               parameters={"binary_data_output": True})
        status, headers, data = self.s.request("POST", "/v2/models/digits/infer", body, {
            "Inference-Header-Content-Length": str(len(head))})
        self.assertEqual(status, 200, data)
        self.assertNotIn("inference-header-content-length", headers)
        self.assertEqual(json.loads(data)["outputs"][0]["data"], self.expected())
        # binary input, binary output asked for per output, the input given as UINT8
        head, body = v2_binary([("x", "UINT8", ROWS.astype(np.uint8))],
                               outputs=[{"name": "output-0", "parameters": {"binary_data": True}}])
        status, headers, data = self.s.request("POST", "/v2/models/digits/infer", body, {
            "Inference-Header-Content-Length": str(len(head))})
        self.assertEqual(status, 200, data)
        self.assertEqual(parse_binary_response(headers, data)[1]["output-0"].tolist(), self.expected())

    def test_v2_proba_binary_exact(self):
        head, body = v2_binary([("x", "FP64", ROWS)], parameters={"binary_data_output": True})
        status, headers, data = SERVERS["proba"].request("POST", "/v2/models/digits/infer", body, {
            "Inference-Header-Content-Length": str(len(head))})
        self.assertEqual(status, 200, data)
        got = parse_binary_response(headers, data)[1]["output-0"]
        np.testing.assert_array_equal(got, MODELS["sk"].predict_proba(ROWS))

    def test_v2_bad_requests(self):
        def infer(req, **kw):
            return self.s.json("POST", "/v2/models/digits/infer", req, **kw)

        def one(**kw):
            spec = {"name": "pixels", "shape": [1, 64], "datatype": "FP32", "data": ROWS[0].tolist()}
            spec.update(kw)
            return {"inputs": [spec]}

        for req, needle in [
            (one(shape=[2, 64]), "pixels"),
            (one(shape=[1, -64]), "pixels"),
            (one(datatype="FP16"), "FP16"),
            (one(datatype="FLOAT"), "pixels"),
            (one(datatype="INT32", data=[0.5] * 64), "pixels"),
            (one(datatype="UINT8", data=[300] * 64), "pixels"),
            (one(datatype="BOOL", data=[1] * 64), "pixels"),
            (one(data=["a"] * 64), "pixels"),
            (one(data=[[1, 2], [3]]), "pixels"),
            ({"inputs": []}, "inputs"),
            ({"nope": 1}, "inputs"),
        ]:
            status, got = infer(req)
            self.assertEqual(status, 400, (req, got))
            self.assertIn(needle, got["error"])
        # not JSON at all
        status, _, data = self.s.request("POST", "/v2/models/digits/infer", b"{nope", {"Content-Type": "application/json"})
        self.assertEqual(status, 400)
        self.assertIn("error", json.loads(data))
        # a non-JSON content type without the binary header
        status, _, data = self.s.request("POST", "/v2/models/digits/infer", b"\x00\x01",
                                         {"Content-Type": "application/octet-stream"})
        self.assertEqual(status, 400)
        self.assertIn("inference-header-content-length", json.loads(data)["error"])
        # binary sizes that do not match the shape, or the body
        head, body = v2_binary([("pixels", "FP32", ROWS[:2].astype(np.float32))])
        status, _, data = self.s.request("POST", "/v2/models/digits/infer", body[:-4],
                                         {"Inference-Header-Content-Length": str(len(head))})
        self.assertEqual(status, 400)
        self.assertIn("pixels", json.loads(data)["error"])
        status, _, data = self.s.request("POST", "/v2/models/digits/infer", body + b"xxxx",
                                         {"Inference-Header-Content-Length": str(len(head))})
        self.assertEqual(status, 400)
        self.assertTrue(self.s.alive())

    def test_500_from_the_model(self):
        status, got = self.s.json("POST", "/v1/models/digits:predict", {"instances": [[1, 2, 3]]})
        self.assertEqual(status, 500)
        self.assertTrue(got["error"].startswith("ValueError : "), got)
        req = {"inputs": [{"name": "x", "shape": [1, 3], "datatype": "FP32", "data": [1, 2, 3]}]}
        self.assertEqual(self.s.json("POST", "/v2/models/digits/infer", req)[0], 500)
        # NaN reaches scikit-learn's own check
        status, _, data = self.s.request("POST", "/v1/models/digits:predict",
                                         b'{"instances": [[' + b",".join([b"NaN"] * 64) + b"]]}")
        self.assertEqual(status, 500 if data.startswith(b'{"error":"ValueError') else 400, data)

    def test_404_405(self):
        self.assertEqual(self.s.json("POST", "/v1/models/other:predict", {"instances": [[1]]}),
                         (404, {"error": "Model with name other does not exist."}))
        self.assertEqual(self.s.json("GET", "/v1/models/other"), (404, {"error": "Model with name other does not exist."}))
        self.assertEqual(self.s.json("POST", "/v2/models/other/infer", {"inputs": []})[0], 404)
        self.assertEqual(self.s.json("GET", "/v2/models/other")[0], 404)
        self.assertEqual(self.s.request("GET", "/nope")[0], 404)
        self.assertEqual(self.s.request("GET", "/v1/models/digits:predict")[0], 405)
        self.assertEqual(self.s.request("GET", "/v2/models/digits/infer")[0], 405)
        status, headers, _ = self.s.request("POST", "/v2/health/ready", b"{}")
        self.assertEqual((status, headers.get("allow")), (405, "GET"))

    def test_413(self):
        got = raw(self.s, b"POST /v1/models/digits:predict HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n{")
        self.assertEqual(got[0][0], 413)
        self.assertTrue(self.s.alive())

    def test_malformed_http_keeps_server_alive(self):
        for junk in (b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
                     b"POST /v1/models/digits:predict HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                     b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(256)) + b"\r\n\r\n"):
            got = raw(self.s, junk)[0]
            self.assertIsNotNone(got, junk)
            self.assertIn(got[0], (400, 505), junk)
        # a connection dropped in the middle of a body
        s = socket.create_connection(("127.0.0.1", self.s.port))
        s.sendall(b"POST /v1/models/digits:predict HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"inst")
        s.close()
        self.assertTrue(self.s.alive())

    def test_keep_alive_pipelining_and_close(self):
        body = json.dumps({"instances": ROWS[:1].tolist()}).encode()
        one = b"POST /v1/models/digits:predict HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        live = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
        got = raw(self.s, one + live + one + b"GET /nope HTTP/1.1\r\n\r\n", responses=4)
        self.assertEqual([g[0] for g in got], [200, 200, 200, 404])
        self.assertEqual(json.loads(got[0][2]), {"predictions": self.expected(ROWS[:1])})
        self.assertEqual(json.loads(got[1][2]), {"live": True})
        # Connection: close ends the connection after the answer, pipelined requests after it are not answered
        close = b"GET /v2/health/live HTTP/1.1\r\nConnection: close\r\n\r\n"
        got = raw(self.s, close + live, responses=2)
        self.assertEqual(got[0][0], 200)
        self.assertEqual(got[0][1].get("connection"), "close")
        self.assertIsNone(got[1])
        # HTTP/1.0 closes unless asked to keep alive
        got = raw(self.s, b"GET / HTTP/1.0\r\n\r\n" + live, responses=2)
        self.assertEqual((got[0][0], got[1]), (200, None))
        # many requests on one keep-alive connection
        c = self.s.conn()
        for _ in range(50):
            c.request("POST", "/v1/models/digits:predict", body=body)
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            r.read()
        c.close()

    def test_chunked_and_expect(self):
        body = json.dumps({"instances": ROWS[:3].tolist()}).encode()
        chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 100]), body[i:i + 100]) for i in range(0, len(body), 100))
        req = (b"POST /v1/models/digits:predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + b"0\r\n\r\n")
        got = raw(self.s, req)[0]
        self.assertEqual((got[0], json.loads(got[2])), (200, {"predictions": self.expected(ROWS[:3])}))
        s = socket.create_connection(("127.0.0.1", self.s.port), timeout=10)
        try:
            s.sendall(b"POST /v1/models/digits:predict HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n"
                      % len(body))
            f = s.makefile("rb")
            self.assertEqual(read_response(f)[0], 100)
            s.sendall(body)
            self.assertEqual(read_response(f)[0], 200)
        finally:
            s.close()

    def test_metrics(self):
        self.s.json("POST", "/v1/models/digits:predict", {"instances": ROWS[:1].tolist()})
        status, headers, data = self.s.request("GET", "/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/plain"))
        text = data.decode()
        self.assertIn('skiff_model_server_requests_total{endpoint="v1_predict",code="200"}', text)
        self.assertIn('request_predict_seconds_bucket{model_name="digits",le="+Inf"}', text)


@unittest.skipUnless(HAVE_UVICORN, "uvicorn and httptools are not installed in this environment "
                                   "(python/requirements-serving.txt)")
class UvicornTest(SklearnTest):
    """The same model and App behind uvicorn with httptools: every scikit-learn test above, over ASGI."""

    s = property(lambda self: SERVERS["uvicorn"])

    def test_startup_line(self):
        self.assertRegex(self.s.line, r"^skiff-model-server: model digits loaded \(sklearn\) in \d+ ms; "
                                      r"listening on 127\.0\.0\.1:\d+ \(uvicorn\)$")

    def test_sigterm_exits_zero_after_in_flight_request(self):
        s = Server(os.path.join(TMP, "sk"), "--http_server", "uvicorn").wait_ready()
        try:
            busy = socket.create_connection(("127.0.0.1", s.port), timeout=10)
            body = json.dumps({"instances": ROWS[:1].tolist()}).encode()
            busy.sendall(b"POST /v1/models/digits:predict HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(body), body[:10]))
            time.sleep(0.2)
            s.proc.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            self.assertIsNone(s.proc.poll())
            busy.sendall(body[10:])
            got = read_response(busy.makefile("rb"))
            self.assertEqual((got[0], json.loads(got[2])), (200, {"predictions": self.expected(ROWS[:1])}))
            self.assertEqual(s.proc.wait(10), 0)
            busy.close()
        finally:
            s.stop()


class XGBoostTest(unittest.TestCase):
    def expected(self, rows=ROWS):
        return MODELS["xgb"].predict(xgb.DMatrix(rows))

    def test_v1_json_and_ubj(self):
        for key in ("xgjson", "xgubj"):
            status, got = SERVERS[key].json("POST", "/v1/models/digits:predict", {"instances": ROWS.tolist()})
            self.assertEqual(status, 200)
            np.testing.assert_array_equal(np.asarray(got["predictions"], dtype=np.float32), self.expected())

    def test_v2_json_and_binary(self):
        s = SERVERS["xgjson"]
        req = {"inputs": [{"name": "x", "shape": list(ROWS.shape), "datatype": "FP32", "data": ROWS.ravel().tolist()}]}
        status, got = s.json("POST", "/v2/models/digits/infer", req)
        self.assertEqual(status, 200, got)
        out = got["outputs"][0]
        self.assertEqual((out["datatype"], out["shape"]), ("FP32", [len(ROWS), 10]))
        np.testing.assert_array_equal(np.asarray(out["data"], dtype=np.float32).reshape(out["shape"]), self.expected())
        head, body = v2_binary([("x", "FP32", ROWS.astype(np.float32))], parameters={"binary_data_output": True})
        status, headers, data = s.request("POST", "/v2/models/digits/infer", body,
                                          {"Inference-Header-Content-Length": str(len(head))})
        self.assertEqual(status, 200, data)
        np.testing.assert_array_equal(parse_binary_response(headers, data)[1]["output-0"], self.expected())

    def test_large_batches_on_threads_stay_in_order(self):
        # bodies over 64 KiB run on the thread pool; pipelined answers still come back in order
        big = np.tile(X[:300], (4, 1)).astype(np.float32)
        head, body = v2_binary([("x", "FP32", big)], parameters={"binary_data_output": True})
        big_req = (b"POST /v2/models/digits/infer HTTP/1.1\r\nInference-Header-Content-Length: %d\r\n"
                   b"Content-Length: %d\r\n\r\n" % (len(head), len(body))) + body
        small = json.dumps({"instances": ROWS[:2].tolist()}).encode()
        small_req = b"POST /v1/models/digits:predict HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s" % (len(small), small)
        got = raw(SERVERS["xgjson"], big_req + small_req + big_req + small_req, responses=4)
        self.assertEqual([g[0] for g in got], [200, 200, 200, 200])
        for g in (got[0], got[2]):
            np.testing.assert_array_equal(parse_binary_response(g[1], g[2])[1]["output-0"], self.expected(big))
        for g in (got[1], got[3]):
            np.testing.assert_array_equal(np.asarray(json.loads(g[2])["predictions"], dtype=np.float32),
                                          self.expected(ROWS[:2]))

    def test_metadata(self):
        status, meta = SERVERS["xgubj"].json("GET", "/v2/models/digits")
        self.assertEqual((status, meta["platform"], meta["inputs"][0]["shape"]), (200, "xgboost", [-1, 64]))
        self.assertEqual(meta["outputs"][0]["shape"], [-1, 10])


class TorchTest(unittest.TestCase):
    def test_v1_and_v2(self):
        s = SERVERS["pt"]
        with torch.no_grad():
            want = MODELS["pt"](torch.from_numpy(ROWS.astype(np.float32))).numpy()
        status, got = s.json("POST", "/v1/models/digits:predict", {"instances": ROWS.tolist()})
        self.assertEqual(status, 200)
        np.testing.assert_array_equal(np.asarray(got["predictions"], dtype=np.float32), want)
        req = {"id": "t", "inputs": [{"name": "x", "shape": list(ROWS.shape), "datatype": "FP32", "data": ROWS.tolist()}]}
        status, got = s.json("POST", "/v2/models/digits/infer", req)
        self.assertEqual(status, 200, got)
        out = got["outputs"][0]
        self.assertEqual((got["id"], out["name"], out["datatype"], out["shape"]), ("t", "output-0", "FP32", [7, 10]))
        np.testing.assert_array_equal(np.asarray(out["data"], dtype=np.float32).reshape(7, 10), want)
        head, body = v2_binary([("x", "FP32", ROWS.astype(np.float32))], parameters={"binary_data_output": True})
        status, headers, data = s.request("POST", "/v2/models/digits/infer", body,
                                          {"Inference-Header-Content-Length": str(len(head))})
        self.assertEqual(status, 200, data)
        np.testing.assert_array_equal(parse_binary_response(headers, data)[1]["output-0"], want)
        # FP64 reaches the float32 module as float64: the module's own error
        req["inputs"][0]["datatype"] = "FP64"
        self.assertEqual(s.json("POST", "/v2/models/digits/infer", req)[0], 500)

    def test_tuple_outputs(self):
        s = SERVERS["pt2"]
        with torch.no_grad():
            y, cls = MODELS["pt2"](torch.from_numpy(ROWS.astype(np.float32)))
        req = {"inputs": [{"name": "x", "shape": list(ROWS.shape), "datatype": "FP32", "data": ROWS.tolist()}]}
        status, got = s.json("POST", "/v2/models/digits/infer", req)
        self.assertEqual(status, 200, got)
        self.assertEqual([o["name"] for o in got["outputs"]], ["output-0", "output-1"])
        self.assertEqual(got["outputs"][1], {"name": "output-1", "datatype": "INT64", "shape": [7], "data": cls.tolist()})
        req["outputs"] = [{"name": "output-1"}]
        status, got = s.json("POST", "/v2/models/digits/infer", req)
        self.assertEqual([o["name"] for o in got["outputs"]], ["output-1"])


class LoadFailureTest(unittest.TestCase):
    def start(self, model_dir, *extra):
        log = os.path.join(TMP, f"termination-{uuid.uuid4().hex}")
        p = subprocess.run([sys.executable, SERVER, "--model_name", "m", "--model_dir", model_dir,
                            "--http_host", "127.0.0.1", "--http_port", "0", *extra],
                           capture_output=True, text=True, timeout=60, env={**os.environ, "SKIFF_TERMINATION_LOG": log})
        with open(log) as f:
            return p, f.read()

    def check(self, model_dir, needle, *extra):
        p, log = self.start(model_dir, *extra)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        line = p.stderr.strip()
        self.assertTrue(line.startswith("skiff-model-server: failed to load model: "), line)
        self.assertIn(needle, line)
        self.assertEqual("skiff-model-server: failed to load model: " + log, line)

    def test_failures(self):
        self.check(os.path.join(TMP, "empty"), "Could not find any model file")
        self.check(os.path.join(TMP, "two"), "More than one model file is detected")
        self.check(os.path.join(TMP, "mar"), "TorchServe")
        self.check(os.path.join(TMP, "nowhere"), "does not exist")
        self.check(os.path.join(TMP, "sk"), "Could not find any model file", "--format", "xgboost")
        bad = os.path.join(TMP, "bad.joblib")
        with open(bad, "wb") as f:
            f.write(b"not a pickle")
        p, log = self.start(bad)
        self.assertEqual(p.returncode, 1)
        self.assertIn("failed to load model", p.stderr)
        self.assertTrue(log)

    def test_tensorflow_failures(self):
        # TF Serving's base path: numbered version directories, the highest one served
        base = os.path.join(TMP, "tf-base")
        os.makedirs(os.path.join(base, "not-a-version"), exist_ok=True)
        self.check(base, "No versions of servable m found under base path", "--format", "tensorflow")
        for v in ("1", "10", "9"):
            os.makedirs(os.path.join(base, v), exist_ok=True)
            with open(os.path.join(base, v, "saved_model.pb"), "wb") as f:
                f.write(b"not a SavedModel")
        p, log = self.start(base, "--format", "tensorflow")
        self.assertEqual(p.returncode, 1, p.stderr)
        try:
            import tensorflow  # noqa: F401 - only whether it is there
            # TensorFlow's own message, about version 10
            self.assertIn(os.path.join(base, "10", "saved_model.pb"), log)
        except ImportError:
            self.assertIn("TensorFlow is not installed in this model server's environment", log)


class ShutdownTest(unittest.TestCase):
    def test_sigterm_finishes_in_flight_request(self):
        s = Server(os.path.join(TMP, "sk")).wait_ready()
        try:
            idle = socket.create_connection(("127.0.0.1", s.port), timeout=10)
            busy = socket.create_connection(("127.0.0.1", s.port), timeout=10)
            body = json.dumps({"instances": ROWS[:1].tolist()}).encode()
            busy.sendall(b"POST /v1/models/digits:predict HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(body), body[:10]))
            time.sleep(0.2)
            s.proc.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            self.assertIsNone(s.proc.poll())
            self.assertEqual(idle.recv(10), b"")  # idle keep-alive connections are closed
            busy.sendall(body[10:])
            got = read_response(busy.makefile("rb"))
            self.assertEqual(got[0], 200)
            self.assertEqual(got[1].get("connection"), "close")
            self.assertEqual(s.proc.wait(10), 0)
            with self.assertRaises(OSError):
                socket.create_connection(("127.0.0.1", s.port), timeout=2).close()
            idle.close()
            busy.close()
        finally:
            s.stop()


if __name__ == "__main__":
    unittest.main()
