"""NVIDIA's GPU pipeline, made honest on CPU: preprocess images, train a small ResNet, export it for
inference, and serve it with KServe's Triton runtime. The web app beside this file (webapp.py) lets a
person upload an image and see the class.

Compile with:  .venv/bin/python examples/stories/gpu-pipeline/gpu_pipeline.py  (writes gpu_pipeline.yaml)

The steps:
  preprocess  draws a small labelled set of shapes (circle, square, triangle; nothing is downloaded),
              resizes each image to 32x32 and normalises it with the set's per-channel mean and std
  train       trains a small ResNet (three residual blocks, written here: there is no torchvision) on CPU
  export      exports it to ONNX in Triton's model-repository layout (<dir>/1/model.onnx). TensorRT
              needs an NVIDIA GPU and its libraries; where they are not, the step says so in its
              output's metadata and the ONNX model is what is served
  deploy      creates (or replaces) the InferenceService from inside its Pod with the Pod's in-cluster
              credentials, `modelFormat: onnx` with `protocolVersion: v2` (KServe picks
              kserve-tritonserver), and a ConfigMap holding the preprocessing the web app repeats
"""
from kfp import compiler, dsl
from kfp.dsl import Dataset, Input, Metrics, Model, Output


@dsl.component(base_image="python:3.11")
def preprocess(images: Output[Dataset], per_class: int = 100, size: int = 32, seed: int = 0):
    import json
    import os

    import numpy as np
    from PIL import Image, ImageDraw

    classes = ["circle", "square", "triangle"]
    rng = np.random.default_rng(seed)
    raw = 64

    def draw(kind):
        # a shape of random size, place and colour on a dark, noisy background
        bg = tuple(int(v) for v in rng.integers(0, 90, 3))
        fg = tuple(int(v) for v in rng.integers(140, 256, 3))
        img = Image.new("RGB", (raw, raw), bg)
        d = ImageDraw.Draw(img)
        r = int(rng.integers(12, 26))
        cx, cy = (int(v) for v in rng.integers(r + 2, raw - r - 2, 2))
        if kind == "circle":
            d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=fg)
        elif kind == "square":
            d.rectangle([cx - r, cy - r, cx + r, cy + r], fill=fg)
        else:
            d.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=fg)
        noise = rng.normal(0, 12, (raw, raw, 3))
        return Image.fromarray(np.clip(np.asarray(img, dtype=np.float64) + noise, 0, 255).astype(np.uint8))

    os.makedirs(images.path, exist_ok=True)
    xs, ys = [], []
    for label, kind in enumerate(classes):
        os.makedirs(os.path.join(images.path, "raw", kind), exist_ok=True)
        for i in range(per_class):
            img = draw(kind)
            img.save(os.path.join(images.path, "raw", kind, f"{i:03d}.png"))
            # the preprocessing the web app repeats for an upload: RGB, bilinear resize, 0..1
            small = img.convert("RGB").resize((size, size), Image.BILINEAR)
            xs.append(np.asarray(small, dtype=np.float32) / 255.0)
            ys.append(label)
    x = np.stack(xs).transpose(0, 3, 1, 2)  # N, C, H, W
    mean = x.mean(axis=(0, 2, 3))
    std = x.std(axis=(0, 2, 3))
    x = (x - mean[None, :, None, None]) / std[None, :, None, None]
    np.savez_compressed(os.path.join(images.path, "tensors.npz"), x=x.astype(np.float32), y=np.array(ys, dtype=np.int64))
    spec = {"classes": classes, "size": size, "mean": [float(v) for v in mean], "std": [float(v) for v in std], "resample": "bilinear"}
    with open(os.path.join(images.path, "preprocess.json"), "w") as f:
        json.dump(spec, f, indent=1)
    images.metadata.update({"images": len(ys), "classes": classes, "size": size})


@dsl.component(base_image="python:3.11")
def train(images: Input[Dataset], model: Output[Model], metrics: Output[Metrics], epochs: int = 12, seed: int = 0):
    import json
    import os
    import shutil

    import numpy as np
    import torch
    from torch import nn

    torch.manual_seed(seed)
    torch.set_num_threads(1)

    class Block(nn.Module):
        """A ResNet basic block: two 3x3 convolutions and the shortcut (a 1x1 one where the shape changes)."""

        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.short = nn.Sequential() if stride == 1 and cin == cout else nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(out)) + self.short(x))

    class ResNet(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
            self.blocks = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
            self.head = nn.Linear(64, classes)

        def forward(self, x):
            return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))

    data = np.load(os.path.join(images.path, "tensors.npz"))
    x, y = torch.from_numpy(data["x"]), torch.from_numpy(data["y"])
    with open(os.path.join(images.path, "preprocess.json")) as f:
        spec = json.load(f)
    order = torch.randperm(len(y))
    n_test = len(y) // 5
    test_idx, train_idx = order[:n_test], order[n_test:]
    net = ResNet(len(spec["classes"]))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    losses = []
    for epoch in range(epochs):
        net.train()
        total = 0.0
        for batch in train_idx[torch.randperm(len(train_idx))].split(32):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(x[batch]), y[batch])
            loss.backward()
            opt.step()
            total += float(loss) * len(batch)
        losses.append(total / len(train_idx))
        print(f"epoch {epoch + 1}/{epochs} loss {losses[-1]:.4f}", flush=True)
    # BatchNorm's running statistics, averaged over a few dozen steps of a moving network, do not yet
    # fit the final weights: one pass over the training set in training mode, without learning, sets them
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.reset_running_stats()
                m.momentum = None  # a plain average over the pass
        net.train()
        for batch in train_idx.split(64):
            net(x[batch])
    net.eval()
    with torch.no_grad():
        accuracy = float((net(x[test_idx]).argmax(1) == y[test_idx]).float().mean())
    print(f"held-out accuracy {accuracy:.3f} on {n_test} images", flush=True)
    metrics.log_metric("accuracy", accuracy)
    metrics.log_metric("first_loss", losses[0])
    metrics.log_metric("last_loss", losses[-1])
    os.makedirs(model.path, exist_ok=True)
    torch.save(net.state_dict(), os.path.join(model.path, "state.pt"))
    # the same network as TorchScript: loadable (and exportable) without this file's class definitions
    torch.jit.trace(net, x[:1]).save(os.path.join(model.path, "model.pt"))
    shutil.copy(os.path.join(images.path, "preprocess.json"), os.path.join(model.path, "preprocess.json"))
    model.metadata.update({"framework": "pytorch", "accuracy": accuracy})


@dsl.component(base_image="python:3.11")
def export(model: Input[Model], onnx_model: Output[Model]):
    import json
    import os
    import shutil

    import torch

    net = torch.jit.load(os.path.join(model.path, "model.pt"))
    net.eval()
    with open(os.path.join(model.path, "preprocess.json")) as f:
        spec = json.load(f)
    version = os.path.join(onnx_model.path, "1")
    os.makedirs(version, exist_ok=True)
    example = torch.zeros(1, 3, spec["size"], spec["size"])
    # Triton's layout: <repository>/<version>/model.onnx; the batch dimension is free
    torch.onnx.export(net, example, os.path.join(version, "model.onnx"), input_names=["input"], output_names=["scores"],
                      dynamic_axes={"input": {0: "batch"}, "scores": {0: "batch"}}, opset_version=13)
    shutil.copy(os.path.join(model.path, "preprocess.json"), os.path.join(onnx_model.path, "preprocess.json"))
    # TensorRT: an engine is built only for an NVIDIA GPU, with TensorRT's libraries installed
    try:
        import tensorrt  # noqa: F401
        have_trt = True
    except ImportError:
        have_trt = False
    if not torch.cuda.is_available():
        trt = "not built: no NVIDIA GPU here (torch.cuda.is_available() is False); the ONNX model is served"
    elif not have_trt:
        trt = "not built: TensorRT's Python package is not installed; the ONNX model is served"
    else:
        trt = "not built: this pipeline serves the ONNX model; build an engine with trtexec --onnx=model.onnx on the GPU that serves it"
    print("TensorRT:", trt, flush=True)
    onnx_model.metadata.update({"framework": "onnx", "input": "input", "output": "scores", "classes": spec["classes"], "tensorrt": trt})


@dsl.component(base_image="python:3.11")
def deploy(onnx_model: Input[Model], name: str = "shapes-resnet", timeout: int = 300) -> str:
    import json
    import os
    import time

    from kubernetes import client, config

    try:
        config.load_incluster_config()
    except config.ConfigException:
        # a task the warm interpreter forked runs outside the Pod's sandbox: the service-account
        # files lie where KF_PIPELINES_SA_TOKEN_PATH names them
        from kubernetes.config.incluster_config import InClusterConfigLoader
        where = os.path.dirname(os.environ["KF_PIPELINES_SA_TOKEN_PATH"])
        InClusterConfigLoader(token_filename=os.path.join(where, "token"), cert_filename=os.path.join(where, "ca.crt")).load_and_set()
    sa_dir = os.path.dirname(os.environ.get("KF_PIPELINES_SA_TOKEN_PATH", "/var/run/secrets/kubernetes.io/serviceaccount/token"))
    namespace = os.environ.get("POD_NAMESPACE") or open(os.path.join(sa_dir, "namespace")).read().strip()

    core = client.CoreV1Api()
    with open(os.path.join(onnx_model.path, "preprocess.json")) as f:
        spec = f.read()
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"{name}-preprocess", labels={"app": name}), data={"preprocess.json": spec})
    try:
        core.create_namespaced_config_map(namespace, cm)
    except client.ApiException as e:
        if e.status != 409:
            raise
        core.replace_namespaced_config_map(f"{name}-preprocess", namespace, cm)

    crd = client.CustomObjectsApi()
    group, version, plural = "serving.kserve.io", "v1beta1", "inferenceservices"
    isvc = {
        "apiVersion": f"{group}/{version}", "kind": "InferenceService",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"predictor": {"model": {"modelFormat": {"name": "onnx"}, "protocolVersion": "v2", "storageUri": onnx_model.uri}}},
    }
    try:
        crd.create_namespaced_custom_object(group, version, namespace, plural, isvc)
        print(f"created InferenceService {namespace}/{name} from {onnx_model.uri}", flush=True)
    except client.ApiException as e:
        if e.status != 409:
            raise
        old = crd.get_namespaced_custom_object(group, version, namespace, plural, name)
        isvc["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        crd.replace_namespaced_custom_object(group, version, namespace, plural, name, isvc)
        print(f"replaced InferenceService {namespace}/{name} with {onnx_model.uri}", flush=True)

    deadline = time.time() + timeout
    while True:
        obj = crd.get_namespaced_custom_object(group, version, namespace, plural, name)
        conds = {c["type"]: c for c in obj.get("status", {}).get("conditions", [])}
        ready = conds.get("Ready", {})
        if ready.get("status") == "True" and obj["metadata"].get("generation") == obj.get("status", {}).get("observedGeneration", obj["metadata"].get("generation")):
            print(f"InferenceService {name} is Ready: {obj['status'].get('url')} (runtime {obj['status'].get('clusterServingRuntimeName')})", flush=True)
            return json.dumps({"url": obj["status"].get("url"), "address": obj["status"].get("address", {}).get("url"), "runtime": obj["status"].get("clusterServingRuntimeName")})
        if time.time() > deadline:
            raise RuntimeError(f"InferenceService {name} not Ready after {timeout}s: {json.dumps(conds)}")
        time.sleep(1)


@dsl.pipeline(name="gpu-pipeline", description="Preprocess images, train a ResNet, export to ONNX, serve with Triton")
def gpu_pipeline(per_class: int = 100, epochs: int = 12, name: str = "shapes-resnet") -> str:
    images = preprocess(per_class=per_class)
    trained = train(images=images.outputs["images"], epochs=epochs)
    onnx = export(model=trained.outputs["model"])
    return deploy(onnx_model=onnx.outputs["onnx_model"], name=name).output


if __name__ == "__main__":
    import os

    compiler.Compiler().compile(gpu_pipeline, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_pipeline.yaml"))
