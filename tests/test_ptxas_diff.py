"""ptxsmt ptxas-diff: kernel emission, SASS read-back, runs against the installed ptxas.

Tests that assemble skip unless ptxas and nvdisasm (or cuobjdump) are installed.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ptxsmt.cli.ptxas_diff import ptxas_diff
from ptxsmt.isa.syntax import PtxError
from ptxsmt.ptxasdiff import (
    Computed,
    DiffError,
    ReadbackError,
    assemble,
    emit_kernel,
    find_tool,
    load_jsonl,
    make_case,
    ptxas_version,
    read_kernel,
    read_stores,
    resolve_disassembler,
    run_diff,
)

GOLDEN = Path(__file__).resolve().parents[1] / "models" / "golden.jsonl"
PTXAS = shutil.which("ptxas") or find_tool("ptxas")
DISASM = find_tool("nvdisasm") or find_tool("cuobjdump")
_MISSING = [tool for tool, found in (
    ("ptxas (CUDA toolkit, or pip nvidia-cuda-nvcc)", PTXAS),
    ("nvdisasm or cuobjdump (pip nvidia-cuda-nvdisasm)", DISASM)) if not found]
needs_tools = pytest.mark.skipif(bool(_MISSING), reason="missing " + " and ".join(_MISSING))


def _is_ptxas_13_0() -> bool:
    return bool(PTXAS) and "V13.0." in ptxas_version(PTXAS)


def golden():
    return load_jsonl([GOLDEN])


def case(ptx: str, **inputs):
    return make_case({"ptx": ptx, "inputs": inputs})


# ---- kernel emission (no tools needed) -------------------------------------------------


def test_golden_covers_every_family():
    assert {c.family for c in golden()} == {
        "set", "setp", "selp", "slct", "half-set", "half-setp", "vset2", "vset4"}


@pytest.mark.parametrize("ptx, inputs, expect", [
    ("setp.ltu.f32 p|q, a, b;", {"a": "nan", "b": "1.0"},
     ["mov.b32 %f32_0, 0x7fc00000;", "setp.ltu.f32 %pred_0|%pred_1, %f32_0, %f32_1;",
      "selp.u32 %b32_0, 1, 0, %pred_0;", "st.global.u32 [%out+0], %b32_0;",
      "st.global.u32 [%out+8], %b32_1;"]),
    ("set.lt.bf16.f16 d, a, b;", {"a": "-1.0", "b": "0.0"},
     ["mov.b16 %f16_0, 0xbc00;", "set.lt.bf16.f16 %b16_0, %f16_0, %f16_1;",
      "st.global.b16 [%out+0], %b16_0;"]),
    ("setp.lt.and.bf16x2 p|q, a, b, !c;", {"a": "0xbf80bf80", "b": "0", "c": False},
     ["mov.b32 %b32_0, 0xbf80bf80;", "setp.ne.u32 %pred_0, 0, 0;",
      "setp.lt.and.bf16x2 %pred_1|%pred_2, %b32_0, %b32_1, !%pred_0;"]),
    ("selp.b16 d, a, b, c;", {"a": "1", "b": "2", "c": True},
     ["setp.ne.u32 %pred_0, 1, 0;", "selp.b16 %b16_2, %b16_0, %b16_1, %pred_0;"]),
    ("slct.s64.s32 d, a, b, c;", {"a": "1", "b": "2", "c": "-1"},
     ["mov.b64 %s64_0, 0x0000000000000001;", "mov.b32 %s32_0, 0xffffffff;",
      "st.global.b64 [%out+0], %s64_2;"]),
    ("vset4.u32.u32.eq d.b20, a.b0123, b, c;", {"a": "0", "b": "0", "c": "0xaabbccdd"},
     ["vset4.u32.u32.eq %b32_3.b20, %b32_0.b0123, %b32_1, %b32_2;"]),
    ("vset2.s32.s32.gt.add d, a, b, c;", {"a": "1", "b": "2", "c": "3"},
     ["vset2.s32.s32.gt.add %b32_3, %b32_0, %b32_1, %b32_2;"]),
    ("@!g setp.lt.f32 p, a, 0f3F800000;", {"a": "0.5", "g": False, "p": True},
     ["@!%pred_0 setp.lt.f32 %pred_1, %f32_0, 0f3F800000;"]),
    ("setp.lt.f32 _|q, a, b;", {"a": "1.0", "b": "2.0"},
     ["setp.lt.f32 _|%pred_0, %f32_0, %f32_1;"]),
])
def test_emitted_kernel(ptx, inputs, expect):
    kernel = emit_kernel([case(ptx, **inputs)], "k", guards=False)
    body = kernel.text.splitlines()
    for line in expect:
        assert line in body, (line, kernel.text)
    assert ".visible .entry k(.param .u64 out)" in body
    assert all(s.case == 0 and s.offset % 8 == 0 for s in kernel.slots)


def test_kernel_layout_and_guards():
    cases = golden()
    kernel = emit_kernel(cases, "k")
    offsets = [s.offset for s in kernel.slots]
    assert len(set(offsets)) == len(offsets)
    outputs = sum(len(c.expected) for c in cases)
    assert sum(s.case >= 0 for s in kernel.slots) == outputs
    guards = [s for s in kernel.slots if s.case < 0]
    assert len(guards) >= 3 * 9 and all(s.known is not None for s in guards)
    # every case's lines are attributed to it, in order (for ptxas error messages)
    assert sorted(set(kernel.lines.values())) == list(range(len(cases)))


def test_missing_input_is_an_error():
    with pytest.raises((DiffError, PtxError), match="without a value: b"):
        make_case({"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "1.0"}})


# ---- read-back (hand-written SASS, no tools needed) -----------------------------------


def sass(*lines: str) -> str:
    """nvdisasm -hex lines; an instruction written `TEXT | 0xENC` gets that encoding."""
    out = []
    for k, line in enumerate(lines):
        text, _, enc = line.partition(" | ")
        out.append(f"        /*{16 * k:04x}*/  {text} ;  /* {enc or '0x0000000000000000'} */")
    return "\n".join(out)


PROLOGUE = ("LDC R1, c[0x0][0x28]", "LDC.64 R2, c[0x0][0x210]", "ULDC.64 UR4, c[0x0][0x208]")


def test_read_back_of_constant_moves():
    memory = read_stores(sass(
        *PROLOGUE,
        "MOV R5, 0xdeadbeef",
        "IMAD.MOV.U32 R6, RZ, RZ, -0x1",
        "HFMA2.MMA R7, -RZ, RZ, 1.984375, 0 | 0x3ff00000ff077435",
        "CS2R R8, SRZ",
        "MOV R10, 0x1234",
        "PRMT R11, R10, 0x7610, R12",  # R12 is unknown; only its high half is
        "STG.E desc[UR4][R2.64], R5",
        "STG.E desc[UR4][R2.64+0x8], R6",
        "STG.E desc[UR4][R2.64+0x10], R7",
        "STG.E.64 desc[UR4][R2.64+0x18], R8",
        "STG.E.U16 desc[UR4][R2.64+0x20], R11",
        "STG.E desc[UR4][R2.64+0x28], RZ",
        "EXIT",
    ))

    def word(off, n=4):
        return sum(memory[off + i] << (8 * i) for i in range(n))

    assert word(0) == 0xDEADBEEF and word(8) == 0xFFFFFFFF and word(0x10) == 0x3FF00000
    assert word(0x18, 8) == 0 and word(0x20, 2) == 0x1234 and word(0x28) == 0


def test_compares_at_run_time_are_not_guessed():
    memory = read_stores(sass(
        *PROLOGUE,
        "MOV R4, 0x7fc00000",
        "FSETP.LT.AND P0, PT, R4, R4, PT",
        "SEL R5, RZ, 0x1, !P0",
        "@P0 MOV R6, 0x1",
        "STG.E desc[UR4][R2.64], R5",
        "STG.E desc[UR4][R2.64+0x8], R6",
        "EXIT",
    ))
    assert isinstance(memory[0], Computed) and "FSETP" in memory[0].ops
    assert isinstance(memory[8], Computed)


def test_hfma2_nan_immediates():
    """0x7fff is the canonical NaN, exact whether the FMA quiets or canonicalises; other
    NaN patterns are not read."""
    memory = read_stores(sass(*PROLOGUE, "HFMA2.MMA R7, -RZ, RZ, 0, +QNAN | 0x00007fffff077435",
                              "HFMA2.MMA R8, -RZ, RZ, 0, +QNAN | 0x00007e00ff087435",
                              "STG.E desc[UR4][R2.64], R7", "STG.E desc[UR4][R2.64+0x8], R8",
                              "EXIT"))
    assert [memory[i] for i in range(4)] == [0xFF, 0x7F, 0, 0]
    assert isinstance(memory[8], Computed)


def test_hfma2_immediate_must_match_its_encoding():
    with pytest.raises(ReadbackError, match="does not match its encoding"):
        read_stores(sass(*PROLOGUE, "HFMA2.MMA R7, -RZ, RZ, 1, 0 | 0x3ff00000ff077435",
                         "STG.E desc[UR4][R2.64], R7", "EXIT"))


def test_wrong_guard_refuses_the_kernel():
    kernel = emit_kernel([], "k")
    first = kernel.slots[0]  # a 16-bit guard
    text = sass(*PROLOGUE, f"MOV R5, {(first.known + 1) & 0xFFFF:#x}",
                f"STG.E.U16 desc[UR4][R2.64+{first.offset:#x}], R5", "EXIT")
    with pytest.raises(ReadbackError, match="guard"):
        read_kernel(kernel, text)


def test_store_elsewhere_is_refused():
    with pytest.raises(ReadbackError, match="output pointer"):
        read_stores(sass(*PROLOGUE, "STG.E desc[UR4][R8.64], RZ", "EXIT"))


# ---- command line (no tools needed) ----------------------------------------------------


def test_cli_missing_ptxas_is_bad_input():
    r = CliRunner().invoke(ptxas_diff, ["--ptxas", "/nonexistent/ptxas", str(GOLDEN)])
    assert r.exit_code == 2 and r.stderr.startswith("error: ptxas not found")
    assert "Traceback" not in r.output


def test_cli_bad_line_is_bad_input(tmp_path):
    f = tmp_path / "v.jsonl"
    f.write_text('{"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "1.0", "b": "2.0"}}\n'
                 '{"ptx": "setp.zz.f32 p, a, b;", "inputs": {}}\n')
    r = CliRunner().invoke(ptxas_diff, [str(f)])
    assert r.exit_code == 2 and f"{f}:2:" in r.output and r.stderr.count("\n") == 1


def test_a_line_carries_its_options():
    line = {"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "0x80000001", "b": "0x0"}}
    assert make_case(line).expected == {"p": True}  # -subnormal < 0
    sm13 = make_case({**line, "options": {"target": "sm_13"}})
    assert sm13.expected == {"p": False} and sm13.options.sm_1x  # flushed: -0 < 0 is false
    with pytest.raises(PtxError, match="unknown option"):
        make_case({**line, "options": {"traget": "sm_13"}})


# ---- against ptxas ---------------------------------------------------------------------


@needs_tools
def test_sm_1x_lines_are_skipped_with_their_reason():
    line = {"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "0x80000001", "b": "0x0"},
            "options": {"target": "sm_13"}}
    report = run_diff([line, {**line, "options": {}}], ptxas=PTXAS, jobs=1)
    skipped, compared = report.outcomes
    assert "sm_13" in skipped.skipped and compared.skipped is None and compared.folded
    assert report.mismatches == []


@needs_tools
def test_every_family_assembles_and_guards_read_back():
    kernel = emit_kernel(golden(), "k")
    result = assemble(kernel.text, PTXAS, resolve_disassembler(), "sm_90")
    assert result.sass is not None, result.errors
    values = read_kernel(kernel, result.sass)  # raises if a guard does not read back
    assert len(values) == len(golden())


@needs_tools
def test_golden_run():
    report = run_diff(golden(), ptxas=PTXAS, jobs=2)
    j = json.loads(json.dumps(report.to_json()))
    assert {"ptxas", "cases", "mismatches", "not_folded"} <= set(j)
    assert j["cases"] == 51 and j["mismatches"] == [] and j["rejected"] == []
    assert re.search(r"V\d+\.\d+", j["ptxas"])
    for fam in ("set", "setp", "selp", "slct"):  # ptxas folds these completely
        assert j["families"][fam]["folded"] == j["families"][fam]["cases"], fam
    for fam, entry in j["not_folded"].items():
        assert fam in ("half-set", "half-setp", "vset2", "vset4")
        assert entry["cases"] > 0 and entry["reason"].startswith("computed at run time by")


@needs_tools
def test_a_wrong_expectation_is_reported_with_a_reproducer():
    c = case("setp.lt.f32 p|q, a, b;", a="nan", b="1.0")
    c.expected["p"] = True  # what a buggy folder might say
    report = run_diff([c], ptxas=PTXAS)
    [m] = report.to_json()["mismatches"]
    assert m["ptxsmt"] == {"p": True, "q": True} and m["ptxas"] == {"p": False, "q": True}
    assert m["differ"] == ["p"] and m["confirmed_alone"]
    assert "setp.lt.f32 %pred_0|%pred_1" in m["kernel"]
    assert "O0" not in m and "not folded at -O0" in m["O0_note"]
    r = CliRunner().invoke(ptxas_diff, ["--json", str(GOLDEN)])
    assert r.exit_code == 0 and json.loads(r.stdout)["mismatches"] == []


@needs_tools
@pytest.mark.skipif(not _is_ptxas_13_0(), reason="documents ptxas 13.0 (docs/ptxas-diff.md)")
def test_ptxas_13_0_guarded_set_keeps_only_16_bits():
    """docs/ptxas-diff.md, finding 1: a false guard does not keep d of set.u32.u16."""
    c = case("@!g set.eq.and.u32.u16 d, a, b, !c;", a="0xffff", b="0", c=False, g=True,
             d="0x96cada02")
    assert c.expected == {"d": 0x96CADA02}
    [m] = run_diff([c], ptxas=PTXAS).to_json()["mismatches"]
    assert m["ptxas"] == {"d": "0xffffda02"} and m["confirmed_alone"]


@needs_tools
@pytest.mark.skipif(not _is_ptxas_13_0(), reason="documents ptxas 13.0 (docs/ptxas-diff.md)")
def test_ptxas_13_0_crashes_on_guarded_setp_with_sink():
    """docs/ptxas-diff.md, finding 2: ptxas segfaults; the case is reported, the rest runs."""
    crash = case("@g setp.lt.u32 _|q, a, b;", a="1", b="2", g=True, q=False)
    fine = case("setp.lt.u32 p, a, b;", a="1", b="2")
    report = run_diff([crash, fine], ptxas=PTXAS)
    [rejected] = report.rejected()
    assert "crashed" in rejected["error"] and report.outcomes[1].folded


@needs_tools
@pytest.mark.skipif(not _is_ptxas_13_0(), reason="documents ptxas 13.0 (docs/ptxas-diff.md)")
def test_ptxas_13_0_folds_bfi_b64_pos_and_len_unmasked():
    """docs/ptxas-diff.md, finding 10: pos = c & 0xff to the text (ptxsmt inserts 0xf1 at
    bit 0), 256 to ptxas (past bit 63: nothing); bfi.b32 folds as the text says."""
    wide = case("bfi.b64 d, a, b, c, e;", a="0x123456789abcdef1", b="0", c="0x100", e="8")
    narrow = case("bfi.b32 d, a, b, c, e;", a="0x9abcdef1", b="0", c="0x100", e="8")
    assert wide.expected == {"d": 0xF1} and narrow.expected == {"d": 0xF1}
    [m] = run_diff([wide, narrow], ptxas=PTXAS).to_json()["mismatches"]
    assert m["ptxas"] == {"d": f"{0:#018x}"} and m["ptxsmt"] == {"d": f"{0xF1:#018x}"}


@needs_tools
def test_a_case_without_outputs_counts_alike_anywhere_in_a_kernel():
    """A setp writing only `_` has nothing to read back, first or last in its kernel."""
    sink = case("setp.lt.f32 _, a, b;", a="1.0", b="2.0")
    other = case("setp.lt.f32 p, a, b;", a="1.0", b="2.0")
    first, last = run_diff([sink, other], ptxas=PTXAS), run_diff([other, sink], ptxas=PTXAS)
    assert first.families() == last.families()
    assert first.families()["setp"]["not_folded"] == 0 and not last.not_folded()
