"""The recommender story's training program: reads users.csv and transactions.csv from object storage
(S3, or MinIO), trains a Keras recommender on them with MultiWorkerMirroredStrategy across the TFJob's
replicas, and the chief puts the model, a SavedModel, back into object storage in TF Serving's layout
(MODEL_URI/<version>/saved_model.pb, variables/...), where an InferenceService serves it.

The model predicts the rating a user gives an item: a user's vector comes from a learned embedding of
the user and the user's own features from users.csv (country, age), kept in the model so that a
request names only user_id and item_id; the item's is a learned embedding; the rating is their dot
product plus the item's bias and the mean rating.

TensorFlow's own file system does not read s3:// any more (TensorFlow 2.6 moved it to tensorflow-io),
so the objects are read and written with boto3. The data is read before TensorFlow is imported: a
missing object or a broken row fails the replica within a second, with the program's own message.

Variables: DATA_URI (s3://bucket/prefix holding the two CSVs), MODEL_URI (s3://bucket/prefix the chief
exports under; nothing is exported without it), MODEL_VERSION (1), EPOCHS (8), BATCH (per replica, 256),
LEARNING_RATE (0.05); AWS_ENDPOINT_URL (or S3_ENDPOINT: MinIO's URL, e.g. http://127.0.0.1:9000),
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (us-east-1). TF_CONFIG comes from the TFJob.
"""
import csv
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time

import boto3
from botocore.exceptions import ClientError, EndpointConnectionError

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


def role() -> tuple[str, int, bool]:
    conf = json.loads(os.environ.get("TF_CONFIG") or "{}")
    task = conf.get("task", {})
    kind, index = task.get("type", "chief"), int(task.get("index", 0))
    # the chief exports; without a chief in the cluster, worker 0 plays its part (as TFJob's success policy does)
    chief = kind == "chief" or (kind == "worker" and index == 0 and "chief" not in conf.get("cluster", {}))
    return kind, index, chief


def split_uri(uri: str) -> tuple[str, str]:
    if not uri.startswith("s3://") or len(uri) <= len("s3://"):
        raise ValueError(f"not an s3://bucket/prefix URI: {uri!r}")
    bucket, _, prefix = uri[len("s3://"):].partition("/")
    return bucket, prefix.strip("/")


class Store:
    """objects in one S3 endpoint, with errors that name the object"""

    def __init__(self) -> None:
        self.endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("S3_ENDPOINT") or None
        self.s3 = boto3.client("s3", endpoint_url=self.endpoint, region_name=os.environ.get("AWS_REGION", "us-east-1"))

    def where(self) -> str:
        return self.endpoint or "AWS S3"

    def read(self, uri: str) -> str:
        bucket, key = split_uri(uri)
        try:
            return self.s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")
        except ClientError as e:
            code = e.response.get("Error", {}).get("Code", "")
            # botocore's own message names neither the bucket nor the key
            if code in ("NoSuchKey", "NoSuchBucket", "404"):
                raise FileNotFoundError(f"{uri} does not exist at {self.where()} ({code or 'NoSuchKey'}): upload it first") from None
            raise RuntimeError(f"reading {uri} from {self.where()}: {e}") from None
        except EndpointConnectionError as e:
            raise ConnectionError(f"reading {uri}: {e}") from None

    def upload_dir(self, local: str, uri: str) -> int:
        bucket, prefix = split_uri(uri)
        files = [os.path.relpath(os.path.join(root, name), local).replace(os.sep, "/") for root, _, names in os.walk(local) for name in names]
        # saved_model.pb last: a reader that finds it finds the variables too
        files.sort(key=lambda rel: rel == "saved_model.pb")
        for rel in files:
            self.s3.upload_file(os.path.join(local, rel), bucket, f"{prefix}/{rel}" if prefix else rel)
        return len(files)


def rows(text: str, uri: str, columns: dict[str, type]) -> list[dict]:
    """the CSV's rows with the named columns converted; a row that does not convert stops the program, naming its line"""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in columns if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(f"{uri}: no column {', '.join(missing)} in its header {reader.fieldnames}")
    out = []
    for row in reader:
        line = reader.line_num
        parsed = {}
        for name, kind in columns.items():
            value = row.get(name)
            try:
                parsed[name] = kind(value)
            except (TypeError, ValueError):
                what = "an integer" if kind is int else "a number" if kind is float else kind.__name__
                raise ValueError(f"{uri} line {line}: {name} {value!r} is not {what}") from None
        out.append(parsed)
    if not out:
        raise ValueError(f"{uri}: no rows")
    return out


def main() -> int:
    kind, index, chief = role()
    me = f"{kind}:{index}"
    started = time.time()
    data_uri = os.environ.get("DATA_URI", "").rstrip("/")
    if not data_uri:
        raise ValueError("DATA_URI is not set: it names the s3://bucket/prefix that holds users.csv and transactions.csv")
    epochs = int(os.environ.get("EPOCHS", "8"))
    per_replica = int(os.environ.get("BATCH", "256"))
    lr = float(os.environ.get("LEARNING_RATE", "0.05"))

    store = Store()
    users = rows(store.read(f"{data_uri}/users.csv"), f"{data_uri}/users.csv", {"user_id": int, "age": int, "country": str})
    ratings = rows(store.read(f"{data_uri}/transactions.csv"), f"{data_uri}/transactions.csv", {"user_id": int, "item_id": int, "rating": float})
    known = {u["user_id"] for u in users}
    for n, r in enumerate(ratings):
        if r["user_id"] not in known:
            raise ValueError(f"{data_uri}/transactions.csv line {n + 2}: user_id {r['user_id']} is not in users.csv")
    print(f"{me}: read {len(users)} users and {len(ratings)} ratings from {data_uri} at {store.where()}", flush=True)

    # TensorFlow only now: its import takes seconds, which bad data need not wait for
    import numpy as np
    import tensorflow as tf
    import keras

    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(
            implementation=tf.distribute.experimental.CommunicationImplementation.RING))
    replicas = strategy.num_replicas_in_sync
    print(f"{me}: joined the cluster as {strategy.cluster_resolver.task_type}:{strategy.cluster_resolver.task_id}, "
          f"{replicas} replicas in sync", flush=True)

    # the users' own features, one row per user_id: the country one-hot and the age scaled to about [0, 1]
    countries = sorted({u["country"] for u in users})
    n_users = max(known) + 1
    n_items = max(r["item_id"] for r in ratings) + 1
    features = np.zeros((n_users, len(countries) + 1), np.float32)
    for u in users:
        features[u["user_id"], countries.index(u["country"])] = 1.0
        features[u["user_id"], -1] = (u["age"] - 18) / 60.0

    # the same held-out tenth on every replica
    order = list(range(len(ratings)))
    random.Random(0).shuffle(order)
    held = set(order[: len(order) // 10])
    def arrays(which: bool) -> tuple[dict, np.ndarray]:
        picked = [r for n, r in enumerate(ratings) if (n in held) == which]
        return ({"user_id": np.array([r["user_id"] for r in picked], np.int32), "item_id": np.array([r["item_id"] for r in picked], np.int32)},
                np.array([r["rating"] for r in picked], np.float32))
    x_train, y_train = arrays(False)
    x_test, y_test = arrays(True)
    mean = float(y_train.mean())
    global_batch = per_replica * replicas

    def dataset(ctx: tf.distribute.InputContext) -> tf.data.Dataset:
        # each task reads its own shard of every epoch
        ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(y_train), seed=1, reshuffle_each_iteration=True)
        ds = ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        return ds.batch(ctx.get_per_replica_batch_size(global_batch), drop_remainder=True).repeat()

    steps = len(y_train) // global_batch
    data = iter(strategy.distribute_datasets_from_function(dataset))

    keras.utils.set_random_seed(0)
    with strategy.scope():
        user_id = keras.Input((), dtype="int32", name="user_id")
        item_id = keras.Input((), dtype="int32", name="item_id")
        # the users' features live in the model (not trained), so a request names only the ids
        own = keras.layers.Embedding(n_users, features.shape[1], embeddings_initializer=keras.initializers.Constant(features),
                                     trainable=False, name="user_features")(user_id)
        user = keras.layers.Dense(16, name="user_vector")(
            keras.layers.Concatenate()([keras.layers.Embedding(n_users, 8, name="user_embedding")(user_id), own]))
        item = keras.layers.Embedding(n_items, 16, name="item_embedding")(item_id)
        bias = keras.layers.Embedding(n_items, 1, embeddings_initializer="zeros", name="item_bias")(item_id)
        rating = keras.layers.Lambda(lambda t: keras.ops.sum(t[0] * t[1], axis=-1) + keras.ops.squeeze(t[2], -1) + mean,
                                     name="rating")([user, item, bias])
        model = keras.Model({"user_id": user_id, "item_id": item_id}, rating, name="recommender")
        optimizer = keras.optimizers.Adam(learning_rate=lr)

    @tf.function
    def step(batch):
        def replica_step(xb, yb):
            with tf.GradientTape() as tape:
                per_example = tf.square(model(xb, training=True) - yb)
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
    print(f"{me}: trained {epochs * steps} steps of {global_batch} ratings in {train_s:.2f}s "
          f"({epochs * steps / train_s:.1f} steps/s)", flush=True)

    # called directly, the model reads this task's copy of the weights: no collective
    predicted = model(x_test, training=False).numpy()
    rmse = float(np.sqrt(np.mean((predicted - y_test) ** 2)))
    baseline = float(np.sqrt(np.mean((mean - y_test) ** 2)))
    print(f"{me}: held-out RMSE {rmse:.3f} (the mean rating alone: {baseline:.3f})", flush=True)

    model_uri = os.environ.get("MODEL_URI", "").rstrip("/")
    if model_uri:
        version = os.environ.get("MODEL_VERSION", "1")
        scratch = tempfile.mkdtemp(prefix="recommender-")
        try:
            target = os.path.join(scratch, version)
            # every task exports (saving may run collectives, which need all of them); the chief uploads
            model.export(target, format="tf_saved_model", verbose=False)
            if chief:
                served = tf.saved_model.load(target).signatures["serving_default"](
                    user_id=tf.constant(x_test["user_id"][:16]), item_id=tf.constant(x_test["item_id"][:16]))
                same = bool(np.allclose(next(iter(served.values())).numpy(), predicted[:16], atol=1e-5))
                count = store.upload_dir(target, f"{model_uri}/{version}")
                print(f"{me}: SavedModel exported to {model_uri}/{version} ({count} objects), "
                      f"it answers as the trained model: {same}", flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"{me}: done in {time.time() - started:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
