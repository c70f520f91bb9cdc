"""Pin the test oracle (tests/oracle.py) with hand-computed cases and exhaustive decoder checks."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from oracle import Unspecified, convert, decode_float, evaluate, flush, is_nan, is_subnormal

NAN32, ONE32, NEG0_32, NEG_SUB32 = 0x7FC00000, 0x3F800000, 0x80000000, 0x80000001


def D(spec: str, **kw) -> dict:
    """'setp lt f32' -> {"opcode": "setp", "cmp": "lt", "type": "f32"} (+ extra keys)."""
    parts = spec.split()
    keys = {
        "set": ("opcode", "cmp", "dtype", "stype"),
        "setp": ("opcode", "cmp", "type"),
        "selp": ("opcode", "type"),
        "slct": ("opcode", "dtype", "ctype"),
        "cvt": ("opcode", "dtype", "atype"),
        **dict.fromkeys(("mov", "not", "and", "or", "xor"), ("opcode", "type")),
    }.get(parts[0], ("opcode", "atype", "btype", "cmp"))
    return dict(zip(keys, parts, strict=True)) | kw


CASES = [
    # setp: NaN, ordered vs unordered (ne is False on NaN), q = !t without BoolOp
    (D("setp lt f32"), dict(a=NAN32, b=ONE32), {"p": False, "q": True}),
    (D("setp ne f32"), dict(a=NAN32, b=ONE32), {"p": False, "q": True}),
    (D("setp neu f32"), dict(a=NAN32, b=ONE32), {"p": True, "q": False}),
    (D("setp num f32"), dict(a=ONE32, b=NAN32), {"p": False, "q": True}),
    (D("setp nan f64"), dict(a=0x7FF0000000000001, b=0), {"p": True, "q": False}),
    (D("setp eq f32"), dict(a=NEG0_32, b=0), {"p": True, "q": False}),
    (D("setp eq bf16"), dict(a=0x8000, b=0), {"p": True, "q": False}),
    # subnormals: kept by default, flushed by .ftz and by sm_1x (f32 only), never for f64
    (D("setp lt f32"), dict(a=NEG_SUB32, b=0), {"p": True, "q": False}),
    (D("setp lt f32", ftz=True), dict(a=NEG_SUB32, b=0), {"p": False, "q": True}),
    (D("setp lt f32", sm=13), dict(a=NEG_SUB32, b=0), {"p": False, "q": True}),
    (D("setp lt f64", ftz=True), dict(a=0x8000000000000001, b=0), {"p": True, "q": False}),
    (D("setp lt f16"), dict(a=0x8001, b=0), {"p": True, "q": False}),
    (D("setp lt f16", ftz=True), dict(a=0x8001, b=0), {"p": False, "q": True}),
    (D("setp lt bf16", ftz=True), dict(a=0x8001, b=0), {"p": False, "q": True}),
    # integers: signed vs unsigned; lo/ls/hi/hs unsigned; bN unsigned
    (D("setp lt s32"), dict(a=1, b=0xFFFFFFFF), {"p": False, "q": True}),
    (D("setp lt u32"), dict(a=1, b=0xFFFFFFFF), {"p": True, "q": False}),
    (D("setp lo u32"), dict(a=1, b=0xFFFFFFFF), {"p": True, "q": False}),
    (D("setp lt b16"), dict(a=1, b=0xFFFF), {"p": True, "q": False}),
    # BoolOp: p = BoolOp(t, c'), q = BoolOp(!t, c'), c' = !c with negc
    (D("setp lt s32", boolop="and"), dict(a=0xFFFFFFFF, b=0, c=False), {"p": False, "q": False}),
    (
        D("setp lt s32", boolop="and", negc=True),
        dict(a=0xFFFFFFFF, b=0, c=False),
        {"p": True, "q": False},
    ),
    (D("setp lt s32", boolop="xor"), dict(a=0xFFFFFFFF, b=0, c=True), {"p": False, "q": True}),
    (D("setp lt s32", boolop="or"), dict(a=0, b=0, c=True), {"p": True, "q": True}),
    # packed setp: p|q are lane 0 and lane 1 (lane 0 = low bits)
    (D("setp gt f16x2"), dict(a=0x3C004000, b=0x40003C00), {"p": True, "q": False}),
    (
        D("setp gt f16x2", boolop="or"),
        dict(a=0x3C004000, b=0x40003C00, c=True),
        {"p": True, "q": True},
    ),
    (
        D("setp gt bf16x2", boolop="and"),
        dict(a=0x3F804000, b=0x40003F80, c=True),
        {"p": True, "q": False},
    ),
    # set (9.7.6)
    (D("set lt f32 s32"), dict(a=0xFFFFFFFF, b=0), {"d": 0x3F800000}),
    (D("set lt u32 s32"), dict(a=0xFFFFFFFF, b=0), {"d": 0xFFFFFFFF}),
    (D("set lt u32 u32"), dict(a=0xFFFFFFFF, b=0), {"d": 0}),
    (D("set lt f32 s32", boolop="and", negc=True), dict(a=0xFFFFFFFF, b=0, c=True), {"d": 0}),
    (D("set ne s32 f32"), dict(a=NAN32, b=NAN32), {"d": 0}),
    # half set (9.7.7): prose, not the pseudocode's stype/dtype typo
    (D("set eq f16 f16"), dict(a=0x3C00, b=0x3C00), {"d": 0x3C00}),
    (D("set eq bf16 bf16"), dict(a=0x3F80, b=0x3F80), {"d": 0x3F80}),
    (D("set ne bf16 bf16"), dict(a=0x3F80, b=0x3F80), {"d": 0}),
    (D("set lt u16 f16"), dict(a=0x3C00, b=0x4000), {"d": 0xFFFF}),
    (D("set lt s32 bf16"), dict(a=0x3F80, b=0x4000), {"d": 0xFFFFFFFF}),
    (D("set lt f16 s32"), dict(a=0xFFFFFFFF, b=0), {"d": 0x3C00}),
    (D("set hi bf16 u64"), dict(a=1 << 63, b=1), {"d": 0x3F80}),
    (D("set gtu u32 f16x2"), dict(a=0x3C007E00, b=0x40000000), {"d": 0x0000FFFF}),
    (D("set gt f16x2 f16x2"), dict(a=0x3C004000, b=0x40003C00), {"d": 0x00003C00}),
    (D("set lt bf16x2 bf16x2"), dict(a=0x3F804000, b=0x40003F80), {"d": 0x3F800000}),
    # selp: bit-exact
    (D("selp b64"), dict(a=0x7FF8DEADBEEF0001, b=5, c=True), {"d": 0x7FF8DEADBEEF0001}),
    (D("selp f32"), dict(a=NAN32, b=NEG0_32, c=False), {"d": NEG0_32}),
    # slct: c >= 0 picks a; -0.0 picks a; NaN picks b; -subnormal picks b unless flushed
    (D("slct u32 f32"), dict(a=1, b=2, c=NEG0_32), {"d": 1}),
    (D("slct u32 f32"), dict(a=1, b=2, c=NEG_SUB32), {"d": 2}),
    (D("slct u32 f32", ftz=True), dict(a=1, b=2, c=NEG_SUB32), {"d": 1}),
    (D("slct u32 f32", sm=13), dict(a=1, b=2, c=NEG_SUB32), {"d": 1}),
    (D("slct u32 f32"), dict(a=1, b=2, c=0xFFC00000), {"d": 2}),
    (D("slct u32 f32"), dict(a=1, b=2, c=NAN32), {"d": 2}),
    (D("slct u64 f32"), dict(a=1 << 63, b=2, c=0xFF800000), {"d": 2}),
    (D("slct u16 s32"), dict(a=7, b=9, c=0xFFFFFFFF), {"d": 9}),
    (D("slct u16 s32"), dict(a=7, b=9, c=0), {"d": 7}),
    # vset4: default asel b3210 (a's bytes), bsel b7654 (b's bytes); t=(0,1,1,0)
    (D("vset4 u32 u32 eq"), dict(a=0x04030201, b=0x01030205, c=0xAABBCCDD), {"d": 0x00010100}),
    (
        D("vset4 u32 u32 eq", mask="b20"),
        dict(a=0x04030201, b=0x01030205, c=0xAABBCCDD),
        {"d": 0xAA01CC00},
    ),
    (
        D("vset4 u32 u32 eq", mask="b20", vset_merge="b"),
        dict(a=0x04030201, b=0x01030205, c=0xAABBCCDD),
        {"d": 0x01010200},
    ),
    (D("vset4 u32 u32 eq", add=True), dict(a=0x04030201, b=0x01030205, c=10), {"d": 12}),
    (
        D("vset4 u32 u32 eq", add=True, mask="b20"),
        dict(a=0x04030201, b=0x01030205, c=10),
        {"d": 11},
    ),
    (D("vset4 s32 u32 lt"), dict(a=0xFF, b=0x01, c=0), {"d": 0x00000001}),
    (D("vset4 u32 u32 lt"), dict(a=0xFF, b=0x01, c=0), {"d": 0}),
    (
        D("vset4 u32 u32 gt", asel="b0123", bsel="b3210"),
        dict(a=0x04030201, b=0, c=0),
        {"d": 0x00000101},
    ),
    # vset2: halves; .hxy puts half y in lane 0
    (D("vset2 u32 u32 ne", add=True), dict(a=0x00010002, b=0x00010003, c=5), {"d": 6}),
    (D("vset2 u32 u32 ne", add=True), dict(a=0, b=0x00010001, c=0xFFFFFFFF), {"d": 1}),
    (D("vset2 s32 s32 lt"), dict(a=0x0000FFFF, b=0, c=0), {"d": 0x00000001}),
    (D("vset2 s32 s32 lt", mask="h1"), dict(a=0x0000FFFF, b=0, c=0x1234ABCD), {"d": 0x0000ABCD}),
    (D("vset2 s32 s32 lt", mask="h0"), dict(a=0x0000FFFF, b=0, c=0x1234ABCD), {"d": 0x12340001}),
    (D("vset2 u32 u32 eq", asel="h01"), dict(a=0x00050003, b=0x00030005, c=0), {"d": 0x00010001}),
    (D("vset2 u32 u32 eq"), dict(a=0x00050003, b=0x00030005, c=0), {"d": 0}),
    (D("vset2 s32 u32 lt"), dict(a=0xFFFF, b=0x0001, c=0), {"d": 1}),
    (D("vset2 u32 s32 lt"), dict(a=0x0001, b=0xFFFF, c=0), {"d": 0}),
    # glue: mov keeps every bit (NaN payloads too); logic ops on .pred are logical
    (D("mov pred"), dict(a=True), {"d": True}),
    (D("mov b64"), dict(a=0x7FF0DEADBEEF0001), {"d": 0x7FF0DEADBEEF0001}),
    (D("mov f16x2"), dict(a=0x7C01FE00), {"d": 0x7C01FE00}),
    (D("not pred"), dict(a=True), {"d": False}),
    (D("not b16"), dict(a=0x00FF), {"d": 0xFF00}),
    (D("not b64"), dict(a=0), {"d": (1 << 64) - 1}),
    (D("and b32"), dict(a=0xFF00FF00, b=0x0FF00FF0), {"d": 0x0F000F00}),
    (D("or b16"), dict(a=0xF000, b=0x000F), {"d": 0xF00F}),
    (D("xor b32"), dict(a=0xFFFF0000, b=0xFF00FF00), {"d": 0x00FFFF00}),
    (D("and pred"), dict(a=True, b=False), {"d": False}),
    (D("or pred"), dict(a=True, b=False), {"d": True}),
    (D("xor pred"), dict(a=True, b=True), {"d": False}),
    # cvt.f32.f16: rebias 15 -> 127; f16 subnormals become f32 normals; ±0, ±inf kept
    (D("cvt f32 f16"), dict(a=0x3C00), {"d": 0x3F800000}),  # 1.0
    (D("cvt f32 f16"), dict(a=0x7BFF), {"d": 0x477FE000}),  # 65504, the f16 maximum
    (D("cvt f32 f16"), dict(a=0x0400), {"d": 0x38800000}),  # 2^-14, the least normal
    (D("cvt f32 f16"), dict(a=0x8001), {"d": 0xB3800000}),  # -2^-24, the least subnormal
    (D("cvt f32 f16"), dict(a=0x03FF), {"d": 0x387FC000}),  # 1023 * 2^-24
    (D("cvt f32 f16"), dict(a=0x8000), {"d": 0x80000000}),
    (D("cvt f32 f16"), dict(a=0xFC00), {"d": 0xFF800000}),
    # cvt.f32.bf16: the same exponent range, so every non-NaN is a 16-bit shift
    (D("cvt f32 bf16"), dict(a=0x0001), {"d": 0x00010000}),  # subnormal stays subnormal
    (D("cvt f32 bf16"), dict(a=0x8001), {"d": 0x80010000}),
    (D("cvt f32 bf16"), dict(a=0xFF80), {"d": 0xFF800000}),
    (D("cvt f32 bf16"), dict(a=0x3F80), {"d": 0x3F800000}),
    # cvt.f64.f32: rebias 127 -> 1023, 29 more fraction bits; sm_1x flushes a subnormal input
    (D("cvt f64 f32"), dict(a=0x3F800000), {"d": 0x3FF0000000000000}),
    (D("cvt f64 f32"), dict(a=0x00000001), {"d": 0x36A0000000000000}),  # 2^-149
    (D("cvt f64 f32"), dict(a=0x80000001), {"d": 0xB6A0000000000000}),
    (D("cvt f64 f32"), dict(a=0x007FFFFF), {"d": 0x380FFFFFC0000000}),
    (D("cvt f64 f32", sm=13), dict(a=0x80000001), {"d": 0x8000000000000000}),
    (D("cvt f64 f32", sm=13), dict(a=0x00800000), {"d": 0x3810000000000000}),  # normal: kept
    (D("cvt f64 f32"), dict(a=0x80000000), {"d": 0x8000000000000000}),
    (D("cvt f64 f32"), dict(a=0x7F800000), {"d": 0x7FF0000000000000}),
]


@pytest.mark.parametrize(("desc", "inputs", "expected"), CASES)
def test_hand_computed(desc, inputs, expected):
    assert evaluate(desc, inputs) == expected


@pytest.mark.parametrize(
    ("desc", "inputs"),
    [
        (D("setp lt f16"), dict(a=0x10000, b=0)),
        (D("selp b16"), dict(a=-1, b=0, c=True)),
        (D("setp lt f32", boolop="and"), dict(a=0, b=0, c=1)),
        (D("setp lo f32"), dict(a=0, b=0)),
        (D("setp ltu s32"), dict(a=0, b=0)),
        (D("vset2 u32 u32 lt", asel="h4"), dict(a=0, b=0, c=0)),
        (D("vset4 u32 u32 lt", mask="b4"), dict(a=0, b=0, c=0)),
    ],
)
def test_rejects_bad_input(desc, inputs):
    with pytest.raises(ValueError):
        evaluate(desc, inputs)


@pytest.mark.parametrize(("desc", "a"), [
    (D("cvt f32 f16"), 0x7E00),  # quiet
    (D("cvt f32 f16"), 0xFC01),  # signalling, negative
    (D("cvt f32 bf16"), 0x7F81),  # ptxas: folds to 0x7fffffff, shifts at run time
    (D("cvt f32 bf16"), 0xFFC0),
    (D("cvt f64 f32"), 0x7F800001),
    (D("cvt f64 f32", sm=13), 0xFFC00000),
])
def test_cvt_of_a_nan_is_unspecified(desc, a):
    with pytest.raises(Unspecified, match="leaves open"):
        evaluate(desc, {"a": a})


@pytest.mark.parametrize(("desc", "inputs"), [
    (D("cvt f16 f32"), dict(a=0)),  # narrowing rounds: not glue
    (D("cvt f16 bf16"), dict(a=0)),  # bf16's exponent does not fit f16: it rounds
    (D("and f32"), dict(a=0, b=0)),
    (D("not f16x2"), dict(a=0)),
    (D("xor pred"), dict(a=1, b=True)),
    (D("mov b16"), dict(a=0x10000)),
])
def test_glue_rejects_bad_input(desc, inputs):
    with pytest.raises(ValueError):
        evaluate(desc, inputs)


@pytest.mark.parametrize(("stype", "np_type"), [("f16", np.float16), ("bf16", ml_dtypes.bfloat16)])
def test_convert_exhaustive_16bit(stype, np_type):
    """The oracle's cvt (decode, then struct) against numpy/ml_dtypes on every input."""
    bits = np.arange(1 << 16, dtype=np.uint16)
    with np.errstate(invalid="ignore"):
        ref = bits.view(np_type).astype(np.float32).view(np.uint32)
    for x, want in zip(bits.tolist(), ref.tolist(), strict=True):
        if is_nan(x, stype):
            with pytest.raises(Unspecified):
                convert(x, "f32", stype)
        else:
            assert convert(x, "f32", stype) == want, hex(x)


def test_convert_sampled_f32():
    rng = np.random.default_rng(2)
    special = [s << 31 | e << 23 | f for s in (0, 1) for e in (0, 1, 254, 255)
               for f in (0, 1, 1 << 22, (1 << 23) - 1)]
    randoms = rng.integers(0, 1 << 32, 20000, np.uint32)
    bits = np.concatenate([np.array(special, np.uint32), randoms])
    with np.errstate(invalid="ignore"):  # NaN casts warn on some numpy builds
        ref = bits.view(np.float32).astype(np.float64).view(np.uint64)
    for x, want in zip(bits.tolist(), ref.tolist(), strict=True):
        if not is_nan(x, "f32"):
            assert convert(x, "f64", "f32") == want, hex(x)


@pytest.mark.parametrize(("fmt", "np_type"), [("f16", np.float16), ("bf16", ml_dtypes.bfloat16)])
def test_decoder_exhaustive_16bit(fmt, np_type):
    bits = np.arange(1 << 16, dtype=np.uint32)
    with np.errstate(invalid="ignore"):  # NaN casts warn on some numpy builds
        ref = bits.astype(np.uint16).view(np_type).astype(np.float64)
    ours = np.array([decode_float(int(x), fmt) for x in bits])
    nan = np.isnan(ref)
    assert np.array_equal(nan, [is_nan(int(x), fmt) for x in bits])
    assert np.isnan(ours[nan]).all()
    assert np.array_equal(ours[~nan], ref[~nan])
    assert np.array_equal(np.signbit(ours[~nan]), np.signbit(ref[~nan]))
    sub = (ref != 0) & (np.abs(ref) < float(ml_dtypes.finfo(np_type).smallest_normal))
    assert np.array_equal(sub, [is_subnormal(int(x), fmt) for x in bits])
    flushed = np.array([decode_float(flush(int(x), fmt), fmt) for x in bits[sub]])
    assert (flushed == 0).all() and np.array_equal(np.signbit(flushed), np.signbit(ref[sub]))


@pytest.mark.parametrize(
    ("fmt", "uint", "np_type"), [("f32", np.uint32, np.float32), ("f64", np.uint64, np.float64)]
)
def test_decoder_sampled_wide(fmt, uint, np_type):
    w = np.dtype(uint).itemsize * 8
    e, m = (8, 23) if w == 32 else (11, 52)
    rng = np.random.default_rng(0)
    special = [
        s << (w - 1) | x << m | f
        for s in (0, 1)
        for x in (0, 1, (1 << e) - 1)
        for f in (0, 1, 1 << (m - 1), (1 << m) - 1)
    ]
    bits = np.concatenate(
        [np.array(special, dtype=uint), rng.integers(0, 1 << w, 20000, uint, endpoint=False)]
    )
    with np.errstate(invalid="ignore"):
        ref = bits.view(np_type).astype(np.float64)
    ours = np.array([decode_float(int(x), fmt) for x in bits])
    nan = np.isnan(ref)
    assert np.array_equal(nan, [is_nan(int(x), fmt) for x in bits])
    assert np.array_equal(ours[~nan], ref[~nan])
    assert np.array_equal(np.signbit(ours[~nan]), np.signbit(ref[~nan]))


def test_float_compare_matches_numpy_f16():
    """Every CmpOp on f16 pairs (specials x specials plus random) against numpy's IEEE compares."""
    hexes = "0000 8000 0001 8001 03ff 0400 3c00 bc00 7bff 7c00 fc00 7e00 fe01 7c01"
    specials = [int(h, 16) for h in hexes.split()]
    rng = np.random.default_rng(1)
    a = np.concatenate([np.repeat(specials, len(specials)), rng.integers(0, 1 << 16, 3000)])
    b = np.concatenate([np.tile(specials, len(specials)), rng.integers(0, 1 << 16, 3000)])
    fa, fb = a.astype(np.uint16).view(np.float16), b.astype(np.uint16).view(np.float16)
    nan = np.isnan(fa) | np.isnan(fb)
    ops = {
        "eq": np.equal,
        "ne": np.not_equal,
        "lt": np.less,
        "le": np.less_equal,
        "gt": np.greater,
        "ge": np.greater_equal,
    }
    for cmp, fn in ops.items():
        for name, want in ((cmp, fn(fa, fb) & ~nan), (cmp + "u", fn(fa, fb) | nan)):
            got = [
                evaluate(D("setp " + name + " f16"), dict(a=int(x), b=int(y)))["p"]
                for x, y in zip(a, b, strict=True)
            ]
            assert np.array_equal(got, want), name
