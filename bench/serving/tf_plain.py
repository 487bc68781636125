"""The TensorFlow serving bench's baseline: a SavedModel loaded with TensorFlow's own Python API and
called through its `serving_default` signature, behind the standard library's threading HTTP server
(HTTP/1.1 keep-alive), answering `POST /v1/models/<name>:predict` with {"instances": [...]} as
{"predictions": [...]}. What a user would write by hand without a serving runtime.

Usage: tf_plain.py SAVED_MODEL_DIR PORT   (prints the port once it listens)
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

fn = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
(input_name, spec), = fn.structured_input_signature[1].items()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            x = np.asarray(json.loads(body)["instances"], dtype=spec.dtype.as_numpy_dtype)
            out = next(iter(fn(**{input_name: tf.constant(x)}).values())).numpy()
            status, answer = 200, json.dumps({"predictions": out.tolist()}).encode()
        except Exception as e:  # noqa: BLE001 - the answer says what failed
            status, answer = 400, json.dumps({"error": str(e)}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
