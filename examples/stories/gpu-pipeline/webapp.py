"""The GPU pipeline's web app: a page where a person uploads an image and sees the class the served
ResNet gives it, with every class's score.

Standard library only, plus PIL (to read the image) and numpy. It runs in a Pod (webapp.yaml) and is
opened through the API server's service proxy:
  <server>/api/v1/namespaces/<ns>/services/shapes-webapp/proxy/
so every link on the page is relative: the page does not know the prefix it is served under.

  GET  /          the page
  POST /classify  an image, as a form's file field (multipart/form-data) or as the raw body; answers
                  the page with the class, or JSON with `Accept: application/json`. A file PIL cannot
                  read as an image is 400, with PIL's own message
  GET  /healthz   ok

Configuration (environment):
  PREPROCESS   the preprocessing the pipeline used (its JSON: classes, size, mean, std), from the
               ConfigMap the pipeline's deploy step writes (default /etc/shapes/preprocess.json)
  MODEL_NAME   the InferenceService (default shapes-resnet)
  INFER_URL    its V2 infer endpoint; default: SKIFF_SERVER's path form,
               $SKIFF_SERVER/serving/<namespace>/<model>/v2/models/<model>/infer
  PORT         where to listen (default 8080)
"""
import base64
import html
import io
import json
import math
import os
import re
import sys
import urllib.error
import urllib.request
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from PIL import Image

MAX_UPLOAD = 10 * 1024 * 1024


def namespace():
    if os.environ.get("POD_NAMESPACE"):
        return os.environ["POD_NAMESPACE"]
    try:
        with open("/var/run/secrets/kubernetes.io/serviceaccount/namespace") as f:
            return f.read().strip()
    except OSError:
        return "default"


MODEL = os.environ.get("MODEL_NAME", "shapes-resnet")
INFER_URL = os.environ.get("INFER_URL") or f"{os.environ.get('SKIFF_SERVER', 'http://127.0.0.1:8080').rstrip('/')}/serving/{namespace()}/{MODEL}/v2/models/{MODEL}/infer"
with open(os.environ.get("PREPROCESS", "/etc/shapes/preprocess.json")) as f:
    SPEC = json.load(f)


class NotAnImage(Exception):
    pass


def preprocess(data, filename=None):
    """The pipeline's preprocessing: RGB, a bilinear resize to size x size, 0..1, then the set's mean and std."""
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception as e:  # PIL raises several kinds; each names what it could not read
        # PIL names the in-memory file by its repr; the person knows it by its name
        raise NotAnImage(re.sub(r"<_io\.BytesIO object at 0x[0-9a-f]+>", repr(filename or "the upload"), str(e))) from e
    size = SPEC["size"]
    x = np.asarray(img.convert("RGB").resize((size, size), Image.BILINEAR), dtype=np.float32) / 255.0
    x = x.transpose(2, 0, 1)
    x = (x - np.array(SPEC["mean"], dtype=np.float32)[:, None, None]) / np.array(SPEC["std"], dtype=np.float32)[:, None, None]
    return img, x[None].astype(np.float32)


def classify(x):
    """Asks the InferenceService (V2, Open Inference Protocol); the class and each class's probability."""
    body = json.dumps({"inputs": [{"name": "input", "shape": list(x.shape), "datatype": "FP32", "data": x.ravel().tolist()}]}).encode()
    req = urllib.request.Request(INFER_URL, data=body, headers={"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        answer = json.load(r)
    scores = answer["outputs"][0]["data"]
    top = max(scores)
    exp = [math.exp(s - top) for s in scores]
    probs = [e / sum(exp) for e in exp]
    best = max(range(len(scores)), key=lambda i: scores[i])
    return {"class": SPEC["classes"][best], "index": best, "scores": dict(zip(SPEC["classes"], scores)), "probabilities": dict(zip(SPEC["classes"], probs))}


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; color: #1d2733; }
h1 { font-size: 1.4rem; } form { margin: 1rem 0; padding: 1rem; border: 1px solid #cfd8e3; border-radius: 6px; }
.result { padding: 1rem; border-radius: 6px; background: #eef6ee; } .error { padding: 1rem; border-radius: 6px; background: #fbeaea; }
.class { font-size: 1.6rem; font-weight: 600; } img { image-rendering: pixelated; border: 1px solid #cfd8e3; }
table { border-collapse: collapse; margin-top: .5rem; } td { padding: .15rem .6rem; } .bar { background: #4a7fb5; height: .8rem; }
"""


def page(body="", status=""):
    classes = ", ".join(SPEC["classes"])
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Shapes: which class?</title><style>{STYLE}</style></head>
<body><h1>Which shape is it?</h1>
<p>Upload an image; the ResNet the pipeline trained, served by the InferenceService <code>{html.escape(MODEL)}</code>
(KServe's Triton runtime, ONNX), says which of <b>{html.escape(classes)}</b> it shows.</p>
<form method="post" action="classify" enctype="multipart/form-data">
<input type="file" name="image" accept="image/*" required> <button type="submit">Classify</button>
</form>{status}{body}</body></html>"""


def result_html(img, out):
    thumb = io.BytesIO()
    img.convert("RGB").resize((128, 128), Image.NEAREST).save(thumb, "PNG")
    rows = "".join(
        f'<tr><td>{html.escape(c)}</td><td>{p * 100:.1f}%</td><td><div class="bar" style="width:{p * 200:.0f}px"></div></td></tr>'
        for c, p in out["probabilities"].items())
    return (f'<div class="result"><img alt="the upload" src="data:image/png;base64,{base64.b64encode(thumb.getvalue()).decode()}" width="128" height="128">'
            f'<p>Class: <span class="class" id="class">{html.escape(out["class"])}</span></p><table>{rows}</table></div>')


class Handler(BaseHTTPRequestHandler):
    server_version = "shapes-webapp/1"

    def send(self, status, body, ctype="text/html; charset=utf-8"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def wants_json(self):
        return "application/json" in (self.headers.get("accept") or "")

    def fail(self, status, message):
        if self.wants_json():
            return self.send(status, json.dumps({"error": message}), "application/json")
        self.send(status, page(status=f'<div class="error" id="error">{html.escape(message)}</div>'))

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/healthz":
            return self.send(200, "ok", "text/plain")
        if path in ("/", "/index.html"):
            return self.send(200, page())
        self.fail(404, f"nothing at {path}")

    def upload(self):
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_UPLOAD:
            raise ValueError(f"the upload is {length} bytes; at most {MAX_UPLOAD} are taken")
        raw = self.rfile.read(length)
        ctype = self.headers.get("content-type") or ""
        if not ctype.startswith("multipart/form-data"):
            return raw, None
        msg = BytesParser(policy=HTTP).parsebytes(b"content-type: " + ctype.encode() + b"\r\n\r\n" + raw)
        for part in msg.iter_parts():
            if part.get_param("name", header="content-disposition") == "image":
                return part.get_payload(decode=True) or b"", part.get_filename()
        raise ValueError("the form has no file field named image")

    def do_POST(self):
        if self.path.split("?")[0] != "/classify":
            return self.fail(404, f"nothing at {self.path}")
        try:
            data, filename = self.upload()
            if not data:
                return self.fail(400, "the upload is empty: choose an image file")
            img, x = preprocess(data, filename)
        except NotAnImage as e:
            return self.fail(400, f"that file is not an image: {e}")
        except ValueError as e:
            return self.fail(400, str(e))
        try:
            out = classify(x)
        except urllib.error.HTTPError as e:
            return self.fail(502, f"the InferenceService {MODEL} answered {e.code}: {e.read().decode(errors='replace')[:500]}")
        except (urllib.error.URLError, OSError) as e:
            return self.fail(502, f"the InferenceService {MODEL} at {INFER_URL} could not be reached: {e}")
        if self.wants_json():
            return self.send(200, json.dumps(out), "application/json")
        self.send(200, page(body=result_html(img, out)))

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))


if __name__ == "__main__":
    port = int(os.environ.get("PORT", "8080"))
    print(f"shapes web app on :{port}; classes {SPEC['classes']}; model at {INFER_URL}", flush=True)
    ThreadingHTTPServer(("0.0.0.0", port), Handler).serve_forever()
