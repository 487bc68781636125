"""A ParallelFor over N items with a fan-in: each iteration squares its item, one task sums them
(dsl.Collected). Compiled for Skiff, or run by kfp.local.

The components are compiled with install_kfp_package=False: kfp.local runs a lightweight
component's `pip install kfp` bootstrap as written, about 2 s a task here, which would make a
200-task run take minutes and measure pip rather than the orchestrator.

usage: python fanout.py compile OUT.yaml N PARALLELISM
       python fanout.py local ROOT N PARALLELISM   # kfp.local.SubprocessRunner; prints the sum, then seconds
"""
import sys
import time
from typing import List

from kfp import compiler, dsl


@dsl.component(base_image="python:3.11", install_kfp_package=False)
def square(x: int) -> int:
    return x * x


@dsl.component(base_image="python:3.11", install_kfp_package=False)
def total(xs: List[int]) -> int:
    # kfp.local hands collected integers over as floats
    return int(sum(xs))


def fan_out_in(n: int, parallelism: int):
    @dsl.pipeline(name=f"fan-out-in-{n}")
    def pipeline() -> int:
        with dsl.ParallelFor(items=list(range(n)), parallelism=parallelism) as item:
            sq = square(x=item).set_caching_options(False)
        return total(xs=dsl.Collected(sq.output)).set_caching_options(False).output

    return pipeline


if __name__ == "__main__":
    mode, where, n, parallelism = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    pipeline = fan_out_in(n, parallelism)
    if mode == "compile":
        compiler.Compiler().compile(pipeline, where)
    elif mode == "local":
        from kfp import local

        local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=where)
        t0 = time.perf_counter()
        result = pipeline()
        took = time.perf_counter() - t0
        assert result.output == sum(i * i for i in range(n)), result.output
        print(result.output)
        print(f"{took:.3f}")
