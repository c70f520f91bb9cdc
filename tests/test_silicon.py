"""Readings the ISA leaves to silicon, checked against what an H200 computed
(../shared/silicon, read as shipped; skipped where that folder is absent). The rules
under test are stated in Spec notes 11-13; these tests hold them to every line of the
silicon files they concern, not to a copy of the values."""

from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

from ptxsmt.eval.evaluate import evaluate
from ptxsmt.eval.values import UNSPECIFIED
from ptxsmt.isa.literals import fp_class
from ptxsmt.isa.types import TYPES

SILICON = Path(__file__).resolve().parent.parent.parent / "shared" / "silicon"
ARITH = SILICON / "arith_hw_half.jsonl.gz"

needs_silicon = pytest.mark.skipif(not ARITH.exists(),
                                   reason=f"no silicon results at {SILICON}")


@lru_cache(maxsize=None)
def silicon(path: Path = ARITH) -> tuple[dict, ...]:
    with gzip.open(path, "rt") as f:
        return tuple(json.loads(line) for line in f)


def _bits(text: str) -> int:
    return int(text, 16)


FLOAT_TO_INT = re.compile(r"cvt(?:\.\w+)*\.([su](?:8|16|32|64))\.(f16|bf16|f32|f64) ")


def _nan_conversions() -> list[tuple[dict, str, str]]:
    out = []
    for line in silicon():
        m = FLOAT_TO_INT.match(line["ptx"])
        if m and fp_class(_bits(line["inputs"]["a"]), TYPES[m[2]].fmt).endswith("NaN"):
            out.append((line, m[1], m[2]))
    return out


@needs_silicon
def test_a_nan_converts_to_the_integer_silicon_gives():
    """Every float -> integer cvt of a NaN on the H200 (.sat, .ftz, every rounding,
    quiet, negative and signalling NaNs): 0 from a 32-bit conversion, the destination's
    sign bit alone from a 64-bit one (Spec notes 11)."""
    lines = _nan_conversions()
    assert len(lines) >= 340 and {d for _, d, _ in lines} >= {"s16", "u16", "s32", "u64"}
    sat = [x for x in lines if ".sat." in x[0]["ptx"]]
    assert len(sat) >= 140
    for line, _, _ in lines:
        got = evaluate(line["ptx"], line["inputs"]).outputs["d"]
        assert got == _bits(line["hw_outputs"]["d"]), line
