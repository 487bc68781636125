"""Writes the recommender story's data: users.csv (user_id, age, country) and transactions.csv
(user_id, item_id, rating), from a fixed seed, with nothing downloaded. The ratings carry a signal a
model can learn: every item has a hidden taste vector, every user one made of their country's, their
age group's and a little of their own, and a rating is 1-5 from how well the two agree, plus noise.

    python generate.py OUT_DIR                        # writes OUT_DIR/users.csv and OUT_DIR/transactions.csv
    python generate.py OUT_DIR --upload s3://stories/data
        # and puts both there with boto3: the endpoint from AWS_ENDPOINT_URL (e.g. http://127.0.0.1:9000
        # for MinIO), the credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY

Variables: USERS (default 300), ITEMS (60), RATINGS (12000), SEED (7). Only the standard library
(and boto3 for --upload).
"""
import csv
import math
import os
import random
import sys

COUNTRIES = ["US", "DE", "IN", "BR", "JP"]
DIM = 4


def generate(out: str, users: int, items: int, ratings: int, seed: int) -> None:
    rng = random.Random(seed)
    vec = lambda scale: [rng.gauss(0, scale) for _ in range(DIM)]  # noqa: E731
    country_taste = {c: vec(1.0) for c in COUNTRIES}
    age_taste = [vec(0.8) for _ in range(4)]  # 18-29, 30-44, 45-59, 60+
    item_taste = [vec(1.0) for _ in range(items)]
    item_bias = [rng.gauss(0, 0.4) for _ in range(items)]

    os.makedirs(out, exist_ok=True)
    people = []
    with open(os.path.join(out, "users.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["user_id", "age", "country"])
        for u in range(users):
            age = rng.randint(18, 75)
            country = rng.choice(COUNTRIES)
            group = 0 if age < 30 else 1 if age < 45 else 2 if age < 60 else 3
            own = vec(0.3)
            people.append([a + b + c for a, b, c in zip(country_taste[country], age_taste[group], own)])
            w.writerow([u, age, country])
    with open(os.path.join(out, "transactions.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["user_id", "item_id", "rating"])
        for _ in range(ratings):
            u, i = rng.randrange(users), rng.randrange(items)
            score = sum(a * b for a, b in zip(people[u], item_taste[i])) / math.sqrt(DIM) + item_bias[i]
            rating = 3 + 2 * math.tanh(score / 1.5) + rng.gauss(0, 0.3)
            w.writerow([u, i, min(5, max(1, round(rating)))])


def upload(out: str, uri: str) -> None:
    import boto3

    if not uri.startswith("s3://"):
        raise SystemExit(f"--upload takes s3://bucket/prefix, not {uri}")
    bucket, _, prefix = uri[len("s3://"):].partition("/")
    s3 = boto3.client("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("S3_ENDPOINT") or None)
    for name in ("users.csv", "transactions.csv"):
        key = f"{prefix.rstrip('/')}/{name}" if prefix else name
        s3.upload_file(os.path.join(out, name), bucket, key)
        print(f"uploaded s3://{bucket}/{key}")


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[0]
    generate(out, int(os.environ.get("USERS", "300")), int(os.environ.get("ITEMS", "60")),
             int(os.environ.get("RATINGS", "12000")), int(os.environ.get("SEED", "7")))
    print(f"wrote {os.path.join(out, 'users.csv')} and {os.path.join(out, 'transactions.csv')}")
    if len(argv) == 3 and argv[1] == "--upload":
        upload(out, argv[2])
    elif len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
