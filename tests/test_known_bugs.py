"""The known-bug corpus (tests/ptx/llvm/known-bugs/bugs.toml, docs/known-bugs.md): each
public NVPTX miscompile is `different` on the PTX an affected compiler wrote, with a
counterexample whose IR value llvmlite's JIT computes on the host (LLVM itself, not the Z3
terms), and the fixed compiler's PTX refines; the ptxas and IR-level cases refine on both
sides (their PTX is right). Where the affected PTX is short, its value at the counterexample
is computed again in plain Python from the instructions emitted. A case ptxsmt cannot find
yet (`needs`) may give its `today` verdict, never a wrong one. The default tier runs a
fixed sample; thorough, every case (scripts/known_bugs.py runs them all through the CLI and
writes the doc's table). The solvers are the CLI's (`solver="auto"`: z3, then bitwuzla; z3
alone times out on the fixed side of denorm_in_only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("llvmlite")
pytest.importorskip("ml_dtypes")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from known_bugs import CORPUS, EXPECTED, SIDES, TRIAGED, cases, claim  # noqa: E402
from llvm_host import run_jit  # noqa: E402
from llvm_nvptx_tests import host_call  # noqa: E402
from tier import THOROUGH, sample  # noqa: E402

from ptxsmt.function import read_function  # noqa: E402
from ptxsmt.llvm import read_ir  # noqa: E402
from ptxsmt.smt.queries.refinement import ir_refines  # noqa: E402
from ptxsmt.triage.claim import read_claim  # noqa: E402
from ptxsmt.triage.decide import triage  # noqa: E402

CASES = cases()
M32, M64 = 2 ** 32 - 1, 2 ** 64 - 1


def _s(x: int, w: int) -> int:
    return x - (1 << w) if x >> (w - 1) & 1 else x


def _umax_bytes(a: int, b: int) -> int:
    """Each byte lane: a's if a's byte > b's unsigned (zero-extended, then setp.gt.s32)."""
    lanes = ((a >> 8 * k & 0xFF, b >> 8 * k & 0xFF) for k in range(4))
    return sum((x if x > y else y) << 8 * k for k, (x, y) in enumerate(lanes))


# the affected PTX's value, computed from the instructions the compiler emitted (plain
# Python: shift amounts clamped to the width, as the PTX ISA says), where they are short
PTX_VALUE = {
    # shl.b64 a, n; sub.u32 64 - n; shr.b64; add.u64 (n: the low 32 bits of %n)
    "rotl64": lambda i: ((i["a"] << min(i["n"] & M32, 64))
                         + (i["a"] >> min((64 - (i["n"] & M32)) & M32, 64))) & M64,
    # shr.b64 a, n; sub.u32 64 - n; shl.b64; add.u64
    "rotr64": lambda i: ((i["a"] >> min(i["n"] & M32, 64))
                         + (i["a"] << min((64 - (i["n"] & M32)) & M32, 64))) & M64,
    "select_shl64": lambda i: (i["x"] << min(i["shift"] & M32, 64)) & M64,  # shl.b64
    "select_lshr64": lambda i: i["x"] >> min(i["shift"] & M32, 64),          # shr.u64
    "sext_shl_top32": lambda i: _s(i["x"], 32) * -2 ** 31 & M64,            # mul.wide.s32
    "sext_shl_top16": lambda i: _s(i["x"], 16) * -2 ** 15 & M32,            # mul.wide.s16
    "sitofp_i1_f32": lambda i: 0x3F800000 if i["a"] & 1 else 0,             # selp 1; cvt
    "fptoui_i1": lambda i: M32 if i["x"] == 0 else 0,                       # setp.eq.b32 x, 0
    "ashr_bfe": lambda i: i["a"] >> 15 & 0x1FFFF,                           # bfe.u32 15, 17
    "v4i8_smax_checks": lambda i: _umax_bytes(i["a"], i["b"]),              # prmt 0x777k
}


# LLVM's sign-bit operations on the input's bits (LangRef: fneg/fabs touch only the sign)
SIGN_BIT = {"fneg_nan": (32, lambda x: x ^ 1 << 31), "fabs_nan": (32, lambda x: x & M32 >> 1),
            "fabs_f16": (16, lambda x: x & 0x7FFF)}


def _nan(bits: int, width: int) -> bool:
    exponent = {16: 5, 32: 8}[width]
    fraction = width - 1 - exponent
    return bits >> fraction & (1 << exponent) - 1 == (1 << exponent) - 1 and \
        bits & (1 << fraction) - 1 != 0


def _ir_on_host(case: dict, inputs: dict[str, int]) -> int:
    """The IR function's result on the counterexample's inputs, run by llvmlite's JIT."""
    ll = CORPUS / f"{case['name']}.ll"
    wrapper, (ret_w, widths), names = host_call(ll, case["name"])
    args = [inputs[n] & ((1 << w) - 1) for n, w in zip(names, widths)]
    out = run_jit(ll.read_text() + "\n" + wrapper,
                  {f"host.{case['name']}": (ret_w, widths, 0, [args])})
    return next(iter(out.values()))[0]


def test_corpus_is_whole():
    """Every case has its IR and both PTX files, and names the report it comes from."""
    assert len(CASES) >= 20
    for case in CASES:
        for suffix in (".ll", *(f".{side}.ptx" for side in SIDES)):
            assert (CORPUS / f"{case['name']}{suffix}").is_file(), (case["name"], suffix)
        assert case["kind"] in EXPECTED and case["report"], case["name"]


@pytest.mark.parametrize("case", sample(CASES, 5, "known-bugs"), ids=lambda c: c["name"])
def test_known_bug(case):
    name = case["name"]
    ir = read_ir((CORPUS / f"{name}.ll").read_text())[name]
    for side, want in zip(SIDES, EXPECTED[case["kind"]], strict=True):
        ptx = read_function((CORPUS / f"{name}.{side}.ptx").read_text(), name)
        r = ir_refines(ir, ptx, timeout_ms=60_000, solver="auto", nan=case["nan"])
        allowed = {want, case["today"]} if side == "affected" and case["needs"] else {want}
        assert r.verdict in allowed, (side, r)
        if r.verdict != "different":
            continue
        assert r.ir_result is not None and r.ptx_result != r.ir_result, r
        if case["jit"]:
            assert _ir_on_host(case, r.inputs) == r.ir_result, (r.inputs, r)
        if name in PTX_VALUE:
            assert r.ptx_result == PTX_VALUE[name](r.inputs), (r.inputs, r)
        if name in SIGN_BIT:  # a NaN the ISA leaves open, where the IR flips or clears a bit
            width, ir_value = SIGN_BIT[name]
            x = next(iter(r.inputs.values()))
            assert r.open_nan and _nan(x, width) and _nan(r.ptx_result, width), r
            assert r.ir_result == ir_value(x), r


# the triage sample: a ptxas case always (its GPU value makes "not the compiler"), then 4
PTXAS = [c for c in CASES if c["kind"] == "ptxas"][:1]
TRIAGE_SAMPLE = PTXAS + sample([c for c in CASES if c not in PTXAS], 4, "triage")


@pytest.mark.parametrize("case", TRIAGE_SAMPLE if not THOROUGH else CASES,
                         ids=lambda c: c["name"])
def test_each_side_triaged_as_a_claim(case, tmp_path):
    """`ptxsmt triage` on each side's claim (scripts/known_bugs.py's `claim`, from
    bugs.toml): `confirmed` where the PTX miscompiles, `refuted` where it is right, `not
    the compiler` where the GPU's reported value is not the ISA's (a ptxas case)."""
    for side, want in zip(SIDES, TRIAGED[case["kind"]], strict=True):
        path = tmp_path / f"{case['name']}.{side}.json"
        path.write_text(json.dumps(claim(case, side, tmp_path)))
        t = triage(read_claim(path), timeout=60)
        assert t.verdict == want, (side, t)
