"""The nvcc held-out generator (scripts/nvcc_heldout.py): the same source from the same
seed, CUDA that nvcc compiles into the layout `equiv --batch` reads, and the mutations
it adds to heldout_corpus.py's."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import nvcc_heldout  # noqa: E402
from corpora import labels  # noqa: E402


def test_the_same_seed_writes_the_same_source():
    for kind, make in nvcc_heldout.GENERATORS.items():
        assert make(20, 4400) == make(20, 4400), kind
    texts = {make(20, seed) for make in nvcc_heldout.GENERATORS.values() for seed in (1, 2)}
    assert len(texts) == 2 * len(nvcc_heldout.GENERATORS)


def test_level_and_math_alternate_by_seed():
    rows = list(nvcc_heldout.pairs(("fcmp",), 4))
    assert {(level, math) for _, _, _, level, math, _ in rows} == {
        (level, math) for level in nvcc_heldout.LEVELS for math in nvcc_heldout.MATH}


@pytest.mark.skipif(nvcc_heldout.find_nvcc() is None, reason="needs nvcc")
def test_two_pairs_compile_into_the_batch_layout(tmp_path):
    n, failed = nvcc_heldout.write(tmp_path, ("half",), 1, audit=False)
    assert failed == [] and n == 2  # the pair and its planted twin
    rows = labels(tmp_path)  # each checked against its batch line
    for label in rows:
        assert (label["level"], label["math"], label["compiler"]) == ("G", "precise", "nvcc")
    o0 = (tmp_path / "half-G-precise-4400.O0.ptx").read_text()
    o3 = (tmp_path / "half-G-precise-4400.O2.ptx").read_text()
    assert ".visible .func" in o3 and "call.uni" in o0  # -G keeps cuda_fp16.h's calls
    assert rows[1]["planted"] and rows[1]["expect"] == "different"  # unaudited
    source = (tmp_path / "half-G-precise-4400.cu").read_text()
    assert nvcc_heldout.compile_nvcc(source, "G", "precise") == (o0, o3)  # the same bytes


@pytest.mark.parametrize("line,name,planted", [
    ("\t{min.f16 %rs3,%rs8,%rs2;", "nan-min-asm", "\t{min.NaN.f16 %rs3,%rs8,%rs2;"),
    ("\tmax.ftz.f32 \t%f3, %f1, 0f3F800000;", "ftz-dropped",
     "\tmax.f32 \t%f3, %f1, 0f3F800000;"),
    ("\t{  cvt.rn.f16.f32 %rs2, %f7;}", "rounding", "\t{  cvt.rz.f16.f32 %rs2, %f7;}"),
])
def test_each_nvcc_mutation_changes_what_it_names(line, name, planted):
    outcomes = dict(nvcc_heldout.plant(line, random.Random(s))[::-1] for s in range(20))
    assert outcomes == {name: planted}


def test_no_product_feeds_a_sum():
    """A product (float `*`, __hmul, __hmul2), or its negation or lane, is never an
    operand of + or - (ptxas may fuse mul.f16 into add.f16 at -O3 only; -fmad lets
    -G's mul.f32 + add.f32 fuse or not): the pairs stay equal under every fusion."""
    assign = re.compile(r"(\w+) (v\d+) = (.*);")
    for kind, make in nvcc_heldout.GENERATORS.items():
        for seed in range(4400, 4600):
            products: set[str] = set()
            for t, name, expr in assign.findall(make(26, seed)):
                if t not in ("float", "double", "__half", "__half2"):
                    continue
                operands = set(re.findall(r"\b(?:v\d+|[xhn]\d)\b", expr))
                call = re.match(r"(\w+)\(", expr)
                if re.search(r"[^=!<>]\s[+-]\s", expr) or (call and call[1] in
                                                            nvcc_heldout.HALF_SUMS):
                    assert not operands & products, (kind, seed, name, expr)
                if " * " in expr or (call and call[1] in nvcc_heldout.HALF_PRODUCTS) or (
                        call and call[1] in ("__hneg", "__habs", "fabsf", "copysignf",
                                             "__low2half", "__high2half", "__halves2half2")
                        or expr.startswith("-")) and operands & products:
                    products.add(name)
