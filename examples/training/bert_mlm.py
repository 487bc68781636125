"""Masked-language-model training of a tiny BERT from scratch with transformers' Trainer, data-parallel
over torch DDP (gloo, CPU), as a PyTorchJob runs it.

The corpus is data/corpus.txt beside this file (plain English sentences, one a line); every tenth line
is held out. Nothing is downloaded: the WordPiece tokenizer is trained on the corpus here (rank 0 trains
it and sends it to the other ranks, so every rank tokenizes alike without a shared disk), and the model
is a small BertConfig (hidden 64, 2 layers, 2 heads) initialised at random.

Distributed training comes from the environment, as a PyTorchJob sets it: MASTER_ADDR, MASTER_PORT,
RANK and WORLD_SIZE (one process per replica: the job's node rank is the process rank). Trainer (through
accelerate) sees WORLD_SIZE > 1 and joins the process group on gloo; LOCAL_RANK is 0 unless a launcher
such as torchrun set it. Rank 0 saves the model and the tokenizer (save_pretrained) into MODEL_DIR.

    python3 examples/training/bert_mlm.py                                   # one process
    torchrun --nproc_per_node 2 examples/training/bert_mlm.py               # two, by hand
    python3 examples/training/bert_mlm.py --check /tmp/skiff-examples/bert-mlm/model

Settings: MODEL_DIR (or --model-dir; nothing is saved without one), EPOCHS (default 10), BATCH_SIZE
(per rank, 16), LR (2e-3), MAX_LENGTH (32). Prints `rank R/W: ...` on every rank, Trainer's log line
per epoch (on each node's first process), then on rank 0 the held-out loss before and after training
and `weights identical on all W ranks: True`. Exits 1 when the weights differ or the held-out loss
did not fall.

--check DIR loads a saved model and tokenizer, and prints one JSON line comparing the masked-LM loss
on the held-out lines (the same masks for both) with that of an untrained model of the same config;
it exits 1 unless the saved model's loss is finite and lower.
"""
import argparse
import hashlib
import json
import math
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is built here; never reach for a hub
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402
from transformers import (  # noqa: E402
    BertConfig,
    BertForMaskedLM,
    BertTokenizerFast,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
)
from transformers.utils import logging as hf_logging  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "data", "corpus.txt")
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def read_corpus(path: str = CORPUS) -> tuple[list[str], list[str]]:
    """the training lines and the held-out ones (every tenth)"""
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    return [s for i, s in enumerate(lines) if i % 10 != 9], [s for i, s in enumerate(lines) if i % 10 == 9]


def train_tokenizer(lines: list[str], vocab_size: int = 1000) -> Tokenizer:
    """a BERT-style WordPiece tokenizer (lower-cased, [CLS] ... [SEP]) learnt from the lines"""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tok


def encode(tokenizer: BertTokenizerFast, lines: list[str], max_length: int) -> list[dict]:
    enc = tokenizer(lines, truncation=True, max_length=max_length)
    return [{k: enc[k][i] for k in enc.keys()} for i in range(len(lines))]


def masked_lm_loss(model: BertForMaskedLM, tokenizer: BertTokenizerFast, lines: list[str], max_length: int, seed: int = 1234) -> float:
    """the mean masked-LM loss over the lines, with masks drawn from `seed` (the same for every model)"""
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    torch.manual_seed(seed)
    batch = collator(encode(tokenizer, lines, max_length))
    model.eval()
    with torch.no_grad():
        return model(**batch).loss.item()


def weights_digest(model: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for p in model.state_dict().values():
        h.update(p.detach().cpu().numpy().tobytes())
    return h.hexdigest()[:16]


def check(model_dir: str, max_length: int) -> int:
    """compares the saved model with an untrained one of its config on the held-out lines"""
    _, held_out = read_corpus()
    tokenizer = BertTokenizerFast.from_pretrained(model_dir)
    trained = BertForMaskedLM.from_pretrained(model_dir)
    torch.manual_seed(0)
    untrained = BertForMaskedLM(trained.config)
    loss = masked_lm_loss(trained, tokenizer, held_out, max_length)
    base = masked_lm_loss(untrained, tokenizer, held_out, max_length)
    ok = math.isfinite(loss) and loss < base
    files = sorted(os.listdir(model_dir))
    print(json.dumps({"held_out_loss": loss, "untrained_loss": base, "ok": ok, "vocab_size": trained.config.vocab_size,
                      "files": files}), flush=True)
    return 0 if ok else 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", default=os.environ.get("MODEL_DIR", ""))
    ap.add_argument("--epochs", type=float, default=float(os.environ.get("EPOCHS", "10")))
    ap.add_argument("--batch-size", type=int, default=int(os.environ.get("BATCH_SIZE", "16")))
    ap.add_argument("--lr", type=float, default=float(os.environ.get("LR", "2e-3")))
    ap.add_argument("--max-length", type=int, default=int(os.environ.get("MAX_LENGTH", "32")))
    ap.add_argument("--check", metavar="DIR", help="check a saved model instead of training")
    a = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    hf_logging.set_verbosity_error()
    if a.check:
        sys.exit(check(a.check, a.max_length))

    # One process per replica: a PyTorchJob's RANK is the node rank, which is then the process rank.
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        os.environ.setdefault("LOCAL_RANK", "0")
    start = time.perf_counter()
    args = TrainingArguments(
        output_dir=a.model_dir or os.path.join("/tmp", "bert-mlm-run"),
        use_cpu=True,
        ddp_backend="gloo" if world > 1 else None,  # with no backend named, accelerate would take MPI where torch has it
        ddp_find_unused_parameters=False,
        num_train_epochs=a.epochs,
        per_device_train_batch_size=a.batch_size,
        learning_rate=a.lr,
        warmup_ratio=0.1,
        weight_decay=0.01,
        logging_strategy="epoch",
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
        seed=0,
    )
    # TrainingArguments has joined the process group by now (when WORLD_SIZE > 1)
    rank, world = args.process_index, args.world_size
    if dist.is_initialized():
        print(f"rank {rank}/{world} joined via {os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')} "
              f"({dist.get_backend()})", flush=True)
    else:
        print(f"rank {rank}/{world}: not distributed", flush=True)

    train_lines, held_out = read_corpus()
    # rank 0 learns the tokenizer and sends it to the others: every rank then has the same vocabulary
    payload = [train_tokenizer(train_lines).to_str() if rank == 0 else None]
    if dist.is_initialized():
        dist.broadcast_object_list(payload, src=0)
    tokenizer = BertTokenizerFast(tokenizer_object=Tokenizer.from_str(payload[0]), model_max_length=a.max_length,
                                  clean_up_tokenization_spaces=True)

    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    model = BertForMaskedLM(config)
    before = masked_lm_loss(model, tokenizer, held_out, a.max_length)
    if rank == 0:
        params = sum(p.numel() for p in model.parameters())
        print(f"vocabulary {tokenizer.vocab_size} words, model {params} parameters, "
              f"{len(train_lines)} training lines, {len(held_out)} held out", flush=True)

    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=encode(tokenizer, train_lines, a.max_length),
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15),
    )
    result = trainer.train()
    elapsed = time.perf_counter() - start
    after = masked_lm_loss(model, tokenizer, held_out, a.max_length)
    mine = weights_digest(model)
    digests: list = [mine]
    if dist.is_initialized():
        digests = [None] * world
        dist.all_gather_object(digests, mine)
    same = all(d == mine for d in digests)
    print(f"rank {rank}/{world}: {result.global_step} steps, train loss {result.training_loss:.4f}, "
          f"weights {mine}", flush=True)
    if rank == 0:
        print(f"held-out loss {before:.4f} -> {after:.4f} ({elapsed:.1f}s)", flush=True)
        print(f"weights identical on all {world} ranks: {same} ({', '.join(digests)})", flush=True)
        if a.model_dir:
            os.makedirs(a.model_dir, exist_ok=True)
            model.save_pretrained(a.model_dir)
            tokenizer.save_pretrained(a.model_dir)
            print(f"model saved to {a.model_dir}: {', '.join(sorted(os.listdir(a.model_dir)))}", flush=True)
    if dist.is_initialized():
        dist.barrier()  # the workers stay until the master has saved
    code = 0 if same and after < before else 1
    # Leave without tearing anything down: with torch 1.13 on Python 3.11, freeing the DDP model (its
    # reducer joins a gloo thread that may be waiting for the GIL this thread holds) can hang for good.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
