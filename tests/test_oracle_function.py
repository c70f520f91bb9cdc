"""ptxsmt's function evaluator against the independent whole-function oracle
(tests/oracle_function.py: plain Python over tests/oracle.py, no z3, no ptxsmt semantics).

tests/ptx/oracle/kinds.ptx holds small functions over every instruction kind of the
held-out corpora (every float compare of f16/f32/f64, the rounding arithmetic, min/max
with .NaN, the cvt rules, integer and predicate logic, branches, parameter addresses);
both run them on special values and random bits and must agree byte for byte, where a
byte the ISA leaves open must be open in both (scripts/oracle_check.py's
`evaluator_disagreement`, which `--evaluator K` runs on a corpus).
"""

from __future__ import annotations

import json
import random
import struct
import subprocess
import sys
from pathlib import Path

import oracle
import oracle_function as of
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import oracle_check  # noqa: E402

KINDS = Path(__file__).parent / "ptx" / "oracle" / "kinds.ptx"
SPECIALS = {  # per parameter width in bytes: zeros, infinities, NaNs, ones, edges, subnormals
    2: [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFD01, 0x3C00, 0xBC00, 0x0400, 0x7BFF, 0x0001,
        0x83FF, 0x3800, 0x3E00, 0x4100],
    4: [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFA00001, 0x3F800000,
        0xBF800000, 0x00800000, 0x7F7FFFFF, 0x00000001, 0x807FFFFF, 0x3F000000, 0x3FC00000,
        0x477FF000, 0x477FF001, 0x4F000000, 0xCF000000, 0x4F800000, 0x7FFFFFFF, 0xFFFFFFFF,
        0x3C007C00, 0x7E00FC00, 1, 2, 31, 33],
    8: [0, 1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, 0x7FF8 << 48, 0xFFF4 << 48 | 1, 0x3FF0 << 48,
        0xBFF0 << 48, 0x0010 << 48, 0x7FEFFFFFFFFFFFFF, 1, 0x41E0 << 48, 0xC1E0 << 48,
        0x41EFFFFFFFE00000, 0x40EFFE0000000000, 0x40EFFE0000000001, 0x3E70 << 48],
}
FUNCTIONS = {"cmp_f32": 120, "cmp_f16": 120, "cmp_f64": 80, "arith": 20, "minmax": 40,
             "cvts": 40, "ints": 60, "vecs": 40}


def special(rng: random.Random, n: int) -> int:
    """A special value of n bytes; a wider parameter: one in each 4-byte lane."""
    if n in SPECIALS:
        return rng.choice(SPECIALS[n])
    return sum(rng.choice(SPECIALS[4]) << 32 * k for k in range(n // 4))


def vectors(params: dict[str, int], count: int, seed: str):
    rng = random.Random(seed)
    for _ in range(count):
        yield {p: special(rng, n) if rng.random() < 0.8 else rng.getrandbits(8 * n)
               for p, n in params.items()}


def disagreements(name: str, count: int) -> list[str]:
    fn = of.read(KINDS.read_text(), name)
    return [d for params in vectors(fn.params, count, name)
            if (d := oracle_check.evaluator_disagreement(KINDS, fn, params))]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_ptxsmt_evaluator_agrees_with_the_oracle(name):
    assert disagreements(name, FUNCTIONS[name]) == []


# ---------------------------------------------------------------- the oracle, pinned by hand
def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f16(x: float) -> int:
    return struct.unpack("<H", struct.pack("<e", x))[0]


CMP_BITS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num",
            "nan"]


def compares(name: str, a: int, b: int) -> set[str]:
    r = of.run(of.read(KINDS.read_text(), name), {"a": a, "b": b}).returns["r"]
    return {c for i, c in enumerate(CMP_BITS) if r >> i & 1}


def test_compares_by_hand():
    assert compares("cmp_f32", f32(1.0), f32(2.0)) == {"ne", "lt", "le", "neu", "ltu", "leu", "num"}
    assert compares("cmp_f32", 0x80000000, 0) == {"eq", "le", "ge", "equ", "leu", "geu", "num"}
    assert compares("cmp_f32", 0x7FC00000, f32(1.0)) == {"equ", "neu", "ltu", "leu", "gtu", "geu",
                                                         "nan"}
    assert compares("cmp_f16", f16(-0.5), 0xFC00) == {"ne", "gt", "ge", "neu", "gtu", "geu", "num"}


def returns(name: str, **params: int) -> int:
    return of.run(of.read(KINDS.read_text(), name), params, of.chooser(0)).returns["r"]


def word(r: int, offset: int, size: int = 4) -> int:
    return (r >> 8 * offset) & ((1 << 8 * size) - 1)


def test_conversions_by_hand():
    big = returns("cvts", a=f32(3e9), c=struct.unpack("<Q", struct.pack("<d", -1.5))[0])
    assert word(big, 4, 2) == 0x7C00  # cvt.rn.f16.f32 3e9: past f16's range, +inf
    assert word(big, 24) == 0x7FFFFFFF  # cvt.rzi.s32.f32 3e9 saturates
    assert word(big, 32) == 3_000_000_000  # cvt.rzi.u32.f32 3e9 fits
    assert word(big, 28) == 0xFFFFFFFF  # cvt.rzi.s32.f64 -1.5: toward zero, -1
    assert word(big, 36) == 0  # cvt.rzi.u32.f64 -1.5 clamps to 0
    assert word(big, 6, 2) == f16(-1.5)
    nan = returns("cvts", a=0x7FC00000, c=0x7FF8 << 48)
    assert word(nan, 24) == word(nan, 32) == 0  # NaN -> 0
    half_ulp = returns("cvts", a=f32(65520.0), c=0)  # f16's max + half an ulp: ties to even, inf
    assert word(half_ulp, 4, 2) == 0x7C00


def test_arithmetic_by_hand():
    r = returns("arith", a=f32(1.0), b=f32(2.0 ** -24), c=0, d=0)
    # (1 + 2^-24) rounds to 1 (a tie, to even); 1 - 1 = 0; 0 * 2^-24 * ... = +0
    assert word(r, 0) == 0 and word(r, 20) == f32(1.0)
    r = returns("minmax", a=0x7FC00000, b=f32(-0.0), c=0, d=1 << 63)
    assert word(r, 0) == word(r, 4) == f32(-0.0)  # min/max of NaN and x: x
    assert all(oracle.is_nan(word(r, k), "f32") for k in (8, 12))  # .NaN: a NaN
    assert word(r, 32, 8) == 1 << 63  # min.f64(+0, -0) = -0


def test_vector_loads_and_stores_by_hand():
    """`.v2`/`.v4`: element k at the address plus k elements, lane 0 at the lowest."""
    r = returns("vecs", c=f16(1.5) | f16(2.0) << 16, v=int.from_bytes(
        struct.pack("<4I", 10, 3, 100, 4), "little"))
    assert word(r, 0, 2) == f16(3.5) and word(r, 2, 2) == f16(2.0)
    assert word(r, 4) == ((10 - 4) ^ 3) + 100  # %r1 - %r4, ^ %r2, + %r3
    assert word(r, 8) == 100 and word(r, 12) == 4  # [v+8] again, as a v2
    text = KINDS.read_text().replace("{%h1, %h2}, [c]", "{%h1}, [c]")
    with pytest.raises(of.OracleError, match="not 2 element"):
        of.run(of.read(text, "vecs"), {"c": 0, "v": 0})


# ---------------------------------------------------------------- scripts/oracle_check.py

NAN_VS_ONE = {"a": "0x7fc00000", "b": "0x3f800000"}  # ltu is true there, lt false


def check_corpus(tmp_path, verdict: str, cex: dict | None, capsys) -> tuple[int, dict]:
    """One pair, cmp_f32 against itself with one `lt` planted as `ltu`, run by the script."""
    text = KINDS.read_text()
    (tmp_path / "k.ptx").write_text(text)
    (tmp_path / "k-planted.ptx").write_text(text.replace("setp.lt.f32", "setp.ltu.f32", 1))
    (tmp_path / "pairs.jsonl").write_text(json.dumps(
        {"a": "k.ptx", "b": "k-planted.ptx", "function": "cmp_f32"}) + "\n")
    (tmp_path / "manifest.jsonl").write_text(json.dumps(
        {"name": "k-planted", "expect": "different"}) + "\n")
    result = {"verdict": verdict, **({"counterexample": {"inputs": cex}} if cex else {})}
    (tmp_path / "results.jsonl").write_text(json.dumps(result) + "\n")
    rc = oracle_check.main([str(tmp_path / "manifest.jsonl"), str(tmp_path / "results.jsonl"),
                            "--deep", "300", "--vectors", "300"])
    return rc, json.loads(capsys.readouterr().out.splitlines()[0])


def test_the_script_separates_a_wrong_equivalent(tmp_path, capsys):
    rc, row = check_corpus(tmp_path, "equivalent", None, capsys)
    assert rc == 1 and row["wrong"] and row["separating"]
    assert row["activated"] >= 1  # the planted compare's probe saw it compute otherwise


def test_the_script_replays_counterexamples(tmp_path, capsys):
    rc, row = check_corpus(tmp_path, "different", NAN_VS_ONE, capsys)
    assert rc == 0 and row["counterexample"] == "replays"
    rc, row = check_corpus(tmp_path, "different", {"a": "0x3f800000", "b": "0x40000000"}, capsys)
    assert rc == 1 and row["counterexample"] == "equal"  # 1 < 2: lt and ltu agree


def test_the_oracle_stays_independent():
    """Neither z3 nor ptxsmt is loaded by the whole-function oracle."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import oracle_function, oracle_rounding;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('z3', 'ptxsmt')))")
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------- nvcc's unoptimised shapes
NVCC = Path(__file__).parent / "ptx" / "oracle" / "nvcc.ptx"


def nvcc_returns(name: str, *params: int) -> int:
    fn = of.read(NVCC.read_text(), name)
    return of.run(fn, dict(zip(fn.params, params, strict=True))).returns["func_retval0"]


def test_calls_by_hand():
    """min through a call, max returned by pointer into the caller's depot, an inline
    assembly compare on a register without `%`: (3 - 1) << 1 | (3 > 1)."""
    assert nvcc_returns("calls", f32(1.0), f32(3.0)) == f32(2.0) << 1 & 0xFFFFFFFF | 1
    assert nvcc_returns("calls", f32(3.0), 0x7FC00000) == 0  # min = max = 3: 0.0, not gt


def test_widths_by_hand():
    """cvt.s32.s8 sign-extends the low byte; set.nan.f16.f16 writes f16 1.0 for true."""
    assert nvcc_returns("widths", 0x7E0000F0) == 0xFFFFFFF0 ^ 0x3C00
    assert nvcc_returns("widths", 0x3C00007F) == 0x7F


def test_bfi_by_hand():
    """bfi: a's low `len` bits into b from `pos`, none past the msb (the ISA's loop)."""
    assert nvcc_returns("insert", 0xAB, 0xFFFFFFFF, 28) == 0xBFFFFFFF  # 4 of 8 bits fit
    bfi = {"opcode": "bfi", "type": "b32"}  # e: the ISA's d (len); a[4] would be bit 32: dropped
    assert oracle.evaluate(bfi, {"a": 0x1B, "b": 0, "c": 28, "e": 8})["d"] == 0xB0000000
    assert nvcc_returns("insert", 0xAB, 0, 4) == 0xAB0
    assert nvcc_returns("insert", 0xAB, 0x12345678, 32) == 0x12345678  # past the msb: b
    assert nvcc_returns("insert", 0xAB, 0, 0x104) == 0xAB0  # pos is c & 0xff


def test_a_byte_read_before_written_is_open():
    text = NVCC.read_text().replace("st.f32 \t[%SP+4], %f2;", "")
    fn = of.read(text, "calls")
    assert of.outcome(fn, {"calls_param_0": f32(1.0), "calls_param_1": f32(3.0)}) is None


def test_ptxsmt_evaluator_agrees_on_nvcc_shapes():
    """(`calls` not: ptxsmt's evaluator takes the local window's base as an input, which
    `evaluator_disagreement` does not give.)"""
    fn = of.read(NVCC.read_text(), "widths")
    assert [d for params in vectors(fn.params, 60, "widths")
            if (d := oracle_check.evaluator_disagreement(NVCC, fn, params))] == []


# llc-14 returns an f16 with `st.param.b16` into a `.b32` return: its two upper bytes are
# never written (the same open value on both sides), its lower two are the f16
LLC14_HALF = """.version 7.0
.target sm_80
.address_size 64
.visible .func (.param .b32 func_retval0) f(.param .b32 f_param_0, .param .b32 f_param_1)
{{
	.reg .b16 %h<5>;
	.reg .b32 %r<2>;
	ld.param.b16 %h1, [f_param_0];
	ld.param.b16 %h2, [f_param_1];
	{body}
	ret;
}}
"""
RETURN_F16 = "st.param.b16 [func_retval0+0], %h3;"


def check_half_pair(tmp_path, capsys, a: str, b: str) -> tuple[int, dict]:
    """The llc-14 half function with body a against body b, called equivalent, through
    the script on 300 vectors."""
    for name, body in (("a.ptx", a), ("b.ptx", b)):
        (tmp_path / name).write_text(LLC14_HALF.format(body=body))
    (tmp_path / "pairs.jsonl").write_text(json.dumps({"a": "a.ptx", "b": "b.ptx"}) + "\n")
    (tmp_path / "manifest.jsonl").write_text(json.dumps({"name": "h", "expect": "?"}) + "\n")
    (tmp_path / "results.jsonl").write_text(json.dumps({"verdict": "equivalent"}) + "\n")
    rc = oracle_check.main([str(tmp_path / "manifest.jsonl"), str(tmp_path / "results.jsonl"),
                            "--vectors", "300"])
    return rc, json.loads(capsys.readouterr().out.splitlines()[0])


def test_an_f16_under_unwritten_bytes_is_compared_as_that_f16(tmp_path, capsys):
    """x + y against y + x: a NaN on both sides (an open one: any NaN) is no difference and
    no vector is skipped for the bytes neither writes (they were all skipped: bits)."""
    rc, row = check_half_pair(tmp_path, capsys, f"add.rn.f16 %h3, %h1, %h2; {RETURN_F16}",
                              f"add.rn.f16 %h3, %h2, %h1; {RETURN_F16}")
    assert rc == 0 and row["separating"] is None and row["skipped"] == 0


def test_a_nan_against_a_number_in_the_f16_separates(tmp_path, capsys):
    """max against max.NaN: where one operand is a NaN, a number against a NaN."""
    rc, row = check_half_pair(tmp_path, capsys, f"max.f16 %h3, %h1, %h2; {RETURN_F16}",
                              f"max.NaN.f16 %h3, %h1, %h2; {RETURN_F16}")
    assert rc == 1 and row["wrong"] and row["separating"]
    a, b = (int(x, 16) & 0xFFFF for x in row["separating"]["returns"]["func_retval0"])
    assert {oracle.is_nan(a, "f16"), oracle.is_nan(b, "f16")} == {True, False}


def test_a_byte_one_side_writes_and_the_other_leaves_open_is_skipped(tmp_path, capsys):
    """The f16 zero-extended into a `.b32` store against it stored alone: the upper bytes
    are 0 on one side, open on the other; the oracle cannot say, so it skips."""
    rc, row = check_half_pair(tmp_path, capsys, f"add.rn.f16 %h3, %h1, %h2; {RETURN_F16}",
                              "add.rn.f16 %h3, %h1, %h2; cvt.u32.u16 %r1, %h3; "
                              "st.param.b32 [func_retval0+0], %r1;")
    assert rc == 0 and row["separating"] is None and row["skipped"] == row["vectors"] == 300


F16_LOW = (of.Lane(0, 2, "f16"), of.Lane(2, 1, None, False), of.Lane(3, 1, None, False))
F32_PAIR = (of.Lane(0, 4, "f32"), of.Lane(4, 4, "f32"))


def test_returns_compare_lane_by_lane():
    assert of.same_return(0xABCD7E00, 0xABCDFFFF, F16_LOW, F16_LOW)  # NaNs, unwritten alike
    assert not of.same_return(0xABCD7E00, 0xABCD3C00, F16_LOW, F16_LOW)  # NaN against 1.0
    assert not of.same_return(0x00007E00, 0xFFFF7E01, F16_LOW, F16_LOW)  # unwritten: bits
    assert of.same_return(0x00007E00, 0xFFFF7E01, F16_LOW, F16_LOW, written_only=True)
    bits = (of.Lane(0, 2, None), *F16_LOW[1:])  # a `.b16` that no float wrote: bits
    assert not of.same_return(0x7E00, 0x7FFF, F16_LOW, bits)
    # two f32 in a `.b64` (st.param.v2.f32): a NaN in the low lane leaves the high one apart
    assert not of.same_return(1 << 32 | 0x7FC00000, 2 << 32 | 0x7FC00001, F32_PAIR, F32_PAIR)
    assert of.same_return(1 << 32 | 0x7FC00000, 1 << 32 | 0x7FC00001, F32_PAIR, F32_PAIR)


def test_a_float_store_overwritten_in_part_is_bits():
    fn = of.read(LLC14_HALF.format(body="add.rn.f16 %h3, %h1, %h2; "
                                        "st.param.b16 [func_retval0+1], %h3; "
                                        "mov.b16 %h4, 0; st.param.b8 [func_retval0+2], %h4;"))
    lanes = of.run(fn, {"f_param_0": f16(1.0), "f_param_1": f16(2.0)}, of.chooser(0)).lanes
    assert lanes["func_retval0"] == (of.Lane(0, 1, None, False), of.Lane(1, 1, None),
                                     of.Lane(2, 1, None), of.Lane(3, 1, None, False))
