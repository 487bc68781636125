"""Asynchronous training with TensorFlow's ParameterServerStrategy, each role as a TFJob runs it:

- ps and worker tasks start a `tf.distribute.Server` at their address from TF_CONFIG and serve until
  they are stopped (the TFJob's cleanPodPolicy ends them once the chief is done);
- the chief is the coordinator: it keeps the model's variables on the parameter servers, schedules
  training steps onto the workers (each reads its own stream of scikit-learn's digits), writes a
  checkpoint after every epoch into CHECKPOINT_DIR, and exports a SavedModel into MODEL_DIR/<version>;
- the evaluator is no part of the training cluster: it reads each new checkpoint from CHECKPOINT_DIR,
  scores it on held-out digits and appends what it found to CHECKPOINT_DIR/eval.jsonl, until the
  chief's last checkpoint is scored. The chief waits (up to EVAL_WAIT seconds) for that last score.

A TFJob sets TF_CONFIG (examples/training/tfjob-ps.yaml). Variables: EPOCHS (default 4),
STEPS_PER_EPOCH (40), BATCH (per step, 64), LEARNING_RATE (0.2), CHECKPOINT_DIR (required: every task
sees it), MODEL_DIR (where the chief exports), MODEL_VERSION (1), EVAL_WAIT (60).
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

DONE = "done"


def digits():
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype("float32")
    return train_test_split(x, y.astype("int64"), test_size=0.2, random_state=0, stratify=y)


class Model(tf.Module):
    """A two-layer perceptron of plain TensorFlow variables, which the strategy puts on the parameter
    servers; a tf.Module, so the chief exports it with its serving signature as it is."""

    def __init__(self):
        super().__init__()
        init = tf.keras.initializers.GlorotUniform(seed=0)
        self.w1 = tf.Variable(init((64, 64)), name="w1")
        self.b1 = tf.Variable(tf.zeros(64), name="b1")
        self.w2 = tf.Variable(init((64, 10)), name="w2")
        self.b2 = tf.Variable(tf.zeros(10), name="b2")

    @tf.function(input_signature=[tf.TensorSpec([None, 64], tf.float32, name="images")])
    def serve(self, images):
        return {"logits": self(images)}

    def __call__(self, x):
        return tf.matmul(tf.nn.relu(tf.matmul(x, self.w1) + self.b1), self.w2) + self.b2


def accuracy(model, x, y) -> float:
    return float(np.mean(np.argmax(model(tf.constant(x)).numpy(), axis=1) == y))


def cluster_without_evaluator(conf: dict, kind: str, index: int):
    # the evaluator is no part of the training cluster (it talks to nobody): leave it out of the cluster
    # the servers and the coordinator are made with
    cluster = {k: v for k, v in conf["cluster"].items() if k != "evaluator"}
    return tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster), task_type=kind, task_id=index, rpc_layer="grpc")


def serve_forever(conf: dict, kind: str, index: int) -> int:
    resolver = cluster_without_evaluator(conf, kind, index)
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=kind, task_index=index, protocol="grpc", start=True)
    print(f"{kind}:{index}: serving at {server.target}", flush=True)
    server.join()
    return 0


def coordinate(conf: dict) -> int:
    epochs = int(os.environ.get("EPOCHS", "4"))
    steps = int(os.environ.get("STEPS_PER_EPOCH", "40"))
    batch = int(os.environ.get("BATCH", "64"))
    lr = float(os.environ.get("LEARNING_RATE", "0.2"))
    ckpt_dir = os.environ["CHECKPOINT_DIR"]
    resolver = cluster_without_evaluator(conf, "chief", 0)
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    workers, ps = len(conf["cluster"].get("worker", [])), len(conf["cluster"].get("ps", []))
    print(f"chief:0: coordinating {workers} workers and {ps} parameter servers", flush=True)

    x_train, x_test, y_train, y_test = digits()

    def dataset_fn():
        # made on each worker: its own shard of the training digits
        ds = tf.data.Dataset.from_tensor_slices((x_train, y_train))
        ds = ds.shard(workers, tf.distribute.coordinator.experimental_get_current_worker_index())
        return ds.shuffle(len(x_train)).repeat().batch(batch)

    with strategy.scope():
        model = Model()
        step_count = tf.Variable(0, dtype=tf.int64, name="step")
    print(f"chief:0: variables on {sorted({v.device for v in model.variables})}", flush=True)
    per_worker = coordinator.create_per_worker_dataset(dataset_fn)
    checkpoint = tf.train.Checkpoint(model=model, step=step_count)
    manager = tf.train.CheckpointManager(checkpoint, ckpt_dir, max_to_keep=epochs + 1)
    # a directory used before: the earlier run's verdicts are not this one's
    for stale in (DONE, "eval.jsonl"):
        if os.path.exists(os.path.join(ckpt_dir, stale)):
            os.remove(os.path.join(ckpt_dir, stale))

    @tf.function
    def train_step(iterator):
        def replica_step(xb, yb):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yb, logits=model(xb)))
            for v, g in zip(model.trainable_variables, tape.gradient(loss, model.trainable_variables)):
                v.assign_sub(lr * g)
            step_count.assign_add(1)
            return loss
        xb, yb = next(iterator)
        # which worker ran the step: the coordinator tells each its index
        return strategy.run(replica_step, args=(xb, yb)), tf.distribute.coordinator.experimental_get_current_worker_index()

    ran_on = {}
    t0 = time.time()
    for epoch in range(epochs):
        results = [coordinator.schedule(train_step, args=(iter(per_worker),)) for _ in range(steps)]
        coordinator.join()
        fetched = [r.fetch() for r in results]
        losses = [float(loss) for loss, _ in fetched]
        for _, worker in fetched:
            ran_on[f"worker:{int(worker)}"] = ran_on.get(f"worker:{int(worker)}", 0) + 1
        path = manager.save(checkpoint_number=epoch + 1)
        print(f"chief:0: epoch {epoch} loss {np.mean(losses):.4f} after {int(step_count.numpy())} steps, checkpoint {path}", flush=True)

    print(f"chief:0: {epochs * steps} steps in {time.time() - t0:.2f}s; steps run per worker: {json.dumps(ran_on, sort_keys=True)}", flush=True)
    print(f"chief:0: test accuracy {accuracy(model, x_test, y_test):.3f}", flush=True)
    model_dir = os.environ.get("MODEL_DIR")
    if model_dir:
        target = os.path.join(model_dir, os.environ.get("MODEL_VERSION", "1"))
        tf.saved_model.save(model, target, signatures={"serving_default": model.serve})
        print(f"chief:0: SavedModel exported to {target}", flush=True)
    with open(os.path.join(ckpt_dir, DONE), "w") as f:
        f.write(manager.latest_checkpoint)

    if "evaluator" not in conf["cluster"]:
        return 0
    # the evaluator's verdict on the last checkpoint, if it comes in time
    deadline = time.time() + float(os.environ.get("EVAL_WAIT", "60"))
    last = f"ckpt-{epochs}"
    while time.time() < deadline:
        for rec in read_evals(ckpt_dir):
            if rec["checkpoint"].endswith(last):
                print(f"chief:0: the evaluator scored {last}: accuracy {rec['accuracy']:.3f}", flush=True)
                return 0
        time.sleep(0.5)
    print(f"chief:0: the evaluator did not score {last} within EVAL_WAIT", flush=True)
    return 0


def read_evals(ckpt_dir: str) -> list:
    try:
        with open(os.path.join(ckpt_dir, "eval.jsonl")) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def evaluate() -> int:
    # what an earlier run left in the directory is older than this task
    started = time.time()
    ckpt_dir = os.environ["CHECKPOINT_DIR"]
    os.makedirs(ckpt_dir, exist_ok=True)
    _, x_test, _, y_test = digits()
    model = Model()
    step = tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(model=model, step=step)
    done = os.path.join(ckpt_dir, DONE)

    def fresh(path: str) -> bool:
        return os.path.exists(path) and os.path.getmtime(path) >= started

    print("evaluator:0: waiting for checkpoints in " + ckpt_dir, flush=True)
    # until the chief says which checkpoint was its last, and that one is scored
    for path in tf.train.checkpoints_iterator(ckpt_dir, min_interval_secs=0.2, timeout=1, timeout_fn=lambda: fresh(done)):
        if not fresh(path + ".index"):
            continue
        checkpoint.restore(path).expect_partial()
        acc = accuracy(model, x_test, y_test)
        print(f"evaluator:0: {os.path.basename(path)} (step {int(step.numpy())}): accuracy {acc:.3f}", flush=True)
        with open(os.path.join(ckpt_dir, "eval.jsonl"), "a") as f:
            f.write(json.dumps({"checkpoint": path, "step": int(step.numpy()), "accuracy": acc}) + "\n")
        if fresh(done) and open(done).read().strip() == path:
            break
    print("evaluator:0: the chief's last checkpoint is scored", flush=True)
    return 0


def main() -> int:
    conf = json.loads(os.environ.get("TF_CONFIG") or "{}")
    task = conf.get("task", {})
    kind, index = task.get("type", ""), int(task.get("index", 0))
    if kind in ("ps", "worker"):
        return serve_forever(conf, kind, index)
    if kind == "chief":
        return coordinate(conf)
    if kind == "evaluator":
        return evaluate()
    print(f"TF_CONFIG names no role this program has: {kind!r}", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
