"""Skiff's stand-in for Katib's `pytorch-mnist` trial image (/opt/pytorch-mnist/mnist.py).

Katib's examples run `python3 /opt/pytorch-mnist/mnist.py --epochs=1 --batch-size=16 --lr=...
--momentum=...` and read its metrics from the log or from a file; this program takes the same
arguments and writes the same lines, so those Experiments run unchanged on one machine.

Data: MNIST cannot be downloaded here, so the model learns scikit-learn's bundled handwritten
digits (1,797 images of 8x8 pixels, 16 grey levels, read straight from the package's
digits.csv.gz), kept at 8x8 and standardised over all pixels. A fixed 80/20 split (the same for
every seed) gives 1,437 training and 360 test images. One epoch is 90 steps at the examples' batch size of 16:
after it, accuracy and loss still depend clearly on the learning rate and the momentum, as they do
on MNIST, which is what a tuning run needs to see. An epoch takes well under a second of CPU.

Output, as the original image writes it:
- the standard logger: lines `<UTC time, %Y-%m-%dT%H:%M:%SZ> INFO     <message>`, on stdout, or
  appended to --log-path when one is given; per logged batch
  `Train Epoch: E [seen/total (pct%)]<TAB>loss=L` and per epoch
  `{metricName: accuracy, metricValue: A};{metricName: loss, metricValue: L}`;
- --logger=hypertune: the log lines stay on stdout, and --log-path (or $CLOUD_ML_HP_METRIC_FILE,
  else /tmp/hypertune/output.metrics) holds what the cloudml-hypertune library writes: one JSON
  object per line with sorted keys, `global_step`, the metric's value as a string, `timestamp`
  (epoch seconds) and `trial` ($CLOUD_ML_TRIAL_ID, else "0"), rewritten whole after each report,
  the last 100 reports kept.
With WORLD_SIZE > 1 (a PyTorchJob) the processes train together through torch.distributed.
"""

import argparse
import gzip
import importlib.util
import json
import logging
import os
import sys
import time
from collections import deque

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

WORLD_SIZE = int(os.environ.get("WORLD_SIZE", "1"))


def digits():
    """scikit-learn's digits as (images N x 1 x 8 x 8, labels N), without importing
    scikit-learn itself (its import alone would cost more than the training)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("mnist.py: scikit-learn is not installed in this environment; its bundled digits are the training data")
    path = os.path.join(list(spec.submodule_search_locations)[0], "datasets", "data", "digits.csv.gz")
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    # standardised, as MNIST examples normalise their inputs: SGD then learns within one epoch
    x = table[:, :-1] / 16.0
    images = torch.from_numpy((x - x.mean()) / x.std()).reshape(-1, 1, 8, 8)
    labels = torch.from_numpy(table[:, -1].astype(np.int64))
    return images, labels


def split(images, labels):
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(0))
    cut = len(labels) * 4 // 5
    train, test = order[:cut], order[cut:]
    return TensorDataset(images[train], labels[train]), TensorDataset(images[test], labels[test])


class Net(nn.Module):
    """Two 3x3 convolutions and a pooling step sized for 8x8 inputs, then two dense layers."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        return F.log_softmax(self.fc2(x), dim=1)


class HypertuneFile:
    """The lines cloudml-hypertune's HyperTune().report_hyperparameter_tuning_metric writes."""

    def __init__(self, path):
        self.path = path
        self.trial = str(os.environ.get("CLOUD_ML_TRIAL_ID", 0))
        self.reports = deque(maxlen=100)
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)

    def report(self, tag, value, step):
        self.reports.append({
            "timestamp": time.time(),
            "trial": self.trial,
            tag or "training/hptuning/metric": str(float(value)),
            "global_step": str(int(step) if step else 0),
        })
        with open(self.path, "w") as f:
            for r in self.reports:
                f.write(json.dumps(r, sort_keys=True) + "\n")


def train(args, model, device, loader, optimizer, epoch):
    model.train()
    # with DistributedSampler each process sees its own share of the images
    total = len(loader.sampler)
    for batch, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch % args.log_interval == 0:
            logging.info("Train Epoch: {} [{}/{} ({:.0f}%)]\tloss={:.4f}".format(
                epoch, batch * len(data), total, 100.0 * batch / len(loader), loss.item()))


def test(model, device, loader):
    model.eval()
    loss_sum, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            out = model(data)
            loss_sum += F.nll_loss(out, target, reduction="sum").item()
            correct += (out.argmax(1) == target).sum().item()
    n = len(loader.dataset)
    return correct / n, loss_sum / n


def positive(kind):
    def parse(text):
        v = kind(text)
        if v <= 0:
            raise argparse.ArgumentTypeError("must be greater than 0, not {}".format(text))
        return v
    return parse


def main():
    p = argparse.ArgumentParser(description="Skiff's PyTorch MNIST example (scikit-learn's digits)")
    p.add_argument("--batch-size", type=positive(int), default=64, metavar="N", help="input batch size for training (default: 64)")
    p.add_argument("--test-batch-size", type=positive(int), default=1000, metavar="N", help="input batch size for testing (default: 1000)")
    p.add_argument("--epochs", type=int, default=10, metavar="N", help="number of epochs to train (default: 10)")
    p.add_argument("--lr", type=positive(float), default=0.01, metavar="LR", help="learning rate (default: 0.01)")
    p.add_argument("--momentum", type=float, default=0.5, metavar="M", help="SGD momentum (default: 0.5)")
    p.add_argument("--no-cuda", action="store_true", default=False, help="disables CUDA training")
    p.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default: 1)")
    p.add_argument("--log-interval", type=positive(int), default=10, metavar="N", help="how many batches to wait before logging training status")
    p.add_argument("--log-path", type=str, default="", help="Path to save logs. Print to StdOut if log-path is not set")
    p.add_argument("--save-model", action="store_true", default=False, help="For Saving the current Model")
    p.add_argument("--logger", type=str, choices=["standard", "hypertune"], default="standard", help="Logger")
    p.add_argument("--backend", type=str, choices=["gloo", "nccl", "mpi"], default="gloo", help="Distributed backend")
    args = p.parse_args()

    # Katib reads a line's time from its first token, as RFC 3339: the Z must be true, so UTC
    logging.Formatter.converter = time.gmtime
    where = {"filename": args.log_path} if args.log_path and args.logger == "standard" else {"stream": sys.stdout}
    logging.basicConfig(format="%(asctime)s %(levelname)-8s %(message)s", datefmt="%Y-%m-%dT%H:%M:%SZ", level=logging.DEBUG, **where)
    hpt = None
    if args.logger == "hypertune":
        hpt = HypertuneFile(args.log_path or os.environ.get("CLOUD_ML_HP_METRIC_FILE", "/tmp/hypertune/output.metrics"))

    use_cuda = not args.no_cuda and torch.cuda.is_available()
    if use_cuda:
        print("Using CUDA", flush=True)
    else:
        # a model this small gains nothing from more threads, and trials share the machine's cores
        torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if use_cuda else "cpu")

    distributed = dist.is_available() and WORLD_SIZE > 1
    if distributed:
        print("Using distributed PyTorch with {} backend".format(args.backend), flush=True)
        dist.init_process_group(backend=args.backend)

    train_set, test_set = split(*digits())
    sampler = DistributedSampler(train_set, seed=args.seed) if distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=sampler is None, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=args.test_batch_size, shuffle=False)

    model = Net().to(device)
    if distributed:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)

    for epoch in range(1, args.epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        train(args, model, device, train_loader, optimizer, epoch)
        accuracy, loss = test(model, device, test_loader)
        logging.info("{{metricName: accuracy, metricValue: {:.4f}}};{{metricName: loss, metricValue: {:.4f}}}\n".format(accuracy, loss))
        if hpt is not None:
            hpt.report("loss", loss, epoch)
            hpt.report("accuracy", accuracy, epoch)

    if args.save_model:
        torch.save(model.state_dict(), "mnist_cnn.pt")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
