"""Synchronous data-parallel training with TensorFlow's MultiWorkerMirroredStrategy: a small Keras model
on scikit-learn's bundled digits (nothing is downloaded), one replica per task in TF_CONFIG. Every step
all-reduces the gradients across the tasks with TensorFlow's ring collectives over gRPC, so each task
reads its own shard of every batch and all of them end with the same weights. The chief exports the
model as a SavedModel into MODEL_DIR/<version> (the layout TF Serving reads); the other tasks export
into a scratch directory (saving is collective), which they remove.

A TFJob sets TF_CONFIG (examples/training/tfjob-mwms.yaml). By hand, three shells:
    TF_CONFIG='{"cluster":{"chief":["127.0.0.1:2222"],"worker":["127.0.0.1:2223","127.0.0.1:2224"]},"task":{"type":"chief","index":0}}' .venv-tensorflow/bin/python examples/training/tf_digits.py
    ... "task":{"type":"worker","index":0} ...
    ... "task":{"type":"worker","index":1} ...

Variables: EPOCHS (default 8), BATCH (per replica, 32), LEARNING_RATE (0.1), MODEL_DIR (where the chief
exports; nothing is exported without it), MODEL_VERSION (1).
"""
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402


def role() -> tuple[str, int, bool]:
    conf = json.loads(os.environ.get("TF_CONFIG") or "{}")
    task = conf.get("task", {})
    kind, index = task.get("type", "chief"), int(task.get("index", 0))
    cluster = conf.get("cluster", {})
    # the chief saves; without a chief in the cluster, worker 0 plays its part (as TFJob's success policy does)
    chief = kind == "chief" or (kind == "worker" and index == 0 and "chief" not in cluster)
    return kind, index, chief


def digest(model: keras.Model) -> str:
    h = hashlib.sha256()
    for w in model.get_weights():
        h.update(np.ascontiguousarray(w).tobytes())
    return h.hexdigest()[:16]


def main() -> int:
    kind, index, chief = role()
    me = f"{kind}:{index}"
    epochs = int(os.environ.get("EPOCHS", "8"))
    per_replica = int(os.environ.get("BATCH", "32"))
    lr = float(os.environ.get("LEARNING_RATE", "0.1"))

    started = time.time()
    # RING: TensorFlow's own collective implementation over gRPC (NCCL is for GPUs)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(
            implementation=tf.distribute.experimental.CommunicationImplementation.RING))
    replicas = strategy.num_replicas_in_sync
    resolver = strategy.cluster_resolver
    print(f"{me}: joined the cluster {json.dumps(resolver.cluster_spec().as_dict(), sort_keys=True)} "
          f"as {resolver.task_type}:{resolver.task_id}, {replicas} replicas in sync", flush=True)

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype("float32")
    y = y.astype("int64")
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, random_state=0, stratify=y)
    global_batch = per_replica * replicas

    def dataset(ctx: tf.distribute.InputContext) -> tf.data.Dataset:
        # each task reads its own shard of every epoch, batched per replica
        ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train), seed=1, reshuffle_each_iteration=True)
        ds = ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        return ds.batch(ctx.get_per_replica_batch_size(global_batch), drop_remainder=True).repeat()

    steps = len(x_train) // global_batch
    data = iter(strategy.distribute_datasets_from_function(dataset))

    keras.utils.set_random_seed(0)
    with strategy.scope():
        model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
        optimizer = keras.optimizers.SGD(learning_rate=lr, momentum=0.9)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    @tf.function
    def step(batch):
        def replica_step(xb, yb):
            with tf.GradientTape() as tape:
                per_example = loss_fn(yb, model(xb, training=True))
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
            # the optimizer sums the gradients of every replica (an all-reduce across the tasks)
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return loss
        return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(replica_step, args=batch), axis=None)

    t0 = time.time()
    for epoch in range(epochs):
        total = 0.0
        for _ in range(steps):
            total += float(step(next(data)))
        print(f"{me}: epoch {epoch} loss {total / steps:.4f}", flush=True)
    train_s = time.time() - t0
    print(f"{me}: trained {epochs * steps} steps of {global_batch} examples in {train_s:.2f}s "
          f"({epochs * steps / train_s:.1f} steps/s)", flush=True)

    # the model called directly reads this task's copy of the weights: no collective, so only the
    # chief may do it (Keras' predict would distribute the batch over every task)
    logits = model(x_test, training=False).numpy()
    accuracy = float(np.mean(np.argmax(logits, axis=1) == y_test))
    print(f"{me}: test accuracy {accuracy:.3f}", flush=True)
    print(f"{me}: weights digest {digest(model)}", flush=True)

    model_dir = os.environ.get("MODEL_DIR")
    if model_dir:
        version = os.environ.get("MODEL_VERSION", "1")
        target = os.path.join(model_dir, version) if chief else tempfile.mkdtemp(prefix="tf-digits-")
        # every task exports: the saving may run collectives, which need all of them
        model.export(target, format="tf_saved_model", verbose=False)
        if chief:
            loaded = tf.saved_model.load(target)
            served = loaded.serve(tf.constant(x_test[:16])).numpy()
            same = bool(np.allclose(served, logits[:16], atol=1e-5))
            print(f"{me}: SavedModel exported to {target}, it answers as the trained model: {same}", flush=True)
        else:
            shutil.rmtree(target, ignore_errors=True)
    print(f"{me}: done in {time.time() - started:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
