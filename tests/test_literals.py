"""Literal parsing and formatting against numpy, ml_dtypes and struct."""

from __future__ import annotations

import math
import struct

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle import decode_float

from ptxsmt.isa.literals import (
    MAX_LITERAL,
    LiteralError,
    describe,
    fp_class,
    hex_bits,
    parse_immediate,
    parse_value,
    ptx_literal,
)
from ptxsmt.isa.types import ptx_type

F16, BF16, F32, F64 = (ptx_type(n) for n in ("f16", "bf16", "f32", "f64"))


def np_bits(value: float, dtype) -> int:
    arr = np.array([value], dtype=np.float64).astype(dtype)
    return int(arr.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.itemsize])[0])


@given(st.floats(allow_nan=False, width=64))
def test_decimal_rounds_like_numpy(x):
    text = repr(x)
    assert parse_value(text, F64) == struct.unpack("<Q", struct.pack("<d", x))[0]
    assert parse_value(text, F32) == np_bits(x, np.float32)
    assert parse_value(text, F16) == np_bits(x, np.float16)


@given(st.floats(allow_nan=False, width=32))
def test_bf16_rounds_like_ml_dtypes(x):
    # exact f32 values: ml_dtypes rounds from f32, the same single rounding as ours
    assert parse_value(repr(x), BF16) == np_bits(np.float32(x), ml_dtypes.bfloat16)


@pytest.mark.parametrize("text,t,bits", [
    ("0f3F800000", F32, 0x3F800000), ("0F7FC00000", F32, 0x7FC00000),
    ("0d3FF0000000000000", F64, 0x3FF0000000000000), ("0x7e00", F16, 0x7E00),
    ("-0.0", F16, 0x8000), ("-0.0", BF16, 0x8000), ("nan", F32, 0x7FC00000),
    ("-nan", F16, 0xFE00), ("nan", BF16, 0x7FC0), ("inf", F64, 0x7FF0000000000000),
    ("-inf", F32, 0xFF800000), ("-3", ptx_type("s16"), 0xFFFD), ("-1", ptx_type("u32"), 0xFFFFFFFF),
    ("017", ptx_type("u32"), 15), ("0b101", ptx_type("b16"), 5), ("42U", ptx_type("u64"), 42),
    ("-3", F32, 0xC0400000), ("1e-45", F32, 1), ("65520", F16, 0x7C00), ("0x0", F16, 0),
    ("true", ptx_type("pred"), True), ("0", ptx_type("pred"), False),
])
def test_literal_forms(text, t, bits):
    assert parse_value(text, t) == bits


@pytest.mark.parametrize("text,t", [
    ("0x10000", ptx_type("u16")), ("0f3F800000", F16), ("0d3FF0000000000000", F32),
    ("0f3F80", F32), ("1.5", ptx_type("s32")), ("65536", ptx_type("s16")),
    ("-32769", ptx_type("s16")), ("abc", F32), ("1.0", ptx_type("f16x2")),
    ("maybe", ptx_type("pred")), ("0x1ffffffff", F32),
])
def test_bad_literals(text, t):
    with pytest.raises(LiteralError):
        parse_value(text, t)


@given(st.integers(0, 0xFFFF))
def test_f16_class_and_description_match_numpy(b):
    x = np.array([b], dtype=np.uint16).view(np.float16)[0]
    cls = fp_class(b, F16.fmt)
    assert cls.endswith("NaN") == bool(np.isnan(x))
    assert cls.endswith("inf") == bool(np.isinf(x))
    assert (cls in ("+0", "-0")) == (x == 0)
    if not np.isnan(x):
        shown = describe(b, F16).split("(")[1].rstrip(")")
        if cls.endswith("subnormal"):  # class, then magnitude to 3 digits
            sign, magnitude = shown.split()[0][0], float(shown.split()[1])
            assert magnitude == pytest.approx(abs(float(x)), rel=1e-2)
            assert (sign == "-") == bool(np.signbit(x))
        else:
            assert float(shown) == float(x)
            assert math.copysign(1, float(shown)) == math.copysign(1, x)


@given(st.integers(0, 0xFFFFFFFF))
def test_f32_roundtrip_through_ptx_literal(b):
    assert parse_value(ptx_literal(b, F32), F32) == b
    assert parse_value(hex_bits(b, 32), F32) == b
    value = decode_float(b, "f32")
    if not math.isnan(value):
        assert parse_value(repr(value), F32) == b or value == 0  # -0.0 repr keeps sign


LONG = "9" * 5000


@pytest.mark.parametrize("text", [LONG, "-" + LONG, "0x" + LONG, "0b" + "1" * 5000,
                                  "0" + "7" * 5000, LONG + ".5", "1e" + LONG, "0f" + "F" * 5000])
@pytest.mark.parametrize("name", ["u32", "s64", "f32", "f16", "b64", "pred"])
def test_thousands_of_digits_are_a_short_clear_error(text, name):
    for parse in (parse_value, parse_immediate):
        with pytest.raises(LiteralError) as err:
            parse(text, ptx_type(name))
        assert len(str(err.value)) < 200 and '…"' in str(err.value)


def test_the_length_cap_is_generous():
    assert parse_value("0x" + "0" * (MAX_LITERAL - 3) + "1", ptx_type("u32")) == 1
    assert parse_value("0." + "0" * (MAX_LITERAL - 3) + "1", F64) == 0
    with pytest.raises(LiteralError, match="characters long"):
        parse_value("0x" + "0" * (MAX_LITERAL - 2) + "1", ptx_type("u32"))


@pytest.mark.parametrize("text,t,bits", [
    ("1" * 400, F32, 0x7F800000), ("-" + "1" * 400, F64, 0xFFF0000000000000),  # inf, no crash
    ("-0", F32, 0x80000000), ("-0", F16, 0x8000), ("0", BF16, 0),
])
def test_decimal_integers_for_floats_are_read_as_text(text, t, bits):
    assert parse_value(text, t) == bits


@pytest.mark.parametrize("text", ["09", "-08", "0019", "09U"])
def test_a_leading_zero_is_octal(text):
    with pytest.raises(LiteralError, match="octal"):
        parse_value(text, ptx_type("u32"))
