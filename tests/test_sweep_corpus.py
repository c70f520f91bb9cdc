"""The sweep benchmark's generator (scripts/sweep_corpus.py): the same bytes on every run,
each planted twin one instruction away from its pair, lines `equiv --batch` reads."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

pytest.importorskip("llvmlite")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import sweep_corpus  # noqa: E402
from corpora import files, labels  # noqa: E402


def test_the_corpus_is_the_same_bytes_on_every_run(tmp_path):
    kinds = ("div", "half", "mixed")
    for run, audit in (("one", True), ("two", True), ("unaudited", False)):
        n, failed = sweep_corpus.write(tmp_path / run, kinds, (50,), 1, ("llvm22",), audit)
        assert failed == [] and n == 6
    assert [(x["masked"], x["expect"]) for x in labels(tmp_path / "unaudited") if x["planted"]] == \
        [(None, "different")] * 3
    assert files(tmp_path / "one") == files(tmp_path / "two")
    folder = tmp_path / "one"
    rows = labels(folder)
    assert [(x["kind"], bool(x["planted"])) for x in rows] == [
        (k, p) for k in kinds for p in (False, True)]
    for label in rows:
        if label["planted"]:  # one line of the -O2 side changed, as its mutation says
            plain = (folder / f"{label['name'].removesuffix('-planted')}.O2.ptx").read_text()
            changed = [(a, b) for a, b in zip(plain.split("\n"),
                                               (folder / f"{label['name']}.O2.ptx")
                                               .read_text().split("\n"), strict=True) if a != b]
            assert len(changed) == 1, changed


@pytest.mark.parametrize("line,name,planted", [
    ("\tmul.hi.u32 \t%r5, %r4, -1431655765;", "magic+1", "\tmul.hi.u32 \t%r5, %r4, -1431655764;"),
    ("\tsetp.lt.u32 \t%p1, %r1, %r2;", "lt-as-le", "\tsetp.le.u32 \t%p1, %r1, %r2;"),
    ("\tsetp.gt.u32 \t%p1, %r1, %r2;", "gt-as-ge", "\tsetp.ge.u32 \t%p1, %r1, %r2;"),
    ("\tsetp.lt.f32 \t%p1, %f1, %f2;", "ordered-as-unordered", "\tsetp.ltu.f32 \t%p1, %f1, %f2;"),
    ("\tsetp.neu.f16 \t%p1, %rs1, %rs2;", "unordered-as-ordered",
     "\tsetp.ne.f16 \t%p1, %rs1, %rs2;"),
    ("\tsetp.ge.s32 \t%p1, %r1, %r2;", "signed-as-unsigned", "\tsetp.ge.u32 \t%p1, %r1, %r2;"),
    ("\tmin.f32 \t%f3, %f1, %f2;", "min-as-max", "\tmax.f32 \t%f3, %f1, %f2;"),
    ("\tadd.s32 \t%r3, %r1, 277;", "immediate+1", "\tadd.s32 \t%r3, %r1, 278;"),
])
def test_each_mutation_changes_what_it_names(line, name, planted):
    """(Each line is one only of the mutations applies to.)"""
    assert sweep_corpus.plant(line, random.Random(0)) == (planted, name)
    assert sweep_corpus.plant("\tld.param.u32 \t%r1, [f_param_0];", None) is None
