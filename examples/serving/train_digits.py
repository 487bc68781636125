"""A pipeline that trains the model examples/serving/sklearn-digits.yaml serves.

Compile with:  .venv/bin/python examples/serving/train_digits.py  (writes train_digits.yaml)
Its `model` output is a directory holding model.joblib, as KServe's sklearn server wants; deploy it
by putting the artifact's URI in an InferenceService's storageUri (`npm run demo` does).
"""
from kfp import compiler, dsl
from kfp.dsl import Metrics, Model, Output


@dsl.component(base_image="python:3.11")
def train(model: Output[Model], metrics: Output[Metrics], c: float = 1.0):
    import os

    import joblib
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    clf = LogisticRegression(C=c, max_iter=3000).fit(X_train, y_train)
    metrics.log_metric("accuracy", float(clf.score(X_test, y_test)))
    os.makedirs(model.path, exist_ok=True)
    joblib.dump(clf, os.path.join(model.path, "model.joblib"))
    model.metadata["framework"] = "sklearn"


@dsl.pipeline(name="train-digits", description="Trains a digits classifier for KServe's sklearn runtime")
def train_digits(c: float = 1.0) -> Model:
    return train(c=c).outputs["model"]


if __name__ == "__main__":
    import os

    compiler.Compiler().compile(train_digits, os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_digits.yaml"))
