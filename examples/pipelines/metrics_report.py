"""A pipeline that writes one artifact of every kind the dashboard renders: scalar Metrics,
ClassificationMetrics (a confusion matrix and a ROC curve), an HTML report, a Markdown summary, a text
Dataset and a binary Model. Two runs with different parameters make a comparison worth looking at.
Compile with: .venv/bin/python examples/pipelines/metrics_report.py"""
from pathlib import Path

from kfp import compiler, dsl
from kfp.dsl import HTML, ClassificationMetrics, Dataset, Markdown, Metrics, Model, Output


@dsl.component(base_image="python:3.11")
def make_data(rows: int, data: Output[Dataset]):
    with open(data.path, "w") as f:
        f.write("x,label\n")
        for i in range(rows):
            f.write(f"{i / rows:.3f},{'cat' if i % 3 else 'dog'}\n")
    data.metadata["rows"] = rows


@dsl.component(base_image="python:3.11")
def train(
    learning_rate: float,
    epochs: int,
    metrics: Output[Metrics],
    classification: Output[ClassificationMetrics],
    report: Output[HTML],
    summary: Output[Markdown],
    model: Output[Model],
):
    # a made-up but deterministic "training": better with more epochs, worse with a large rate
    accuracy = round(min(0.99, 0.5 + 0.04 * epochs - learning_rate / 2), 4)
    loss = round(1.0 - accuracy + learning_rate / 10, 4)
    metrics.log_metric("accuracy", accuracy)
    metrics.log_metric("loss", loss)
    metrics.log_metric("epochs", epochs)

    right = int(accuracy * 100)
    classification.log_confusion_matrix(
        ["cat", "dog", "bird"],
        [[right, 100 - right - 2, 2], [5, right, 95 - right], [1, 3, 96]],
    )
    thresholds = [1.0, 0.8, 0.6, 0.4, 0.2, 0.0]
    fpr = [0.0, 0.05, 0.1, 0.3, 0.6, 1.0]
    tpr = [0.0, min(1.0, accuracy - 0.3), min(1.0, accuracy - 0.1), min(1.0, accuracy), min(1.0, accuracy + 0.05), 1.0]
    classification.log_roc_curve(fpr, tpr, thresholds)

    # the report carries a script on purpose: the dashboard must show it without running it
    with open(report.path, "w") as f:
        f.write(
            "<html><body><h1>Training report</h1>"
            f"<p>accuracy <b>{accuracy}</b> after {epochs} epochs</p>"
            "<script>window.artifactScriptRan = true; try { parent.artifactScriptRan = true; } catch (e) {}"
            " document.body.append('script ran');</script>"
            "</body></html>"
        )
    with open(summary.path, "w") as f:
        f.write(
            f"# Summary\n\nLearning rate **{learning_rate}**, {epochs} epochs.\n\n"
            "| metric | value |\n|---|---|\n"
            f"| accuracy | {accuracy} |\n| loss | {loss} |\n"
        )
    with open(model.path, "wb") as f:
        f.write(bytes(range(256)) * 8)
    model.metadata["framework"] = "none"
    model.metadata["accuracy"] = accuracy


@dsl.pipeline(name="metrics-report")
def metrics_report(learning_rate: float = 0.1, epochs: int = 5, rows: int = 40):
    make_data(rows=rows)
    train(learning_rate=learning_rate, epochs=epochs)


if __name__ == "__main__":
    compiler.Compiler().compile(metrics_report, str(Path(__file__).with_suffix(".yaml")))
