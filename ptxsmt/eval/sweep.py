"""Exhaustive sweeps of 16-bit-operand variants over all 2^32 operand pairs.

The fast path runs one block of `a` values at a time against every `b`;
blocks are hashed in order and the digest is SHA-256 over the block hashes,
so it does not depend on how many processes ran the blocks.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from multiprocessing import get_context

import numpy as np

from ..fast import FastProgram, word_dtype
from ..isa.errors import PtxError
from ..sem.options import DEFAULT, Options
from ..solver import ignore_interrupts

BLOCKS = 256  # blocks of a-values; fixed so the digest is independent of --jobs


@lru_cache(maxsize=16)
def sweep_inputs(text: str, opts: Options = DEFAULT) -> tuple[FastProgram, str, str, list[str]]:
    """The text's program, the two 16-bit inputs swept, and any predicate inputs (each
    swept as false/true); once per process, not once per block."""
    from ..fast.codegen import compile_snippet  # Z3
    from ..program import Program

    fast = compile_snippet(Program.parse(text), opts)
    wide = [n for n in fast.inputs if fast.types[n].width == 16]
    preds = [n for n in fast.inputs if fast.types[n].width == 1]
    if len(wide) != 2 or len(wide) + len(preds) != len(fast.inputs):
        raise PtxError("sweep takes an instruction with two 16-bit operands "
                       f"(and predicates); this one reads {', '.join(fast.inputs)}")
    return fast, wide[0], wide[1], preds


@dataclass
class SweepResult:
    ptx: str
    pairs: int
    digests: dict[str, str]
    true_counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    blocks: dict[str, list[str]] = field(default_factory=dict)  # per block, to bisect diffs


def _block(args) -> tuple[int, dict[str, bytes], dict[str, int]]:
    text, opts, index = args
    fast, a_name, b_name, preds = sweep_inputs(text, opts)
    span = 65536 // BLOCKS
    b = np.arange(65536, dtype=np.uint16)
    hashes = {name: hashlib.sha256() for name in fast.outputs}
    trues = dict.fromkeys(fast.outputs, 0)
    for combo in range(1 << len(preds)):
        flags = {p: np.bool_((combo >> i) & 1) for i, p in enumerate(preds)}
        run = fast.specialize({b_name: b, **flags})  # b's share of the work, done once
        for a in range(index * span, (index + 1) * span):
            for name, values in run({a_name: np.uint16(a)}).items():
                if values.dtype == bool:
                    hashes[name].update(np.packbits(values).tobytes())
                    trues[name] += int(values.sum())
                else:
                    hashes[name].update(np.ascontiguousarray(
                        values, dtype=word_dtype(fast.types[name].width)).tobytes())
    return index, {k: h.digest() for k, h in hashes.items()}, trues


def sweep(text: str, jobs: int = 1, opts: Options = DEFAULT,
          progress: Callable[[int], None] | None = None) -> SweepResult:
    start = time.perf_counter()
    fast, _, _, preds = sweep_inputs(text, opts)
    work = [(text, opts, i) for i in range(BLOCKS)]
    results: dict[int, tuple[dict[str, bytes], dict[str, int]]] = {}
    with get_context("fork").Pool(jobs, initializer=ignore_interrupts) if jobs > 1 \
            else nullcontext() as pool:
        for i, digests, trues in (pool.imap_unordered if pool else map)(_block, work):
            results[i] = (digests, trues)
            if progress:
                progress(1)
    # the digest of an output: SHA-256 over its block digests, in block order
    blocks = {name: [results[i][0][name] for i in range(BLOCKS)] for name in fast.outputs}
    return SweepResult(text, (1 << 32) << len(preds),
                       {k: hashlib.sha256(b"".join(v)).hexdigest() for k, v in blocks.items()},
                       {k: sum(results[i][1][k] for i in range(BLOCKS)) for k in fast.outputs
                        if fast.types[k].width == 1},
                       time.perf_counter() - start,
                       {k: [digest.hex() for digest in v] for k, v in blocks.items()})
