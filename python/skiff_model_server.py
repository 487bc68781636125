#!/usr/bin/env python3
"""Skiff's model server: one model (scikit-learn, XGBoost, TorchScript or a TensorFlow SavedModel)
behind KServe's V1 and the Open Inference Protocol (V2) REST APIs, including the binary tensor
extension. A SavedModel is served as TF Serving serves it: its version directories, its signatures,
and V1 in TF Serving's row ("instances") and columnar ("inputs") formats.

It is the main process of a model-server Pod. The model is loaded before the port opens, so an open
port means a ready model. HTTP/1.1 is served straight from asyncio protocols (keep-alive,
pipelining answered in order, Content-Length or chunked bodies); predictions run synchronously on the
event loop because they are CPU-bound, so one process serves one prediction at a time and
concurrency comes from more processes or Pods. The same App also runs as an ASGI application on uvicorn
with httptools (--http_server uvicorn); the serving bench measured that at 0.62x to 0.78x the
requests/s of the server here (bench/serving.ts, part d; the README's serving section), so Pods run
this one.

Exit codes: 0 after SIGTERM/SIGINT (in-flight requests are finished first), 1 when the model cannot
be loaded (the reason goes to stderr and to the file named by $SKIFF_TERMINATION_LOG), 2 for bad
command-line arguments.
"""

import argparse
import asyncio
import bisect
import json
import os
import signal
import sys
import threading
import time
import traceback
import uuid

import numpy as np

try:  # optional accelerators (python/requirements-serving.txt); the standard library works too
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    orjson = None
try:
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None

SERVER_NAME = "skiff-model-server"
VERSION = "0.1.0"

MODEL_EXTENSIONS = {
    "sklearn": (".joblib", ".pkl", ".pickle"),
    "xgboost": (".bst", ".json", ".ubj"),
    "pytorch": (".pt", ".pth", ".torchscript"),
}
PLATFORMS = {"sklearn": "sklearn", "xgboost": "xgboost", "pytorch": "pytorch_libtorch",
             "tensorflow": "tensorflow_savedmodel"}
# every --format: the file-based ones, and TensorFlow's SavedModel directories
FORMATS = (*MODEL_EXTENSIONS, "tensorflow")

MAX_HEAD_BYTES = 64 * 1024
KEEP_ALIVE_SECONDS = 65.0  # longer than the idle timeout of the proxies in front
SHUTDOWN_GRACE_SECONDS = 25.0
# Requests with bodies at least this large run on a thread pool when the model's predict releases the
# GIL (XGBoost, TorchScript): two large XGBoost batches then use two cores (measured: 1024-row batches
# at 4 connections on 2 cores, about 700 instead of 450 requests/s). scikit-learn's predict holds the
# GIL for most of its time and gained nothing, and small requests lose more to the thread hand-off than
# they could gain, so those run on the event loop.
OFFLOAD_BYTES = 64 * 1024


class HttpError(Exception):
    """An error answered as {"error": message} with the given status."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


# ---------------------------------------------------------------------------------------------------
# JSON

def _json_default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, (bytes, bytearray)):
        return bytes(o).decode("utf-8", "replace")
    if hasattr(o, "to_dict"):  # pandas
        return o.to_dict(orient="records") if hasattr(o, "columns") else o.tolist()
    raise TypeError(f"{type(o).__name__} is not JSON serializable")


if orjson is not None:
    _ORJSON_OPTS = orjson.OPT_SERIALIZE_NUMPY

    def dumps(obj):
        try:
            return orjson.dumps(obj, default=_json_default, option=_ORJSON_OPTS)
        except TypeError:  # e.g. a non-contiguous or object array: go through Python lists
            return json.dumps(obj, default=_json_default, separators=(",", ":")).encode()

    loads = orjson.loads
else:
    def dumps(obj):
        return json.dumps(obj, default=_json_default, separators=(",", ":")).encode()

    loads = json.loads


# ---------------------------------------------------------------------------------------------------
# V2 datatypes

V2_TO_NUMPY = {
    "BOOL": np.dtype(np.bool_),
    "UINT8": np.dtype(np.uint8), "UINT16": np.dtype(np.uint16),
    "UINT32": np.dtype(np.uint32), "UINT64": np.dtype(np.uint64),
    "INT8": np.dtype(np.int8), "INT16": np.dtype(np.int16),
    "INT32": np.dtype(np.int32), "INT64": np.dtype(np.int64),
    "FP16": np.dtype(np.float16), "FP32": np.dtype(np.float32), "FP64": np.dtype(np.float64),
}
NUMPY_KIND_TO_V2 = {("b", 1): "BOOL", ("u", 1): "UINT8", ("u", 2): "UINT16", ("u", 4): "UINT32",
                    ("u", 8): "UINT64", ("i", 1): "INT8", ("i", 2): "INT16", ("i", 4): "INT32",
                    ("i", 8): "INT64", ("f", 2): "FP16", ("f", 4): "FP32", ("f", 8): "FP64"}


def v2_datatype(arr):
    return NUMPY_KIND_TO_V2.get((arr.dtype.kind, arr.dtype.itemsize), "BYTES")


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _check_ints(name, arr, dtype):
    if arr.size == 0:
        return
    info = np.iinfo(dtype)
    lo, hi = arr.min(), arr.max()
    if lo < info.min or hi > info.max:
        raise HttpError(400, f"input '{name}': value out of range for its datatype")


def json_tensor(name, datatype, shape, data):
    """The numpy array of one V2 JSON input whose data is nested or flat, row-major."""
    n = _prod(shape)
    if datatype == "BYTES":
        flat = data
        if isinstance(data, list) and any(isinstance(x, list) for x in data):
            flat = np.asarray(data, dtype=object).ravel().tolist() if data else []
        if not isinstance(flat, list):
            flat = [flat]
        if len(flat) != n:
            raise HttpError(400, f"input '{name}': shape {shape} needs {n} elements, data has {len(flat)}")
        for x in flat:
            if not isinstance(x, str):
                raise HttpError(400, f"input '{name}': BYTES data must be strings")
        arr = np.empty(n, dtype=object)
        arr[:] = flat
        return arr.reshape(shape)
    if datatype == "FP16":
        raise HttpError(400, f"input '{name}': Receiving FP16 data via JSON is not supported. "
                             "Please use the binary data format")
    dtype = V2_TO_NUMPY.get(datatype)
    if dtype is None:
        raise HttpError(400, f"input '{name}': unsupported datatype '{datatype}'")
    try:
        raw = np.asarray(data)
    except (ValueError, TypeError):
        raise HttpError(400, f"input '{name}': data is not a rectangular array") from None
    if raw.size != n:
        raise HttpError(400, f"input '{name}': shape {shape} needs {n} elements, data has {raw.size}")
    kind = raw.dtype.kind
    if n == 0:
        return np.zeros(shape, dtype=dtype)
    if dtype.kind == "b":
        if kind != "b":
            raise HttpError(400, f"input '{name}': BOOL data must be true/false")
    elif dtype.kind in "iu":
        if kind not in "iu":
            if kind == "f" and np.all(np.isfinite(raw)) and np.all(raw == np.floor(raw)):
                pass  # 3.0 for an integer tensor is fine
            else:
                raise HttpError(400, f"input '{name}': {datatype} data must be integers")
        _check_ints(name, raw, dtype)
    else:  # FP32, FP64
        if kind not in "iuf":
            raise HttpError(400, f"input '{name}': {datatype} data must be numbers")
    return raw.astype(dtype, copy=False).reshape(shape)


def binary_tensor(name, datatype, shape, chunk):
    n = _prod(shape)
    if datatype == "BYTES":
        items = []
        off, end = 0, len(chunk)
        while off < end:
            if off + 4 > end:
                raise HttpError(400, f"input '{name}': truncated BYTES element")
            ln = int.from_bytes(chunk[off:off + 4], "little")
            off += 4
            if off + ln > end:
                raise HttpError(400, f"input '{name}': truncated BYTES element")
            items.append(bytes(chunk[off:off + ln]))
            off += ln
        if len(items) != n:
            raise HttpError(400, f"input '{name}': shape {shape} needs {n} elements, data has {len(items)}")
        arr = np.empty(n, dtype=object)
        arr[:] = items
        return arr.reshape(shape)
    dtype = V2_TO_NUMPY.get(datatype)
    if dtype is None:
        raise HttpError(400, f"input '{name}': unsupported datatype '{datatype}'")
    if len(chunk) != n * dtype.itemsize:
        raise HttpError(400, f"input '{name}': shape {shape} of {datatype} needs {n * dtype.itemsize} bytes, "
                             f"binary_data_size is {len(chunk)}")
    return np.frombuffer(chunk, dtype=dtype.newbyteorder("<")).astype(dtype, copy=False).reshape(shape)


def tensor_bytes(arr):
    """Binary-extension bytes of an output: little-endian, row-major; BYTES length-prefixed."""
    if v2_datatype(arr) == "BYTES":
        parts = []
        for x in arr.ravel().tolist():
            b = x if isinstance(x, bytes) else str(x).encode()
            parts.append(len(b).to_bytes(4, "little"))
            parts.append(b)
        return b"".join(parts)
    return np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()


def json_data(arr):
    if arr.dtype.kind in "OSU":
        return [x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in arr.ravel().tolist()]
    if orjson is not None and arr.dtype.kind in "biuf":
        return np.ascontiguousarray(arr).ravel()
    return arr.ravel().tolist()


# ---------------------------------------------------------------------------------------------------
# Models

class LoadError(Exception):
    pass


def usable_cpus():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def find_model_file(model_dir, fmt):
    """The one model file under model_dir (a directory or a file) and its format."""
    if not os.path.exists(model_dir):
        raise LoadError(f"model_dir {model_dir} does not exist")
    if os.path.isdir(model_dir):
        files = sorted(os.path.join(model_dir, f) for f in os.listdir(model_dir)
                       if os.path.isfile(os.path.join(model_dir, f)))
    else:
        files = [model_dir]
    formats = [fmt] if fmt else list(MODEL_EXTENSIONS)
    found = [(f, k) for f in files for k in formats if f.lower().endswith(MODEL_EXTENSIONS[k])]
    if len(found) > 1:
        raise LoadError("More than one model file is detected, only one is allowed within model_dir: "
                        + ", ".join(os.path.basename(f) for f, _ in found))
    if not found:
        if any(f.lower().endswith(".mar") for f in files):
            raise LoadError("TorchServe model archives (.mar) are not supported; export the model with "
                            "torch.jit.script or torch.jit.trace and serve the TorchScript file (.pt) "
                            "with --format pytorch")
        wanted = ", ".join(e for k in formats for e in MODEL_EXTENSIONS[k])
        raise LoadError(f"Could not find any model file ({wanted}) in the model_dir: {model_dir}")
    return found[0]


class Model:
    """A loaded model: predict(list of numpy inputs) -> list of (name or None, numpy array)."""

    format = ""
    releases_gil = False  # whether predictions of large batches run in parallel on threads

    def __init__(self, name, output_name):
        self.name = name
        self.output_name = output_name

    def predict_v1(self, x):
        raise NotImplementedError

    def predict_v2(self, inputs):
        raise NotImplementedError

    def metadata(self):
        return [], []


class SklearnModel(Model):
    format = "sklearn"

    def __init__(self, name, output_name, path, proba):
        super().__init__(name, output_name)
        import joblib  # also reads plain pickles
        self.model = joblib.load(path)
        if not hasattr(self.model, "predict"):
            raise LoadError(f"{type(self.model).__name__} loaded from {os.path.basename(path)} has no predict()")
        self.proba = proba and hasattr(self.model, "predict_proba")
        self.fn = self.model.predict_proba if self.proba else self.model.predict
        # scikit-learn's own finiteness check costs as much as a small prediction; the server checks
        # numeric arrays itself and lets scikit-learn check (and fail or impute) everything else
        import sklearn
        sklearn.set_config(assume_finite=True)
        self.sklearn = sklearn

    def _predict(self, x):
        if isinstance(x, np.ndarray) and (x.dtype.kind in "biu" or (x.dtype.kind == "f" and np.isfinite(x).all())):
            return self.fn(x)
        with self.sklearn.config_context(assume_finite=False):
            return self.fn(x)

    def predict_v1(self, x):
        return self._predict(x)

    def predict_v2(self, inputs):
        # like KServe's sklearn server, the model sees the first input only
        return [(self.output_name, np.asarray(self._predict(inputs[0][1])))]

    def metadata(self):
        n = getattr(self.model, "n_features_in_", None)
        ins = [{"name": "input-0", "datatype": "FP64", "shape": [-1, int(n)] if n is not None else [-1, -1]}]
        classes = getattr(self.model, "classes_", None)
        if self.proba and classes is not None:
            out = {"name": self.output_name, "datatype": "FP64", "shape": [-1, len(classes)]}
        elif classes is not None:
            out = {"name": self.output_name, "datatype": v2_datatype(np.asarray(classes)), "shape": [-1]}
        else:
            out = {"name": self.output_name, "datatype": "FP64", "shape": [-1]}
        return ins, [out]


class XGBoostModel(Model):
    format = "xgboost"
    releases_gil = True

    def __init__(self, name, output_name, path, proba, nthread):
        super().__init__(name, output_name)
        import importlib.util
        import xgboost
        self.xgb = xgboost
        if importlib.util.find_spec("pandas") is None and hasattr(xgboost.data, "_is_pandas_series"):
            # XGBoost tries `import pandas` for every DMatrix, and without pandas each failed import
            # searches sys.path again (a fifth of a small request's time)
            xgboost.data._is_pandas_series = lambda data: False
        self.booster = xgboost.Booster(model_file=path)
        self.nthread = nthread if nthread > 0 else usable_cpus()
        # both the booster and each request's DMatrix: XGBoost's default may start more threads than
        # the Pod has cores, which costs milliseconds per small request
        self.booster.set_param({"nthread": self.nthread})
        try:
            cfg = json.loads(self.booster.save_config())
            self.objective = cfg["learner"]["objective"]["name"]
            self.num_class = int(cfg["learner"]["learner_model_param"].get("num_class", "0"))
        except (KeyError, ValueError):
            self.objective, self.num_class = "", 0
        if proba and self.objective == "multi:softmax":
            # the same trees answer with class probabilities instead of the class index
            self.booster.set_param({"objective": "multi:softprob"})
            self.objective = "multi:softprob"

    def _predict(self, x):
        return self.booster.predict(self.xgb.DMatrix(x, nthread=self.nthread))

    def predict_v1(self, x):
        return self._predict(x)

    def predict_v2(self, inputs):
        return [(self.output_name, np.asarray(self._predict(inputs[0][1])))]

    def metadata(self):
        n = self.booster.num_features()
        ins = [{"name": "input-0", "datatype": "FP32", "shape": [-1, int(n)] if n else [-1, -1]}]
        shape = [-1, self.num_class] if self.objective == "multi:softprob" and self.num_class > 1 else [-1]
        return ins, [{"name": self.output_name, "datatype": "FP32", "shape": shape}]


class TorchModel(Model):
    format = "pytorch"
    releases_gil = True

    def __init__(self, name, output_name, path):
        super().__init__(name, output_name)
        import torch
        self.torch = torch
        self.module = torch.jit.load(path, map_location="cpu")
        self.module.eval()
        try:
            args = self.module.forward.schema.arguments[1:]
            self.input_names = [a.name for a in args]
        except Exception:  # noqa: BLE001 - metadata only
            self.input_names = ["input-0"]

    def _run(self, tensors):
        with self.torch.no_grad():
            return self.module(*tensors)

    def _outputs(self, out):
        torch = self.torch
        if isinstance(out, torch.Tensor):
            return [(self.output_name, out.numpy())]
        if isinstance(out, dict):
            return [(str(k), v.numpy() if isinstance(v, torch.Tensor) else np.asarray(v)) for k, v in out.items()]
        if isinstance(out, (tuple, list)):
            return [(f"output-{i}", v.numpy() if isinstance(v, torch.Tensor) else np.asarray(v))
                    for i, v in enumerate(out)]
        return [(self.output_name, np.asarray(out))]

    def predict_v1(self, x):
        x = np.asarray(x)
        if x.dtype.kind not in "biuf":
            raise HttpError(400, "pytorch models take numeric instances")
        outs = self._outputs(self._run([self.torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))]))
        return outs[0][1] if len(outs) == 1 else [a for _, a in outs]

    def predict_v2(self, inputs):
        tensors = []
        for name, arr in inputs:
            if arr.dtype.kind not in "biuf" or arr.dtype in (np.uint16, np.uint32, np.uint64):
                raise HttpError(400, f"input '{name}': datatype {v2_datatype(arr)} is not supported by pytorch")
            tensors.append(self.torch.from_numpy(np.ascontiguousarray(arr)))
        return self._outputs(self._run(tensors))

    def metadata(self):
        ins = [{"name": n, "datatype": "FP32", "shape": [-1, -1]} for n in self.input_names]
        return ins, [{"name": self.output_name, "datatype": "FP32", "shape": [-1, -1]}]


def find_saved_model(model_dir, name):
    """The SavedModel directory to load and its version, as TF Serving finds it: the highest numbered
    subdirectory of the base path (`model/1/saved_model.pb`), or the base path itself when the
    SavedModel lies there. Triton's layout (`<version>/model.savedmodel/`) is read too."""
    if not os.path.isdir(model_dir):
        raise LoadError(f"model_dir {model_dir} does not exist or is not a directory")

    def is_saved_model(d):
        return any(os.path.isfile(os.path.join(d, f)) for f in ("saved_model.pb", "saved_model.pbtxt"))

    if is_saved_model(model_dir):
        return model_dir, 1
    versions = sorted((int(d) for d in os.listdir(model_dir)
                       if d.isdigit() and os.path.isdir(os.path.join(model_dir, d))), reverse=True)
    if not versions:
        # TF Serving's own message for a base path without version directories
        raise LoadError(f"No versions of servable {name} found under base path {model_dir}. "
                        "Did you forget to name your leaf directory as a number (eg. '/1/')?")
    path = os.path.join(model_dir, str(versions[0]))
    triton = os.path.join(path, "model.savedmodel")
    if not is_saved_model(path) and is_saved_model(triton):
        path = triton
    return path, versions[0]


def _b64_values(v):
    """TF Serving's JSON for binary strings, {"b64": "..."}, as bytes; other strings as UTF-8."""
    if isinstance(v, list):
        return [_b64_values(x) for x in v]
    if isinstance(v, dict):
        if set(v) != {"b64"} or not isinstance(v["b64"], str):
            raise HttpError(400, 'a string value given as an object must be {"b64": "<base64>"}')
        import base64
        import binascii
        try:
            return base64.b64decode(v["b64"], validate=True)
        except binascii.Error as e:
            raise HttpError(400, f"invalid base64: {e}") from None
    if isinstance(v, str):
        return v.encode()
    return v


def _json_strings(arr, binary):
    """A string tensor in TF Serving's JSON: UTF-8 text, or {"b64": ...} for outputs named *_bytes and
    for bytes that are not UTF-8."""
    import base64

    def one(b):
        if not binary:
            try:
                return b.decode("utf-8")
            except UnicodeDecodeError:
                pass
        return {"b64": base64.b64encode(b).decode("ascii")}

    if arr.ndim == 0:
        return one(arr.item())
    return [_json_strings(x, binary) if isinstance(x, np.ndarray) else one(x) for x in arr]


class Signature:
    """One SignatureDef of a SavedModel: its function and named input and output specs."""

    def __init__(self, key, fn):
        self.key = key
        self.fn = fn
        self.inputs = dict(fn.structured_input_signature[1])
        outs = fn.structured_outputs
        self.outputs = dict(outs) if isinstance(outs, dict) else {"output_0": outs}
        self.input_names = sorted(self.inputs)


class TensorFlowModel(Model):
    format = "tensorflow"
    releases_gil = True  # TensorFlow's kernels run without the GIL

    def __init__(self, name, output_name, model_dir):
        super().__init__(name, output_name)
        # TensorFlow's C++ start-up notices (CPU instruction sets, oneDNN) would open every Pod's log
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        path, self.version = find_saved_model(model_dir, name)
        try:
            import tensorflow as tf
        except ImportError as e:
            raise LoadError(f"TensorFlow is not installed in this model server's environment ({e}); "
                            "scripts/setup.sh installs it in .venv-tensorflow") from None
        self.tf = tf
        self.loaded = tf.saved_model.load(path, tags=["serve"])
        self.signatures = {k: Signature(k, fn) for k, fn in self.loaded.signatures.items()}
        if not self.signatures:
            raise LoadError(f"the SavedModel at {path} has no signatures to serve")
        self.path = path

    def signature(self, key):
        key = key or "serving_default"
        sig = self.signatures.get(key)
        if sig is None:
            raise HttpError(400, f'Serving signature key "{key}" not found.')
        return sig

    def _tensor(self, name, spec, value):
        tf = self.tf
        if spec.dtype == tf.string:
            arr = np.asarray(_b64_values(value), dtype=object)
        else:
            arr = value if isinstance(value, np.ndarray) else np.asarray(value)
            if arr.dtype.kind not in "biuf":
                raise HttpError(400, f"input '{name}': {spec.dtype.name} values must be a rectangular array of numbers")
            want = spec.dtype.as_numpy_dtype
            if np.dtype(want).kind in "iu" and arr.dtype.kind == "f" and not np.all(arr == np.floor(arr)):
                raise HttpError(400, f"input '{name}': {spec.dtype.name} values must be integers")
            arr = arr.astype(want, copy=False)
        if not spec.shape.is_compatible_with(arr.shape):
            raise HttpError(400, f"input '{name}': shape {list(arr.shape)} does not fit the signature's "
                                 f"{spec.shape.as_list() if spec.shape.rank is not None else 'shape'}")
        return tf.constant(arr, dtype=spec.dtype)

    def _run(self, sig, named):
        missing = [n for n in sig.input_names if n not in named]
        if missing:
            raise HttpError(400, f"input {', '.join(repr(n) for n in missing)} is missing; signature "
                                 f"'{sig.key}' takes {', '.join(sig.input_names)}")
        extra = [n for n in named if n not in sig.inputs]
        if extra:
            raise HttpError(400, f"input {', '.join(repr(n) for n in extra)} is not an input of signature "
                                 f"'{sig.key}', which takes {', '.join(sig.input_names)}")
        tensors = {n: self._tensor(n, sig.inputs[n], v) for n, v in named.items()}
        out = sig.fn(**tensors)
        if not isinstance(out, dict):
            out = {"output_0": out}
        return {k: v.numpy() for k, v in sorted(out.items())}

    # -- V1: TF Serving's predict API

    def predict_request(self, req):
        """A V1 predict body (already JSON) -> the response body, as TF Serving answers."""
        if "instances" in req and "inputs" in req:
            raise HttpError(400, "Not both 'inputs' and 'instances' can be set")
        sig_name = req.get("signature_name")
        if sig_name is not None and not isinstance(sig_name, str):
            raise HttpError(400, "'signature_name' must be a string")
        sig = self.signature(sig_name)
        if "instances" in req:
            return {"predictions": self._rows(sig, req["instances"])}
        if "inputs" in req:
            return {"outputs": self._columns(sig, req["inputs"])}
        raise HttpError(400, "Missing 'inputs' or 'instances' key")

    def _rows(self, sig, instances):
        if not isinstance(instances, list) or not instances:
            raise HttpError(400, "'instances' must be a non-empty list")
        named = any(isinstance(r, dict) and not (set(r) == {"b64"}) for r in instances)
        if named:
            if not all(isinstance(r, dict) for r in instances):
                raise HttpError(400, "either every instance is an object of named inputs or none is")
            keys = set(instances[0])
            if any(set(r) != keys for r in instances):
                raise HttpError(400, "every instance must name the same inputs")
            cols = {k: [r[k] for r in instances] for k in keys}
        elif len(sig.inputs) == 1:
            cols = {sig.input_names[0]: instances}
        else:
            raise HttpError(400, f"signature '{sig.key}' takes several inputs ({', '.join(sig.input_names)}): "
                                 "each instance must be an object naming them")
        outs = self._run(sig, cols)
        batch = len(instances)
        for k, v in outs.items():
            if v.ndim == 0 or v.shape[0] != batch:
                raise HttpError(400, f"output '{k}' has no batch dimension of {batch} rows; "
                                     "use the columnar format (\"inputs\") for this signature")
        values = {k: self._json(k, v) for k, v in outs.items()}
        if len(values) == 1:
            return next(iter(values.values()))
        return [{k: values[k][i] for k in values} for i in range(batch)]

    def _columns(self, sig, inputs):
        if isinstance(inputs, dict) and not (set(inputs) == {"b64"}):
            cols = inputs
        elif len(sig.inputs) == 1:
            cols = {sig.input_names[0]: inputs}
        else:
            raise HttpError(400, f"signature '{sig.key}' takes several inputs ({', '.join(sig.input_names)}): "
                                 "'inputs' must be an object naming them")
        outs = self._run(sig, cols)
        values = {k: self._json(k, v) for k, v in outs.items()}
        return next(iter(values.values())) if len(values) == 1 else values

    @staticmethod
    def _json(name, arr):
        if arr.dtype.kind in "OSU":
            return _json_strings(arr, name.endswith("_bytes"))
        return arr.tolist()

    def v1_status(self):
        """GET /v1/models/<name>: TF Serving's model status."""
        return {"model_version_status": [{"version": str(self.version), "state": "AVAILABLE",
                                          "status": {"error_code": "OK", "error_message": ""}}]}

    def v1_metadata(self):
        """GET /v1/models/<name>/metadata: the signatures, in the JSON form of TF Serving's SignatureDefMap."""
        from tensorflow.core.framework import types_pb2

        def tensors(specs):
            out = {}
            for k, spec in specs.items():
                dims = [{"size": str(-1 if d is None else d), "name": ""} for d in spec.shape.as_list()] \
                    if spec.shape.rank is not None else []
                out[k] = {"dtype": types_pb2.DataType.Name(spec.dtype.as_datatype_enum),
                          "tensor_shape": {"dim": dims, "unknown_rank": spec.shape.rank is None},
                          "name": getattr(spec, "name", None) or k}
            return out

        defs = {k: {"inputs": tensors(s.inputs), "outputs": tensors(s.outputs), "method_name": "tensorflow/serving/predict"}
                for k, s in self.signatures.items()}
        return {"model_spec": {"name": self.name, "signature_name": "", "version": str(self.version)},
                "metadata": {"signature_def": {"signature_def": defs}}}

    # -- V2

    def predict_v2(self, inputs, signature_name=None):
        sig = self.signature(signature_name)
        if len(inputs) == 1 and len(sig.inputs) == 1:
            named = {sig.input_names[0]: inputs[0][1]}  # one input: its name need not match
        else:
            named = dict(inputs)
        named = {k: (v.tolist() if v.dtype == object else v) for k, v in named.items()}
        return [(k, v) for k, v in self._run(sig, named).items()]

    def metadata(self):
        sig = self.signatures.get("serving_default") or next(iter(self.signatures.values()))

        def v2(specs):
            out = []
            for k in sorted(specs):
                spec = specs[k]
                dt = "BYTES" if spec.dtype == self.tf.string else v2_datatype(np.zeros(0, spec.dtype.as_numpy_dtype))
                shape = [-1 if d is None else d for d in spec.shape.as_list()] if spec.shape.rank is not None else [-1]
                out.append({"name": k, "datatype": dt, "shape": shape})
            return out

        return v2(sig.inputs), v2(sig.outputs)


def _looks_like_saved_model(model_dir):
    try:
        path, _ = find_saved_model(model_dir, "")
    except LoadError:
        return False
    return os.path.isfile(os.path.join(path, "saved_model.pb")) or os.path.isfile(os.path.join(path, "saved_model.pbtxt"))


def load_model(args):
    if args.format and args.format not in FORMATS:
        raise LoadError(f"unknown --format {args.format}; one of {', '.join(FORMATS)}")
    if args.format == "tensorflow" or (not args.format and _looks_like_saved_model(args.model_dir)):
        return TensorFlowModel(args.model_name, args.output_name, args.model_dir)
    path, fmt = find_model_file(args.model_dir, args.format)
    proba = args.predict_proba or os.environ.get("PREDICT_PROBA", "false").lower() == "true"
    if fmt == "sklearn":
        return SklearnModel(args.model_name, args.output_name, path, proba)
    if fmt == "xgboost":
        return XGBoostModel(args.model_name, args.output_name, path, proba, args.nthread)
    return TorchModel(args.model_name, args.output_name, path)


# ---------------------------------------------------------------------------------------------------
# Metrics (Prometheus text)

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    def __init__(self, model_name):
        self.model_name = model_name
        self.requests = {}  # (endpoint, status) -> count
        self.buckets = [0] * (len(LATENCY_BUCKETS) + 1)
        self.latency_sum = 0.0
        self.latency_count = 0
        self.lock = threading.Lock()  # predictions may finish on pool threads

    def request(self, endpoint, status):
        key = (endpoint, status)
        self.requests[key] = self.requests.get(key, 0) + 1

    def predict(self, seconds):
        with self.lock:
            self.buckets[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
            self.latency_sum += seconds
            self.latency_count += 1

    def render(self):
        m = self.model_name.replace("\\", "\\\\").replace('"', '\\"')
        lines = ["# HELP skiff_model_server_requests_total HTTP requests answered, by endpoint and status code.",
                 "# TYPE skiff_model_server_requests_total counter"]
        for (endpoint, status), n in sorted(self.requests.items()):
            lines.append(f'skiff_model_server_requests_total{{endpoint="{endpoint}",code="{status}"}} {n}')
        lines += ["# HELP request_predict_seconds Time spent in the model's predict, per request.",
                  "# TYPE request_predict_seconds histogram"]
        acc = 0
        for le, n in zip(LATENCY_BUCKETS, self.buckets):
            acc += n
            lines.append(f'request_predict_seconds_bucket{{model_name="{m}",le="{le}"}} {acc}')
        lines.append(f'request_predict_seconds_bucket{{model_name="{m}",le="+Inf"}} {self.latency_count}')
        lines.append(f'request_predict_seconds_sum{{model_name="{m}"}} {self.latency_sum}')
        lines.append(f'request_predict_seconds_count{{model_name="{m}"}} {self.latency_count}')
        return ("\n".join(lines) + "\n").encode()


# ---------------------------------------------------------------------------------------------------
# Request handling

REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
           411: "Length Required", 413: "Payload Too Large", 431: "Request Header Fields Too Large",
           500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable",
           505: "HTTP Version Not Supported"}
JSON_TYPE = b"application/json"
OCTET_TYPE = b"application/octet-stream"
TEXT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"


class Response:
    __slots__ = ("status", "body", "content_type", "extra")

    def __init__(self, status, body, content_type=JSON_TYPE, extra=b""):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.extra = extra  # additional raw header lines, each ending in \r\n


def error_response(status, message):
    return Response(status, dumps({"error": message}))


def _is_json_type(ct):
    ct = ct.split(";", 1)[0].strip().lower()
    return ct == "application/json" or ct.endswith("+json") or ct == "text/json"


def _sniff_json(body):
    for b in body[:64]:
        if b in b" \t\r\n":
            continue
        return b == 0x7B  # '{'
    return False


class App:
    """Routing and the V1/V2 endpoints of one model."""

    def __init__(self, model, metrics):
        self.model = model
        self.name = model.name
        self.metrics = metrics
        ins, outs = model.metadata()
        self.metadata_body = dumps({"name": model.name, "platform": PLATFORMS[model.format],
                                    "inputs": ins, "outputs": outs})
        self.static = {
            "/": dumps({"status": "alive"}),
            "/v1/models": dumps({"models": [model.name]}),
            "/v2": dumps({"name": SERVER_NAME, "version": VERSION, "extensions": ["binary_tensor_data"]}),
            "/v2/health/live": dumps({"live": True}),
            "/v2/health/ready": dumps({"ready": True}),
            "/v2/models": dumps({"models": [model.name]}),
        }
        self.v1_ready = dumps({"name": model.name, "ready": True})
        # a SavedModel answers V1 as TF Serving does: its request formats, status and metadata
        self.tf_serving = isinstance(model, TensorFlowModel)
        if self.tf_serving:
            self.v1_ready = dumps(model.v1_status())
            self.v1_metadata = dumps(model.v1_metadata())

    def handle(self, method, path, headers, body):
        """-> (endpoint label for metrics, Response)."""
        q = path.find("?")
        if q >= 0:
            path = path[:q]
        static = self.static.get(path)
        if static is not None:
            if method != "GET":
                return "other", self._405("GET")
            return "health", Response(200, static)
        if path == "/metrics":
            if method != "GET":
                return "other", self._405("GET")
            return "metrics", Response(200, self.metrics.render(), TEXT_TYPE)
        if path.startswith("/v1/models/"):
            rest = path[11:]
            verb = None
            for sep in (":", "%3A", "%3a"):
                i = rest.rfind(sep)
                if i >= 0:
                    rest, verb = rest[:i], rest[i + len(sep):]
                    break
            if self.tf_serving:
                rest, extra, ok = self._tf_serving_path(rest)
                if not ok:
                    return "v1", error_response(404, f"Servable not found for request: {path}")
                if extra == "metadata" and verb is None:
                    if method != "GET":
                        return "other", self._405("GET")
                    if rest != self.name:
                        return "v1", self._404(rest)
                    return "v1", Response(200, self.v1_metadata)
            if verb is None:
                if method != "GET":
                    return "other", self._405("GET")
                if rest != self.name:
                    return "v1", self._404(rest)
                return "v1", Response(200, self.v1_ready)
            if verb != "predict":
                return "other", error_response(404, f"Not found: {path}")
            if method != "POST":
                return "v1", self._405("POST")
            if rest != self.name:
                return "v1", self._404(rest)
            return "v1_predict", self.v1_predict(headers, body)
        if path.startswith("/v2/models/"):
            parts = path[11:].split("/")
            name = parts[0]
            rest = parts[1:]
            if len(rest) >= 2 and rest[0] == "versions":
                rest = rest[2:]  # the server has no versions: any version is the model
            if not rest:
                if method != "GET":
                    return "other", self._405("GET")
                if name != self.name:
                    return "v2", self._404(name)
                return "v2", Response(200, self.metadata_body)
            if rest == ["ready"]:
                if method != "GET":
                    return "other", self._405("GET")
                if name != self.name:
                    return "v2", self._404(name)
                return "v2", Response(200, self.v1_ready)
            if rest == ["infer"]:
                if method != "POST":
                    return "v2", self._405("POST")
                if name != self.name:
                    return "v2", self._404(name)
                return "v2_infer", self.v2_infer(headers, body)
        return "other", error_response(404, f"Not found: {path}")

    def _tf_serving_path(self, rest):
        """TF Serving's `<name>/versions/<n>`, `<name>/labels/<label>` and `<name>/metadata`:
        -> (name, "metadata" or "", whether the version is the one loaded)."""
        parts = rest.split("/")
        name, tail = parts[0], parts[1:]
        extra = ""
        if tail and tail[-1] == "metadata":
            extra, tail = "metadata", tail[:-1]
        if len(tail) == 2 and tail[0] == "versions":
            return name, extra, tail[1] == str(self.model.version)
        if len(tail) == 2 and tail[0] == "labels":
            return name, extra, False  # no version labels are configured
        return (name, extra, True) if not tail else (rest, "", True)

    @staticmethod
    def _405(allow):
        return Response(405, dumps({"error": "Method not allowed"}), extra=b"Allow: " + allow.encode() + b"\r\n")

    @staticmethod
    def _404(name):
        return error_response(404, f"Model with name {name} does not exist.")

    # -- V1 -----------------------------------------------------------------------------------------

    def v1_predict(self, headers, body):
        ct = headers.get("content-type")
        if ct is not None and not _is_json_type(ct) and not _sniff_json(body):
            return error_response(400, f"Unrecognized request format: content-type {ct} is not JSON")
        try:
            req = loads(body)
        except ValueError as e:
            return error_response(400, f"Unrecognized request format: {e}")
        if not isinstance(req, dict):
            return error_response(400, 'Expected a JSON object with "instances" or "inputs"')
        if self.tf_serving:
            t0 = time.perf_counter()
            try:
                out = self.model.predict_request(req)
            except HttpError as e:
                return error_response(e.status, e.message)
            except Exception as e:  # noqa: BLE001 - TensorFlow's own failure, as TF Serving reports it
                return self._tf_failed(e)
            self.metrics.predict(time.perf_counter() - t0)
            return Response(200, dumps(out))
        rows = req["inputs"] if "inputs" in req else req.get("instances")
        if rows is None:
            return error_response(400, 'Expected "instances" or "inputs" in the request')
        if not isinstance(rows, list):
            return error_response(400, '"instances" must be a list')
        if rows and isinstance(rows[0], dict):
            try:
                import pandas as pd
            except ImportError:
                return error_response(400, "instances given as objects (column name -> value) need pandas, "
                                           "which is not installed here; send each instance as a list of values")
            x = pd.DataFrame(rows)
        else:
            try:
                x = np.asarray(rows)
            except (ValueError, TypeError) as e:
                return error_response(400, f"instances do not form a rectangular array: {e}")
            if x.dtype == object:
                return error_response(400, "instances do not form a rectangular array")
        t0 = time.perf_counter()
        try:
            out = self.model.predict_v1(x)
        except HttpError as e:
            return error_response(e.status, e.message)
        except Exception as e:  # noqa: BLE001 - the model's own failure
            return self._predict_failed(e)
        self.metrics.predict(time.perf_counter() - t0)
        return Response(200, dumps({"predictions": out}))

    @staticmethod
    def _tf_failed(e):
        # a kernel's InvalidArgumentError is the request's fault: TF Serving answers 400 with its message
        msg = getattr(e, "message", None) or str(e)
        status = 400 if type(e).__name__ in ("InvalidArgumentError", "ValueError", "TypeError") else 500
        print(f"{SERVER_NAME}: predict failed: {type(e).__name__}: {msg}", file=sys.stderr, flush=True)
        return error_response(status, msg)

    @staticmethod
    def _predict_failed(e):
        print(f"{SERVER_NAME}: predict failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return error_response(500, f"{type(e).__name__} : {e}")

    # -- V2 -----------------------------------------------------------------------------------------

    def v2_infer(self, headers, body):
        try:
            return self._v2_infer(headers, body)
        except HttpError as e:
            return error_response(e.status, e.message)

    def _v2_infer(self, headers, body):
        hlen = headers.get("inference-header-content-length")
        binary = b""
        if hlen is not None:
            try:
                n = int(hlen)
            except ValueError:
                raise HttpError(400, "Inference-Header-Content-Length is not a number") from None
            if n == 0:
                raise HttpError(400, "requests without a JSON inference header (Inference-Header-Content-Length: 0) "
                                     "are not supported")
            if n < 0 or n > len(body):
                raise HttpError(400, f"Inference-Header-Content-Length {n} is outside the body of {len(body)} bytes")
            mv = memoryview(body)
            head, binary = bytes(mv[:n]), mv[n:]
        else:
            ct = headers.get("content-type")
            if ct is not None and not _is_json_type(ct) and not _sniff_json(body):
                raise HttpError(400, "Unrecognized request format: received byte inputs, but the "
                                     "'inference-header-content-length' header is missing.")
            head = body
        try:
            req = loads(head)
        except ValueError as e:
            raise HttpError(400, f"Unrecognized request format: {e}") from None
        if not isinstance(req, dict):
            raise HttpError(400, "the inference request must be a JSON object")
        raw_inputs = req.get("inputs")
        if not isinstance(raw_inputs, list) or not raw_inputs:
            raise HttpError(400, "the inference request needs a non-empty 'inputs' list")
        params = req.get("parameters")
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            raise HttpError(400, "'parameters' must be an object")

        inputs = []
        off = 0
        for i, spec in enumerate(raw_inputs):
            if not isinstance(spec, dict):
                raise HttpError(400, f"input {i} must be an object")
            name = spec.get("name")
            if not isinstance(name, str):
                raise HttpError(400, f"input {i} has no name")
            shape = spec.get("shape")
            if (not isinstance(shape, list)
                    or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
                raise HttpError(400, f"input '{name}': shape must be a list of non-negative integers")
            datatype = spec.get("datatype")
            if datatype != "BYTES" and datatype not in V2_TO_NUMPY:
                raise HttpError(400, f"input '{name}': unsupported datatype '{datatype}'")
            iparams = spec.get("parameters") or {}
            if not isinstance(iparams, dict):
                raise HttpError(400, f"input '{name}': 'parameters' must be an object")
            size = iparams.get("binary_data_size")
            if size is not None:
                if hlen is None:
                    raise HttpError(400, f"input '{name}': binary_data_size without an "
                                         "Inference-Header-Content-Length header")
                if not isinstance(size, int) or size < 0 or off + size > len(binary):
                    raise HttpError(400, f"input '{name}': binary_data_size {size} exceeds the binary data")
                arr = binary_tensor(name, datatype, shape, binary[off:off + size])
                off += size
            else:
                if "data" not in spec:
                    raise HttpError(400, f"input '{name}' has neither data nor binary_data_size")
                arr = json_tensor(name, datatype, shape, spec["data"])
            inputs.append((name, arr))
        if off != len(binary):
            raise HttpError(400, f"{len(binary) - off} bytes of binary data belong to no input")

        requested = req.get("outputs")
        if requested is not None and not isinstance(requested, list):
            raise HttpError(400, "'outputs' must be a list")

        t0 = time.perf_counter()
        try:
            if self.tf_serving:
                sig = params.get("signature_name")
                results = self.model.predict_v2(inputs, sig if isinstance(sig, str) else None)
            else:
                results = self.model.predict_v2(inputs)
        except HttpError:
            raise
        except Exception as e:  # noqa: BLE001
            return self._tf_failed(e) if self.tf_serving else self._predict_failed(e)
        self.metrics.predict(time.perf_counter() - t0)

        binary_default = bool(params.get("binary_data_output", False))
        chosen = []
        if requested:
            by_name = dict(results)
            for o in requested:
                if not isinstance(o, dict) or not isinstance(o.get("name"), str):
                    raise HttpError(400, "each requested output needs a name")
                arr = by_name.get(o["name"])
                if arr is None:
                    raise HttpError(400, f"output '{o['name']}' does not exist; the model has "
                                         + ", ".join(n for n, _ in results))
                oparams = o.get("parameters") or {}
                chosen.append((o["name"], arr, bool(oparams.get("binary_data", binary_default))))
        else:
            chosen = [(n, a, binary_default) for n, a in results]

        outputs = []
        blobs = []
        for name, arr, as_binary in chosen:
            arr = np.asarray(arr)
            out = {"name": name, "datatype": v2_datatype(arr), "shape": list(arr.shape)}
            if as_binary:
                blob = tensor_bytes(arr)
                out["parameters"] = {"binary_data_size": len(blob)}
                blobs.append(blob)
            else:
                out["data"] = json_data(arr)
            outputs.append(out)
        rid = req.get("id")
        resp = {"model_name": self.name, "id": rid if rid is not None else str(uuid.uuid4()), "outputs": outputs}
        head = dumps(resp)
        if blobs:
            return Response(200, b"".join([head, *blobs]), OCTET_TYPE,
                            b"Inference-Header-Content-Length: %d\r\n" % len(head))
        return Response(200, head)


# ---------------------------------------------------------------------------------------------------
# HTTP/1.1 over asyncio

class HttpServer:
    def __init__(self, app, max_body, pool):
        self.app = app
        self.max_body = max_body
        self.pool = pool  # a ThreadPoolExecutor for large requests, or None
        self.conns = set()
        self.draining = False


class Connection(asyncio.Protocol):
    def __init__(self, server):
        self.server = server
        self.transport = None
        self.buf = bytearray()
        self.head = None  # (method, path, version, headers, keep_alive) of the request whose body is awaited
        self.need = 0  # body bytes awaited; -1: chunked
        self.closing = False
        self.paused = False  # the peer does not read fast enough
        self.busy = False  # a request of this connection runs on the pool; later ones wait (order)
        self.last = time.monotonic()

    # -- asyncio callbacks

    def connection_made(self, transport):
        self.transport = transport
        self.server.conns.add(self)

    def connection_lost(self, exc):
        self.closing = True
        self.server.conns.discard(self)

    def data_received(self, data):
        self.buf += data
        self.last = time.monotonic()
        if not self.paused and not self.busy:
            self.process()

    def pause_writing(self):
        self.paused = True
        self.transport.pause_reading()

    def resume_writing(self):
        self.paused = False
        self.transport.resume_reading()
        self.process()

    def idle(self):
        return self.head is None and not self.buf and not self.busy

    # -- parsing

    def process(self):
        server = self.server
        while not self.closing and not self.paused and not self.busy:
            if self.head is None:
                if not self.read_head():
                    return
            body = self.read_body()
            if body is None:
                return
            method, path, version, headers, keep_alive = self.head
            self.head = None
            if server.pool is not None and len(body) >= OFFLOAD_BYTES:
                self.busy = True
                fut = asyncio.get_running_loop().run_in_executor(server.pool, server.app.handle,
                                                                 method, path, headers, body)
                fut.add_done_callback(lambda f, k=keep_alive, v=version: self.offloaded(f, k, v))
                return
            try:
                endpoint, resp = server.app.handle(method, path, headers, body)
            except Exception as e:  # noqa: BLE001 - never let one request end the server
                traceback.print_exc()
                endpoint, resp = "other", error_response(500, f"{type(e).__name__} : {e}")
            server.app.metrics.request(endpoint, resp.status)
            self.respond(resp, keep_alive and not server.draining, version)

    def offloaded(self, fut, keep_alive, version):
        self.busy = False
        try:
            endpoint, resp = fut.result()
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            endpoint, resp = "other", error_response(500, f"{type(e).__name__} : {e}")
        self.server.app.metrics.request(endpoint, resp.status)
        if self.closing:
            return
        self.respond(resp, keep_alive and not self.server.draining, version)
        self.process()

    def read_head(self):
        buf = self.buf
        while buf[:2] == b"\r\n":  # stray line breaks between requests
            del buf[:2]
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > MAX_HEAD_BYTES:
                self.fail(431, "request head too large")
            return False
        if end > MAX_HEAD_BYTES:
            self.fail(431, "request head too large")
            return False
        lines = bytes(buf[:end]).split(b"\r\n")
        del buf[:end + 4]
        try:
            method, target, version = lines[0].decode("latin-1").split(" ")
        except ValueError:
            self.fail(400, "malformed request line")
            return False
        if version not in ("HTTP/1.1", "HTTP/1.0"):
            if version.startswith("HTTP/"):
                self.fail(505, f"{version} is not supported")
            else:
                self.fail(400, "malformed request line")
            return False
        if not target.startswith("/"):
            if target.startswith(("http://", "https://")):  # absolute form
                i = target.find("/", target.find("//") + 2)
                target = target[i:] if i >= 0 else "/"
            else:
                self.fail(400, "malformed request target")
                return False
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep or not name or name != name.strip() or b" " in name:
                self.fail(400, "malformed header line")
                return False
            key = name.decode("latin-1").lower()
            value = value.strip().decode("latin-1")
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        conn = headers.get("connection", "").lower()
        keep_alive = "close" not in conn if version == "HTTP/1.1" else "keep-alive" in conn
        te = headers.get("transfer-encoding")
        if te is not None:
            if te.lower() != "chunked":
                self.fail(501, f"transfer-encoding {te} is not supported")
                return False
            self.need = -1
        else:
            cl = headers.get("content-length")
            if cl is None:
                self.need = 0
            else:
                if not cl.isdigit():
                    self.fail(400, "malformed Content-Length")
                    return False
                self.need = int(cl)
                if self.need > self.server.max_body:
                    self.fail(413, f"request body of {self.need} bytes exceeds the limit of "
                                   f"{self.server.max_body} bytes")
                    return False
        self.head = (method, target, version, headers, keep_alive)
        if self.need != 0 and headers.get("expect", "").lower() == "100-continue" and len(buf) == 0:
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        return True

    def read_body(self):
        buf = self.buf
        need = self.need
        if need == 0:
            return b""
        if need > 0:
            if len(buf) < need:
                return None
            body = bytes(buf[:need]) if len(buf) > need else bytes(buf)
            del buf[:need]
            return body
        # chunked: decode only once the whole body is here
        pos = 0
        parts = []
        total = 0
        while True:
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                if len(buf) - pos > 1024:
                    self.fail(400, "malformed chunk size")
                return None
            size_s = bytes(buf[pos:eol]).split(b";", 1)[0].strip()
            try:
                size = int(size_s, 16)
            except ValueError:
                self.fail(400, "malformed chunk size")
                return None
            if size < 0:
                self.fail(400, "malformed chunk size")
                return None
            if size == 0:
                end = buf.find(b"\r\n\r\n", eol)  # trailers end with an empty line
                if end < 0 and buf[eol:eol + 4] != b"\r\n\r\n":
                    if len(buf) - eol > MAX_HEAD_BYTES:
                        self.fail(400, "malformed chunked trailer")
                    return None
                del buf[:end + 4]
                return b"".join(parts)
            total += size
            if total > self.server.max_body:
                self.fail(413, f"request body exceeds the limit of {self.server.max_body} bytes")
                return None
            start = eol + 2
            if len(buf) < start + size + 2:
                return None
            if buf[start + size:start + size + 2] != b"\r\n":
                self.fail(400, "malformed chunk")
                return None
            parts.append(bytes(buf[start:start + size]))
            pos = start + size + 2

    # -- writing

    def respond(self, resp, keep_alive, version="HTTP/1.1"):
        status = resp.status
        head = b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s" % (
            status, REASONS.get(status, "Unknown").encode(), resp.content_type, len(resp.body), resp.extra)
        if not keep_alive:
            head += b"Connection: close\r\n"
        elif version == "HTTP/1.0":
            head += b"Connection: keep-alive\r\n"
        self.transport.write(head + b"\r\n" + resp.body)
        if not keep_alive:
            self.close()

    def fail(self, status, message):
        """Answer a request whose framing cannot be trusted, then close the connection."""
        self.head = None
        self.buf.clear()
        self.server.app.metrics.request("other", status)
        self.respond(error_response(status, message), False)

    def close(self):
        self.closing = True
        self.buf.clear()
        self.transport.close()


# ---------------------------------------------------------------------------------------------------
# The same App as an ASGI application, for serving on uvicorn (--http_server uvicorn): the serving bench
# (bench/serving.ts) measures it against the server above, with the same routing and model code.

def _extra_headers(extra):
    out = []
    for line in extra.split(b"\r\n"):
        if line:
            name, _, value = line.partition(b":")
            out.append((name.strip().lower(), value.strip()))
    return out


def asgi_app(server):
    app = server.app
    metrics = app.metrics
    loop_box = []

    async def send_response(send, resp):
        headers = [(b"content-type", resp.content_type), (b"content-length", b"%d" % len(resp.body))]
        if resp.extra:
            headers += _extra_headers(resp.extra)
        await send({"type": "http.response.start", "status": resp.status, "headers": headers})
        await send({"type": "http.response.body", "body": resp.body})

    async def asgi(scope, receive, send):
        if scope["type"] != "http":
            return
        headers = {}
        for k, v in scope["headers"]:
            key = k.decode("latin-1")
            value = v.decode("latin-1")
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        cl = headers.get("content-length")
        if cl is not None and cl.isdigit() and int(cl) > server.max_body:
            metrics.request("other", 413)
            await send_response(send, error_response(413, f"the request body is larger than {server.max_body} bytes"))
            return
        chunks = []
        size = 0
        while True:
            msg = await receive()
            chunk = msg.get("body", b"")
            if chunk:
                chunks.append(chunk)
                size += len(chunk)
                if size > server.max_body:
                    metrics.request("other", 413)
                    await send_response(send, error_response(413, f"the request body is larger than {server.max_body} bytes"))
                    return
            if not msg.get("more_body", False):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        # raw_path keeps the percent-encoding App.handle routes on (":predict" may come as "%3Apredict")
        path = scope.get("raw_path") or scope["path"].encode()
        path = path.decode("latin-1")
        try:
            if server.pool is not None and len(body) >= OFFLOAD_BYTES:
                if not loop_box:
                    loop_box.append(asyncio.get_running_loop())
                endpoint, resp = await loop_box[0].run_in_executor(server.pool, app.handle, scope["method"], path, headers, body)
            else:
                endpoint, resp = app.handle(scope["method"], path, headers, body)
        except Exception as e:  # noqa: BLE001 - never let one request end the server
            traceback.print_exc()
            endpoint, resp = "other", error_response(500, f"{type(e).__name__} : {e}")
        metrics.request(endpoint, resp.status)
        await send_response(send, resp)

    return asgi


async def serve_uvicorn(args, server, sock, stop):
    """Runs the App on uvicorn with httptools on the already-bound socket until `stop` is set."""
    import uvicorn

    class Server(uvicorn.Server):
        # the caller owns the signals: uvicorn would re-raise SIGTERM after its graceful shutdown, and
        # the Pod must exit 0 once in-flight requests are finished
        def capture_signals(self):
            import contextlib
            return contextlib.nullcontext()

    config = uvicorn.Config(asgi_app(server), http="httptools", lifespan="off", access_log=False,
                            log_level="warning", server_header=False, date_header=False,
                            timeout_keep_alive=int(KEEP_ALIVE_SECONDS),
                            timeout_graceful_shutdown=int(SHUTDOWN_GRACE_SECONDS), backlog=1024)
    srv = Server(config)

    async def watch():
        await stop.wait()
        srv.should_exit = True

    watcher = asyncio.get_running_loop().create_task(watch())
    await srv.serve(sockets=[sock])
    watcher.cancel()


# ---------------------------------------------------------------------------------------------------
# Main

def parse_args(argv):
    p = argparse.ArgumentParser(prog=SERVER_NAME, description="Serve one model over KServe V1 and V2 REST.")
    p.add_argument("--model_name", required=True, help="the name in request paths")
    p.add_argument("--model_dir", required=True, help="a directory holding exactly one model file, or the file")
    p.add_argument("--http_port", type=int, default=8080, help="0 picks a free port")
    p.add_argument("--http_host", default="0.0.0.0")
    p.add_argument("--format", choices=sorted(FORMATS),
                   help="default: from the model file's extension (a SavedModel directory: tensorflow)")
    p.add_argument("--output_name", default="output-0", help="name of the V2 output")
    p.add_argument("--predict_proba", action="store_true",
                   help="classifiers answer with class probabilities (also env PREDICT_PROBA=true)")
    p.add_argument("--max_body_bytes", type=int, default=64 * 1024 * 1024)
    p.add_argument("--nthread", type=int, default=1, help="XGBoost threads per prediction (0: one per CPU)")
    p.add_argument("--predict_threads", type=int, default=-1,
                   help="threads for requests over 64 KiB; 0: all on the event loop; default: one per CPU for "
                        "XGBoost and TorchScript models, none for scikit-learn")
    p.add_argument("--http_server", choices=("builtin", "uvicorn"), default="builtin",
                   help="the HTTP/1.1 server: the one in this file (what Pods run), or uvicorn with httptools "
                        "(ASGI), which the serving bench measures against it")
    return p.parse_args(argv)


def fail_to_load(e):
    msg = f"{type(e).__name__}: {e}"
    print(f"{SERVER_NAME}: failed to load model: {msg}", file=sys.stderr, flush=True)
    path = os.environ.get("SKIFF_TERMINATION_LOG")
    if path:
        try:
            with open(path, "w") as f:
                f.write(msg)
        except OSError:
            pass
    sys.exit(1)


async def serve(args, model, t_load):
    loop = asyncio.get_running_loop()
    threads = args.predict_threads
    if threads < 0:
        threads = usable_cpus() if model.releases_gil else 0
    pool = None
    if threads > 1:
        import concurrent.futures
        pool = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="predict")
    server = HttpServer(App(model, Metrics(model.name)), args.max_body_bytes, pool)
    if args.http_server == "uvicorn":
        await serve_on_uvicorn(args, model, t_load, server)
        return
    srv = await loop.create_server(lambda: Connection(server), args.http_host, args.http_port,
                                   reuse_address=True, backlog=1024)
    port = srv.sockets[0].getsockname()[1]
    host = f"[{args.http_host}]" if ":" in args.http_host else args.http_host
    print(f"{SERVER_NAME}: model {model.name} loaded ({model.format}) in {t_load * 1000:.0f} ms; "
          f"listening on {host}:{port}", flush=True)

    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async def sweep():
        # closes connections idle for longer than the keep-alive timeout
        while True:
            await asyncio.sleep(5)
            now = time.monotonic()
            for c in list(server.conns):
                if now - c.last > KEEP_ALIVE_SECONDS and not c.busy:
                    c.close()

    sweeper = loop.create_task(sweep())
    await stop.wait()
    # stop accepting, close idle connections, let the others finish the request they are in
    srv.close()
    server.draining = True
    for c in list(server.conns):
        if c.idle():
            c.close()
    deadline = time.monotonic() + SHUTDOWN_GRACE_SECONDS
    while server.conns and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    sweeper.cancel()
    for c in list(server.conns):
        c.transport.abort()
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


async def serve_on_uvicorn(args, model, t_load, server):
    import socket

    loop = asyncio.get_running_loop()
    family = socket.AF_INET6 if ":" in args.http_host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.http_host, args.http_port))
    sock.listen(1024)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    host = f"[{args.http_host}]" if ":" in args.http_host else args.http_host
    print(f"{SERVER_NAME}: model {model.name} loaded ({model.format}) in {t_load * 1000:.0f} ms; "
          f"listening on {host}:{port} (uvicorn)", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await serve_uvicorn(args, server, sock, stop)
    finally:
        if server.pool is not None:
            server.pool.shutdown(wait=False, cancel_futures=True)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    t0 = time.perf_counter()
    try:
        model = load_model(args)
    except Exception as e:  # noqa: BLE001 - any failure to load ends the process with its reason
        fail_to_load(e)
    t_load = time.perf_counter() - t0
    if uvloop is not None and os.environ.get("SKIFF_MODEL_SERVER_LOOP", "") != "asyncio":
        uvloop.install()
    try:
        asyncio.run(serve(args, model, t_load))
    except OSError as e:  # e.g. the port is taken
        print(f"{SERVER_NAME}: cannot listen on {args.http_host}:{args.http_port}: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
