"""The held-out generator (scripts/heldout_corpus.py): the same bytes from the same seed,
IR that LLVM reads, lines `equiv --batch` reads, and mutations that change what they
name."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("llvmlite")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import heldout_corpus  # noqa: E402
import planted_pairs  # noqa: E402
from corpora import files, labels  # noqa: E402


def test_the_same_seed_writes_the_same_bytes(tmp_path):
    for run in ("one", "two"):
        n, failed = heldout_corpus.write(tmp_path / run, ("fcmp", "half"), 1, ("llvm22",))
        assert failed == [] and n >= 2
    assert files(tmp_path / "one") == files(tmp_path / "two")
    for label in labels(tmp_path / "one"):
        assert 15 <= label["ptx"] <= 120


def test_other_seeds_other_functions():
    texts = {heldout_corpus.GENERATORS[kind](30, seed, seed % 2 == 1)
             for kind in heldout_corpus.KINDS for seed in (1000, 1001)}
    assert len(texts) == 2 * len(heldout_corpus.KINDS)


@pytest.mark.parametrize("kind", heldout_corpus.KINDS)
def test_every_kind_is_ir_llvm_reads_and_compiles(kind):
    """Each kind, with and without fast-math flags, through LLVM 22's -O2 to PTX."""
    for seed in (1000, 1001):
        o0, o2 = planted_pairs.compile_llvm22(heldout_corpus.GENERATORS[kind](45, seed,
                                                                               seed == 1001),
                                               "sm_80")
        assert ".visible .func" in o0 and "st.param" in o2


@pytest.mark.parametrize("line,name,planted", [
    ("\tsetp.lt.f32 \t%p1, %f1, %f2;", "unordered-flip", None),
    ("\tsetp.geu.f16 \t%p1, %rs1, %rs2;", "ordered-flip", "\tsetp.ge.f16 \t%p1, %rs1, %rs2;"),
    ("\tmin.f32 \t%f3, %f1, %f2;", "nan-min", "\tmin.NaN.f32 \t%f3, %f1, %f2;"),
    ("\tmax.NaN.f32 \t%f3, %f1, %f2;", "nan-min-dropped", "\tmax.f32 \t%f3, %f1, %f2;"),
    ("\tmov.f32 \t%f3, 0f00000000;", "zero-sign", "\tmov.f32 \t%f3, 0f80000000;"),
    ("\tsetp.ge.s32 \t%p1, %r1, %r2;", "signed-flip", "\tsetp.ge.u32 \t%p1, %r1, %r2;"),
    ("\tsetp.ltu.f32 \t%p1, %f1, %f2;", "strict-flip", None),
    ("\tsetp.gt.u32 \t%p1, %r1, %r2;", "int-strict-flip", "\tsetp.ge.u32 \t%p1, %r1, %r2;"),
])
def test_each_mutation_changes_what_it_names(line, name, planted):
    got = heldout_corpus.plant(line, random.Random(0))
    if planted is None:  # two mutations apply: the one named is among the choices
        outcomes = dict(heldout_corpus.plant(line, random.Random(s))[::-1] for s in range(20))
        assert name in outcomes
        assert re.fullmatch(r"\tsetp\.(eq|ne|lt|le|gt|ge)u?\.\w+ .*", outcomes[name])
    else:
        assert got == (planted, name)


def test_a_clamp_is_no_nan_min_site():
    """min against an immediate (a clamp's) never sees a NaN beside a number: not planted."""
    assert heldout_corpus.plant("\tmin.f32 \t%f3, %f1, 0f461C4000;", random.Random(0)) is None
    sm70 = ".target sm_70\n\tmin.f32 \t%f3, %f1, %f2;"
    assert heldout_corpus.plant(sm70, random.Random(0)) is None  # min.NaN is sm_80's
