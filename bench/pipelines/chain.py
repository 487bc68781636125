"""A 10-step chain of lightweight components: compiled for Skiff, or run by kfp.local.

usage: python chain.py compile OUT.yaml
       python chain.py local          # runs it with kfp.local.SubprocessRunner, prints seconds
"""
import sys
import time

from kfp import compiler, dsl


@dsl.component(base_image="python:3.11")
def add_one(x: int) -> int:
    return x + 1


@dsl.pipeline(name="chain-10")
def chain(start: int = 0) -> int:
    # caching off: the benchmark runs the same chain several times on one server
    t = add_one(x=start).set_caching_options(False)
    for _ in range(9):
        t = add_one(x=t.output).set_caching_options(False)
    return t.output


if __name__ == "__main__":
    if sys.argv[1] == "compile":
        compiler.Compiler().compile(chain, sys.argv[2])
    elif sys.argv[1] == "local":
        from kfp import local

        local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=sys.argv[2] if len(sys.argv) > 2 else "./local_outputs")
        t0 = time.perf_counter()
        result = chain(start=0)
        took = time.perf_counter() - t0
        assert result.output == 10, result.output
        print(f"{took:.3f}")
