"""Makes the serving benchmark's models from scikit-learn's digits (run with the project's .venv).

    python make_models.py OUT_DIR

writes OUT_DIR/sklearn/model.joblib (a LogisticRegression), OUT_DIR/onnx/model.onnx (a small MLP
exported by torch, input "pixels" [batch, 64] FP32, output "probs" [batch, 10]) and OUT_DIR/expected.json:
the request rows and what each model answers for them, computed here, for checking the servers'
answers before timing.
"""

import json
import os
import sys
import warnings

import joblib
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression


def main(out):
    X, y = load_digits(return_X_y=True)
    os.makedirs(os.path.join(out, "sklearn"), exist_ok=True)
    os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lbfgs may stop at max_iter; the model only has to be fixed
        clf = LogisticRegression(max_iter=300).fit(X, y)
    joblib.dump(clf, os.path.join(out, "sklearn", "model.joblib"))
    rows = X[:64]
    expected = {
        "rows": rows.tolist(),
        "sklearn": clf.predict(rows).tolist(),
        "sklearn_accuracy": float(clf.score(X, y)),
    }

    import torch  # only for the ONNX model

    torch.manual_seed(0)
    xt = torch.tensor(X / 16.0, dtype=torch.float32)
    yt = torch.tensor(y)
    net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10), torch.nn.Softmax(dim=1))
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    for _ in range(150):
        opt.zero_grad()
        torch.nn.functional.nll_loss(torch.log(net(xt) + 1e-9), yt).backward()
        opt.step()
    net.eval()
    torch.onnx.export(net, xt[:2], os.path.join(out, "onnx", "model.onnx"), input_names=["pixels"], output_names=["probs"],
                      dynamic_axes={"pixels": {0: "batch"}, "probs": {0: "batch"}}, opset_version=13)
    onnx_rows = (rows / 16.0).astype(np.float32)
    with torch.no_grad():
        expected["onnx_rows"] = onnx_rows.tolist()
        expected["onnx"] = net(torch.tensor(onnx_rows)).tolist()
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f)


if __name__ == "__main__":
    main(sys.argv[1])
