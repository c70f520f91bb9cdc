"""`ptxas-diff --lowering`: the modifiers a variant states must reach ptxas's SASS.

The rules are checked on SASS text alone, and against ptxas 13.0 where it is installed:
they find docs/ptxas-diff.md findings 4 and 5 by themselves and pass the lowerings that keep
their modifiers. Silicon (../shared/silicon) is the independent witness that the flagged
lowerings compute wrong values."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from exact_float import NAN, arith, decode, to_format

from ptxsmt.cli.ptxas_diff import ptxas_diff
from ptxsmt.isa.variants import catalogue
from ptxsmt.ptxasdiff.lowering import RULES, audit, sass_instructions
from ptxsmt.ptxasdiff.tools import find_tool, ptxas_version

PTXAS = shutil.which("ptxas") or find_tool("ptxas")
DISASM = find_tool("nvdisasm") or find_tool("cuobjdump")
SILICON = Path(__file__).resolve().parents[2] / "shared" / "silicon" / "arith_hw_half.jsonl.gz"
BY_NAME = {str(v): v for v in catalogue()}


def covered(*names: str):
    return [(BY_NAME[n], [r for r in RULES if r.applies(BY_NAME[n])]) for n in names]


def test_the_rules_read_sass_text():
    sass = sass_instructions("""
        /*0070*/                   HADD2.F32 R0, -RZ, R0.H0_H0 ;
        /*00a0*/                   FFMA.RZ R0, R6, R0, R7 ;
        /*00b0*/               @P0 F2FP.F16.F32.PACK_AB R0, RZ, R0 ;""")
    assert sass == ["HADD2.F32 R0, -RZ, R0.H0_H0", "FFMA.RZ R0, R6, R0, R7",
                    "F2FP.F16.F32.PACK_AB R0, RZ, R0"]
    (v, rules), = covered("fma.rz.bf16")
    assert [r.broken_by(v, sass) for r in rules] == ["HADD2.F32 R0, -RZ, R0.H0_H0", None]
    assert [r.broken_by(v, ["HFMA2.BF16_V2.RZ R0, R0, R7, R6"]) for r in rules] == [None, None]
    (v, [rule]), = covered("cvt.rm.ftz.f16.f32")
    assert rule.broken_by(v, ["F2F.F16.F32.RM R7, R4"]) == "F2F.F16.F32.RM R7, R4"
    assert rule.broken_by(v, ["F2F.FTZ.F16.F32.RM R7, R4"]) is None


def test_rules_cover_only_what_they_name():
    assert not [r for r in RULES if r.applies(BY_NAME["cvt.rn.ftz.f16.f32"])]
    assert not [r for r in RULES if r.applies(BY_NAME["fma.rn.f32"])]
    assert [r.finding for r in RULES if r.applies(BY_NAME["fma.rz.bf16x2"])] == \
        ["finding 4", "finding 4"]


@pytest.mark.skipif(not (PTXAS and DISASM), reason="needs ptxas and nvdisasm")
@pytest.mark.skipif(bool(PTXAS) and "V13.0." not in ptxas_version(PTXAS),
                    reason="documents ptxas 13.0 (docs/ptxas-diff.md)")
def test_ptxas_13_0_lowerings_found_by_the_rules():
    broken = audit(covered("fma.rz.bf16", "fma.rn.bf16", "fma.rp.bf16x2", "fma.rn.bf16x2",
                           "add.rz.f32", "fma.rm.f64", "cvt.rp.ftz.f16.f32",
                           "cvt.rm.ftz.sat.f16.f32"), ptxas=PTXAS)
    assert sorted((str(b.variant), b.rule.name.split()[0]) for b in broken) == [
        ("cvt.rm.ftz.sat.f16.f32", ".ftz"), ("cvt.rp.ftz.f16.f32", ".ftz"),
        ("fma.rp.bf16x2", "a"), ("fma.rz.bf16", "bf16")]


def test_the_cli_refuses_vector_files_with_lowering(tmp_path):
    r = CliRunner().invoke(ptxas_diff, ["--lowering", str(tmp_path / "x.jsonl")])
    assert r.exit_code == 2 and "--lowering reads the catalogue" in r.output


def silicon(*forms: str):
    with gzip.open(SILICON, "rt") as lines:
        for line in lines:
            r = json.loads(line)
            if r["ptx"].split()[0] in forms:
                yield r, *(int(r["inputs"][k], 16) for k in "abc"), int(r["hw_outputs"]["d"], 16)


@pytest.mark.skipif(not SILICON.exists(), reason="../shared/silicon is not beside the checkout")
def test_silicon_computes_what_the_flagged_sass_says():
    """Finding 4, on an H200, by exact arithmetic: fma.rp.bf16 is its bits read as f16,
    an f32 FFMA.RP and a round-to-nearest pack to f16 (HADD2.F32, FFMA.RP, F2FP.F16); the
    bf16x2 forms round to nearest whatever their modifier (HFMA2.MMA.BF16_V2, no .RZ/.RP)."""
    scalar = 0
    for _, a, b, c, hw in silicon("fma.rp.bf16"):
        xs = [to_format(decode(x, "f16"), "f32", "rn") for x in (a, b, c)]
        y = NAN if NAN in xs else arith("fma", "rp", "f32", *xs)
        if y != NAN:
            assert to_format(decode(y, "f32"), "f16", "rn") == hw
            scalar += 1
    lanes = 0
    for _, a, b, c, hw in silicon("fma.rz.bf16x2", "fma.rp.bf16x2"):
        for shift in (0, 16):
            y = arith("fma", "rn", "bf16", *((x >> shift) & 0xFFFF for x in (a, b, c)))
            if y != NAN:
                assert (hw >> shift) & 0xFFFF == y
                lanes += 1
    assert scalar >= 30 and lanes >= 140
