"""The labels of planted pairs (scripts/planted_pairs.py): SASS compared but for what
moves when no instruction changes, a plant's label from ptxas's audit, and the audit
itself against ptxas and nvdisasm (skipped where they are missing)."""

from __future__ import annotations

import dataclasses
import random
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import planted_pairs  # noqa: E402
from planted_pairs import Assembler, Refused, audit, normalise  # noqa: E402

LISTING = """\
\t.target\tsm_80
f:
.text.f:
        /*0000*/                   FSETP.GEU.AND P3, PT, R8.reuse, -2.5, PT ;   /* 0x000fe2 */
        /*0010*/              @!P2 SEL R7, R0, 0xffffffff, P0 ;
        /*0020*/                   RET.ABS.NODEC R20 0x0 ;
"""


def test_sass_is_compared_without_addresses_encodings_and_reuse_hints():
    moved = (LISTING.replace("/*0010*/", "/*0030*/").replace("0x000fe2", "0x000fe3")
             .replace("R8.reuse", "R8").replace("  SEL", "\tSEL") + "\n\n")
    assert normalise(moved) == normalise(LISTING)
    assert "/*" not in normalise(LISTING) and ".reuse" not in normalise(LISTING)


@pytest.mark.parametrize("old,new", [
    ("FSETP.GEU", "FSETP.GE"),   # an ordered compare for an unordered one
    ("@!P2", "@P2"),             # the guard negated
    ("-2.5", "2.5"),             # an immediate's sign
    ("R8.reuse", "R9.reuse"),    # another register
    ("0xffffffff", "0xfffffffe"),
])
def test_any_other_change_of_an_instruction_is_a_change(old, new):
    assert normalise(LISTING.replace(old, new)) != normalise(LISTING)


class Listed(Assembler):
    """An assembler whose SASS is a table of the PTX texts (no tools needed)."""

    def __init__(self, table: dict[str, str | Refused]):
        super().__init__("ptxas", "nvdisasm", "V1.2.3", (75, 80))
        object.__setattr__(self, "table", table)

    def sass(self, ptx: str, function: str) -> str:
        said = self.table[ptx]
        if isinstance(said, Refused):
            raise said
        return said


@pytest.mark.parametrize("table,masked,expect,says", [
    ({"plain": "X", "planted": "X"}, True, "equivalent", "identical SASS: masked (evidence"),
    ({"plain": "X", "planted": "Y"}, False, "different", "the SASS differs: kept (not proof"),
    ({"plain": Refused("ptxas: line 5: no"), "planted": "Y"}, None, "different",
     "not audited: the unplanted -O2 side: ptxas: line 5: no"),
    ({"plain": "X", "planted": Refused("ptxas: line 7: no")}, None, "different",
     "not audited: the planted -O2 side: ptxas: line 7: no"),
])
def test_a_plant_is_labelled_by_its_audit(table, masked, expect, says):
    got = audit("plain", "planted", Listed(table))
    assert (got["masked"], got["expect"]) == (masked, expect)
    assert says in got["audit"]
    if masked is not None:
        assert got["audit"].startswith("ptxas V1.2.3 -O3 -arch sm_75")  # no .target: oldest


def test_without_ptxas_a_plant_keeps_its_planted_label():
    assert audit("plain", "planted", None) == {
        "masked": None, "audit": "not audited: ptxas or nvdisasm not found",
        "expect": "different"}


@pytest.mark.parametrize("target,arch", [("sm_70", "sm_75"), ("sm_75", "sm_75"),
                                         ("sm_80", "sm_80"), ("sm_86", "sm_90")])
def test_the_oldest_target_ptxas_takes_at_or_above_the_ptx(target, arch):
    assert Assembler("p", "n", "V", (75, 80, 90)).arch(f".target {target}\n") == arch


def test_a_target_newer_than_ptxas_is_refused():
    with pytest.raises(Refused, match="no target from sm_100"):
        Assembler("p", "n", "V", (75, 80)).arch(".target sm_100")


def test_plant_picks_an_applying_mutation_and_leaves_comments():
    mutations = [("lt", re.compile(r"setp\.lt"), "setp.le"), ("none", re.compile("xyz"), "")]
    text = "// setp.lt in a comment\n\tsetp.lt.s32 %p1, %r1, %r2;"
    assert planted_pairs.plant(text, random.Random(0), mutations) == (
        "// setp.lt in a comment\n\tsetp.le.s32 %p1, %r1, %r2;", "lt")
    assert planted_pairs.plant("\tret;", random.Random(0), mutations) is None
    assert planted_pairs.plant("\t// setp.lt\n\tret;", random.Random(0), mutations) is None


# ---- against ptxas and nvdisasm ------------------------------------------------------------

FUNCTION = """\
.version 7.0
.target {target}
.address_size 64
.visible .func (.param .b32 func_retval0) {name}(.param .b32 f_param_0, .param .b32 f_param_1)
{{
\t.reg .pred %p<3>;
\t.reg .b32 %r<3>;
\t.reg .f32 %f<4>;
\tld.param.f32 %f1, [f_param_0];
\tld.param.f32 %f2, [f_param_1];
\tsetp.lt.f32 %p1, %f1, %f2;
\tsetp.gt.f32 %p2, %f1, %f2;
\t{minmax}.f32 %f3, %f1, %f2;
\tselp.u32 %r1, 1, 0, %p1;
\tst.param.b32 [func_retval0+0], %r1;
\tret;
}}
"""


def _function(target="sm_80", name="f", minmax="min"):
    return FUNCTION.format(target=target, name=name, minmax=minmax)


@pytest.fixture(scope="module")
def assembler():
    found = planted_pairs.find_assembler()
    if found is None:
        pytest.skip("needs ptxas and nvdisasm")
    return found


def test_a_mutation_of_dead_code_is_masked(assembler):
    """%p2 and %f3 are read by nothing: ptxas drops them, planted or not."""
    plain = _function()
    got = audit(plain, plain.replace("setp.gt.f32", "setp.gtu.f32"), assembler)
    assert (got["masked"], got["expect"]) == (True, "equivalent")
    got = audit(plain, _function(minmax="max"), assembler)
    assert got["masked"] is True


def test_a_mutation_of_live_code_is_kept(assembler):
    plain = _function()
    got = audit(plain, plain.replace("setp.lt.f32", "setp.ltu.f32"), assembler)
    assert (got["masked"], got["expect"]) == (False, "different")


def test_sm_70_code_is_assembled_as_the_oldest_target_ptxas_has(assembler):
    plain = _function("sm_70")
    got = audit(plain, plain.replace("setp.lt.f32", "setp.le.f32"), assembler)
    assert got["masked"] is False and f"-arch {assembler.arch(plain)}" in got["audit"]


def test_what_ptxas_refuses_is_not_audited_and_says_where(assembler):
    """llc-14 writes sm_80's max.NaN into sm_70 code: ptxas refuses it."""
    plain = _function("sm_70", minmax="max.NaN")
    got = audit(plain, plain.replace("setp.lt.f32", "setp.le.f32"), assembler)
    assert (got["masked"], got["expect"]) == (None, "different")
    assert re.search(r"the unplanted -O2 side: ptxas: line 13: .*\.NaN", got["audit"]), got["audit"]


def test_a_function_ptxas_kept_no_code_of_is_no_evidence(assembler):
    """Both sides without f's code would be "identical": refused instead."""
    other = _function(name="g")
    assert audit(other, other.replace("setp.lt.f32", "setp.ltu.f32"), assembler) == {
        "masked": None, "audit": "not audited: the unplanted -O2 side: ptxas kept no code "
                                 "of f", "expect": "different"}


def test_a_listing_nvdisasm_fails_on_is_no_evidence(assembler):
    broken = dataclasses.replace(assembler, nvdisasm=shutil.which("false"))
    got = audit(_function(), _function(), broken)
    assert (got["masked"], got["audit"]) == (
        None, "not audited: the unplanted -O2 side: nvdisasm: failed")
