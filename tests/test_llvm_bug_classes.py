"""IR features the reported NVPTX miscompiles need (issue 43, item 2), each checked on
PTX that llc-14 and llvmlite's LLVM 22.1 wrote (tests/ptx/llvm/bug_classes/, the IR files
say how), with every counterexample checked against plain Python: the IR's value from
the LangRef by hand, the PTX's from the instructions emitted.

- compare-guarded shifts by an i64 amount: LLVM 22.1 drops the guard (PTX shifts clamp)
  but shifts by the amount's low 32 bits (llvm/llvm-project#172431, fixed by #201165);
  llc-14 keeps a `setp`/`selp` and refines.
- `<2 x i8>`/`<4 x i8>` parameters and returns: the bytes of a `.b8` array, read lane by
  lane (llc-14), as one `.b32` taken apart with `prmt` (LLVM 22.1), or returned as one
  `st.param.b16` (LLVM after 22: i8x2-instructions.ll's CHECK lines); all refine, and
  each with its lanes planted out of order is `different`.
- minnum's signed zeros as the current LangRef orders them: a `setp.lt`/`selp` lowering
  (x86's, llvm/llvm-project#169122) is `different` at (-0.0, +0.0), and refines under
  `nsz`; `min.f32` refines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llvmlite")

from ptxsmt.function import read_function  # noqa: E402
from ptxsmt.llvm import read_ir  # noqa: E402
from ptxsmt.smt.queries.refinement import ir_refines  # noqa: E402

HERE = Path(__file__).parent / "ptx" / "llvm" / "bug_classes"
M64 = 2 ** 64 - 1


def _s64(x: int) -> int:
    return x - (1 << 64) if x >> 63 else x


# ---- compare-guarded shifts ------------------------------------------------------------

# the IR's value, LangRef: the shift is poison for n >= width, but select takes the other
# arm there ("icmp ult n, 64" false: 0; ashr's other arm is x's sign)
GUARDED = {
    "shl_guard": lambda x, n: (x << n) & M64 if n < 64 else 0,
    "lshr_guard": lambda x, n: x >> n if n < 64 else 0,
    "ashr_guard": lambda x, n: (_s64(x) >> min(n, 63)) & M64,
    "shl_guard32": lambda x, n: (x << n) & 0xFFFFFFFF if n < 32 else 0,
    "shl_guard_ugt": lambda x, n: (x << n) & M64 if n <= 63 else 0,
}
# LLVM 22.1's PTX: `cvt.u32.u64` of the amount, then one shift, which "clamps" amounts
# past the register width (PTX ISA shl/shr) but sees only the amount's low 32 bits
PTX_SHIFT = {
    "shl_guard": lambda x, n: (x << min(n & 0xFFFFFFFF, 64)) & M64,
    "lshr_guard": lambda x, n: x >> min(n & 0xFFFFFFFF, 64),
    "shl_guard32": lambda x, n: (x << min(n & 0xFFFFFFFF, 32)) & 0xFFFFFFFF,
    "shl_guard_ugt": lambda x, n: (x << min(n & 0xFFFFFFFF, 64)) & M64,
}
SHIFT_IR = read_ir((HERE / "guarded_shift.ll").read_text())


@pytest.mark.parametrize("name", sorted(GUARDED))
@pytest.mark.parametrize("ptx", ["llc14_O2", "lite_O0", "lite_O2"])
def test_a_guard_dropped_for_a_32_bit_ptx_shift_is_found(ptx, name):
    fn = read_function((HERE / f"guarded_shift_{ptx}.ptx").read_text(), name)
    r = ir_refines(SHIFT_IR[name], fn, timeout_ms=60_000)
    if ptx == "llc14_O2" or name not in PTX_SHIFT:  # a setp/selp guard kept, or an ashr
        assert r.verdict == "refines", r
        return
    assert r.verdict == "different", r
    x, n = r.inputs["x"], r.inputs["n"]
    mask = (1 << (32 if name == "shl_guard32" else 64)) - 1
    assert n >> 32 and r.ir_result & mask == GUARDED[name](x, n)
    assert r.ptx_result & mask == PTX_SHIFT[name](x, n) != GUARDED[name](x, n)


def test_the_guards_oracle_matches_its_own_ir_on_small_amounts():
    """Where the amount fits 32 bits LLVM 22.1's shift is right: the two oracles agree,
    so a counterexample's difference is the amount's high half."""
    for name, ptx in PTX_SHIFT.items():
        for n in (0, 1, 31, 32, 63, 64, 65, 2 ** 31):
            assert ptx(0x8000_0001_F00F_0001, n) == GUARDED[name](0x8000_0001_F00F_0001, n)


# ---- <2 x i8> and <4 x i8> as bytes ----------------------------------------------------

VECTOR_IR = read_ir((HERE / "i8_vectors.ll").read_text())


def _lanes(x: int, k: int) -> list[int]:
    return [(x >> 8 * i) & 0xFF for i in range(k)]


def _pack(lanes: list[int]) -> int:
    return sum(v << 8 * i for i, v in enumerate(lanes))


def _s8(v: int) -> int:
    return v - 256 if v & 0x80 else v


# the IR's value as the return's bytes, lane 0 in the lowest (little-endian .b8 array)
VECTORS = {
    "add4": lambda a, b: _pack([(p + q) & 0xFF for p, q in zip(_lanes(a, 4), _lanes(b, 4))]),
    "add2": lambda a, b: _pack([(p + q) & 0xFF for p, q in zip(_lanes(a, 2), _lanes(b, 2))]),
    "sel4": lambda a, b: _pack([p if _s8(p) < _s8(q) else q
                                for p, q in zip(_lanes(a, 4), _lanes(b, 4))]),
    "ext4": lambda a: _lanes(a, 4)[2],
    "shuf2": lambda a, b: _pack([_lanes(b, 2)[1], _lanes(a, 2)[0]]),
}
def _add4_with(a_lanes, b_lanes, order=(0, 1, 2, 3)) -> int:
    sums = [(p + q) & 0xFF for p, q in zip(a_lanes, b_lanes)]
    return _pack([sums[i] for i in order])


# planted bugs, each with the PTX's value by hand: lanes out of order in the return
# (llc-14: its st.param.v4.b8 operands reversed; LLVM 22.1: its last prmt joins the
# halves the other way round) or in a parameter (lanes 0 and 1 of %a read swapped:
# llc-14's ld.param.v4.u8 destinations; LLVM 22.1's prmt selectors for %r1)
PLANTED = {
    "llc14 return": ("llc14_O2", [("{%rs12, %rs11, %rs10, %rs9}", "{%rs9, %rs10, %rs11, %rs12}")],
                     lambda a, b: _add4_with(_lanes(a, 4), _lanes(b, 4), (3, 2, 1, 0))),
    "lite return": ("lite_O2", [("%r17, %r16, %r9, 0x5410U", "%r17, %r9, %r16, 0x5410U")],
                    lambda a, b: _add4_with(_lanes(a, 4), _lanes(b, 4), (2, 3, 0, 1))),
    "llc14 parameter": ("llc14_O2", [("{%rs1, %rs2, %rs3, %rs4}, [add4_param_0]",
                                     "{%rs2, %rs1, %rs3, %rs4}, [add4_param_0]")],
                        lambda a, b: _add4_with([_lanes(a, 4)[i] for i in (1, 0, 2, 3)],
                                                _lanes(b, 4))),
    "lite parameter": ("lite_O2", [("%r11, %r1, 0, 0x7771U", "%r11, %r1, 0, 0x7770U"),
                                   ("%r14, %r1, 0, 0x7770U", "%r14, %r1, 0, 0x7771U")],
                       lambda a, b: _add4_with([_lanes(a, 4)[i] for i in (1, 0, 2, 3)],
                                               _lanes(b, 4))),
}


@pytest.mark.parametrize("name", sorted(VECTORS))
@pytest.mark.parametrize("ptx", ["llc14_O2", "lite_O0", "lite_O2"])
def test_i8_vector_parameters_and_returns_refine(ptx, name):
    fn = read_function((HERE / f"i8_vectors_{ptx}.ptx").read_text(), name)
    r = ir_refines(VECTOR_IR[name], fn, timeout_ms=60_000)
    assert r.verdict == "refines", r


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_i8_vector_lanes_out_of_order_are_different(bug):
    ptx, edits, ptx_value = PLANTED[bug]
    text = (HERE / f"i8_vectors_{ptx}.ptx").read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    r = ir_refines(VECTOR_IR["add4"], read_function(text, "add4"), timeout_ms=60_000)
    assert r.verdict == "different", r
    a, b = r.inputs["a"], r.inputs["b"]
    assert r.ir_result & 0xFFFFFFFF == VECTORS["add4"](a, b)
    assert r.ptx_result & 0xFFFFFFFF == ptx_value(a, b) != VECTORS["add4"](a, b)


UPSTREAM = read_ir((HERE / "i8x2_upstream.ll").read_text())


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_upstream_i8x2_lowering_refines(name):
    """LLVM after 22: a <2 x i8> parameter read as ld.param.v2.b8, returned as one
    st.param.b16 (its two bytes, lane 0 low)."""
    fn = read_function((HERE / "i8x2_upstream.ptx").read_text(), name)
    assert ir_refines(UPSTREAM[name], fn, timeout_ms=60_000).verdict == "refines"


def test_upstream_i8x2_lanes_swapped_are_different():
    text = (HERE / "i8x2_upstream.ptx").read_text().replace(
        "shl.b16 \t%rs3, %rs2, 8;\n\tor.b16 \t%rs4, %rs1, %rs3;",
        "shl.b16 \t%rs3, %rs1, 8;\n\tor.b16 \t%rs4, %rs2, %rs3;")
    assert "%rs3, %rs1, 8" in text
    name = "test_bitcast_2xi8_i16"
    r = ir_refines(UPSTREAM[name], read_function(text, name), timeout_ms=60_000)
    assert r.verdict == "different", r
    a = r.inputs["a"]  # bitcast: lane 0 is the low byte (little-endian)
    assert r.ir_result & 0xFFFF == a & 0xFFFF
    assert r.ptx_result & 0xFFFF == _pack(_lanes(a, 2)[::-1]) != a & 0xFFFF


# ---- minnum's signed zeros (the current LangRef) ---------------------------------------

# minnum lowered as x86 lowers it (llvm/llvm-project#169122): a < b or b is NaN ? a : b,
# which does not order -0.0 < +0.0 as LangRef has since LLVM 22 (#112852, #170067)
MINNUM_IR = """define float @f(float %a, float %b) {
  %r = call FLAGS float @llvm.minnum.f32(float %a, float %b)
  ret float %r
}
declare float @llvm.minnum.f32(float, float)
"""
MINNUM_UNORDERED_PTX = """.version 7.0
.target sm_80
.address_size 64
.visible .func (.param .b32 func_retval0) f(.param .b32 f_param_0, .param .b32 f_param_1)
{
	.reg .pred 	%p<4>;
	.reg .f32 	%f<4>;
	ld.param.f32 	%f1, [f_param_0];
	ld.param.f32 	%f2, [f_param_1];
	setp.nan.f32 	%p1, %f2, %f2;
	setp.lt.f32 	%p2, %f1, %f2;
	or.pred 	%p3, %p1, %p2;
	selp.f32 	%f3, %f1, %f2, %p3;
	st.param.f32 	[func_retval0+0], %f3;
	ret;
}
"""


@pytest.mark.parametrize("flags,verdict", [("", "different"), ("nsz", "refines")])
def test_minnum_orders_signed_zeros_unless_nsz(flags, verdict):
    """LangRef: minnum "-0.0 < +0.0 for the purposes of this intrinsic"; with nsz, "the
    result of minnum(-0.0, +0.0) may be either -0.0 or +0.0". min.f32 orders them."""
    ir = read_ir(MINNUM_IR.replace("FLAGS", flags))["f"]
    r = ir_refines(ir, read_function(MINNUM_UNORDERED_PTX, "f"), timeout_ms=60_000)
    assert r.verdict == verdict, r
    if verdict == "different":  # only -0.0 against +0.0 tells the two apart
        assert (r.inputs["a"], r.inputs["b"]) == (0x80000000, 0)
        assert (r.ir_result & M64, r.ptx_result & 0xFFFFFFFF) == (0x80000000, 0)
    ordered = MINNUM_UNORDERED_PTX.replace("selp.f32 \t%f3, %f1, %f2, %p3;",
                                           "min.f32 \t%f3, %f1, %f2;")
    assert "min.f32" in ordered
    assert ir_refines(ir, read_function(ordered, "f"), timeout_ms=60_000).verdict == "refines"
