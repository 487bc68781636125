"""Skiff's stand-in for Katib's `simple-pbt` trial image (/opt/pbt/pbt_test.py).

Katib's PBT example runs `python3 /opt/pbt/pbt_test.py --epochs=20 --lr=... --checkpoint=DIR`;
this program takes the same arguments, trains the same kind of toy model and prints the same
lines, so the Experiment runs unchanged on one machine.

The toy problem: a single "accuracy" in [0, 100] grows fastest when the learning rate is close to
an optimal rate that depends on the accuracy reached so far: it rises linearly from 0.001 to 0.01
while accuracy climbs to 50, then falls back to 0.001 as accuracy reaches 100 (a triangle, the
shape of many real learning-rate schedules). A step with a rate within a factor of 3 of the
optimum gains up to 1/(that factor); a rate more than 3 times too high loses accuracy; every step
adds Gaussian noise (standard deviation 2). No single fixed rate follows the triangle, so only a
population that hands its checkpoints on (PBT) keeps improving.

Checkpoint: DIR/training.ckpt (JSON: step and accuracy). A trial starts from it when it is there,
which is how a PBT trial continues its parent's training: Skiff copies the parent trial's
checkpoint directory into the new trial's before the trial starts, as Katib's PBT suggestion
service does. Without it, training starts at step 1 with accuracy 0. The file is written once,
after the last epoch.

Output, once training ends, as the original image prints it:
    epoch <step>:
    lr=<lr, 4 decimals>
    Validation-accuracy=<accuracy / 100, 4 decimals>
the last line is what Katib's default StdOut filter reads. The original also sleeps until it has
run for 7 seconds, to give Kubernetes' metrics-collector sidecar time to find its process; Skiff
reads the log directly, so it does not wait.
"""

import argparse
import json
import os
import random
import sys

MIDPOINT = 50.0  # accuracy at which the optimal learning rate peaks
LR_LOW, LR_HIGH = 0.001, 0.01
TOLERANCE = 3.0  # rates further than this factor from the optimum stop helping
NOISE = 2.0
CHECKPOINT_FILE = "training.ckpt"


def optimal_lr(accuracy):
    if accuracy < MIDPOINT:
        lr = LR_HIGH * accuracy / MIDPOINT
    else:
        lr = LR_HIGH * (2.0 - accuracy / MIDPOINT)
    return min(LR_HIGH, max(LR_LOW, lr))


def train_step(accuracy, lr, rng):
    """one epoch of the toy model: the new accuracy"""
    best = optimal_lr(accuracy)
    # how far off the rate is, as a factor >= 1 (a zero rate counts as infinitely far)
    factor = max(lr, best) / min(lr, best) if min(lr, best) > 0 else float("inf")
    if factor < TOLERANCE:
        accuracy += rng.random() / factor
    elif lr > best:
        accuracy -= (factor - TOLERANCE) * rng.random()
    accuracy += rng.gauss(0.0, NOISE)
    return min(100.0, max(0.0, accuracy))


def load(directory):
    path = os.path.join(directory, CHECKPOINT_FILE)
    if not os.path.exists(path):
        return 1, 0.0
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
            return int(data["step"]), float(data["accuracy"])
        except (ValueError, KeyError, TypeError) as e:
            sys.exit(f"--checkpoint: {path} is not a checkpoint this program wrote: {e}")


def save(directory, step, accuracy):
    path = os.path.join(directory, CHECKPOINT_FILE)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"step": step, "accuracy": accuracy}, f)
    # a trial killed mid-write must not leave its children a torn checkpoint
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description="PBT toy problem: an adaptive learning rate")
    parser.add_argument("--lr", type=float, default=0.0001, help="learning rate (default: 0.0001)")
    parser.add_argument("--epochs", type=int, default=20, help="number of epochs to train (default: 20)")
    parser.add_argument("--checkpoint", type=str, default="/var/log/katib/checkpoints/",
                        help="checkpoint directory (resume and save)")
    opt = parser.parse_args(argv)
    if opt.lr < 0:
        parser.error(f"--lr: must not be negative, got {opt.lr}")
    if opt.epochs < 0:
        parser.error(f"--epochs: must not be negative, got {opt.epochs}")

    os.makedirs(opt.checkpoint, exist_ok=True)
    step, accuracy = load(opt.checkpoint)
    rng = random.Random()
    for _ in range(opt.epochs):
        accuracy = train_step(accuracy, opt.lr, rng)
        step += 1
    save(opt.checkpoint, step, accuracy)
    print(f"epoch {step}:\nlr={opt.lr:0.4f}\nValidation-accuracy={accuracy / 100:0.4f}", flush=True)


if __name__ == "__main__":
    main()
