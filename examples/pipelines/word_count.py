"""A small pipeline for the demo: write a text as a Dataset artifact, count its words, and report
when the text is long. Compile with: .venv/bin/python examples/pipelines/word_count.py"""
from pathlib import Path

from kfp import compiler, dsl
from kfp.dsl import Dataset, Input, Output


@dsl.component(base_image="python:3.11")
def write_text(text: str, out: Output[Dataset]):
    with open(out.path, "w") as f:
        f.write(text)
    out.metadata["chars"] = len(text)


@dsl.component(base_image="python:3.11")
def count_words(data: Input[Dataset]) -> int:
    with open(data.path) as f:
        return len(f.read().split())


@dsl.component(base_image="python:3.11")
def report(words: int, verdict: str) -> str:
    line = f"{words} words: {verdict}"
    print(line)
    return line


@dsl.pipeline(name="word-count")
def word_count(text: str = "the quick brown fox jumps over the lazy dog", long_at: int = 5) -> str:
    written = write_text(text=text)
    counted = count_words(data=written.outputs["out"])
    with dsl.If(counted.output >= long_at):
        long = report(words=counted.output, verdict="a long text")
    with dsl.Else():
        short = report(words=counted.output, verdict="a short text")
    return dsl.OneOf(long.output, short.output)


if __name__ == "__main__":
    compiler.Compiler().compile(word_count, str(Path(__file__).with_suffix(".yaml")))
