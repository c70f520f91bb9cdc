"""One NaN policy in every mode (docs/spec-notes.md note 14, docs/equiv.md; issue 40
items 1 and 7): `--nan payload-free` (the default) takes any NaN as equal to any NaN at a
float-typed output, `--nan exact` compares bits, and a difference only in the NaNs the
ISA leaves open is never `different` by default. Values are checked with plain Python
(struct) and numpy, not with the Z3 terms."""

from __future__ import annotations

import json
import math
import random
import re
import shlex
import struct
from pathlib import Path

import numpy as np
import pytest
import z3
from click.testing import CliRunner

from ptxsmt.batch import cache
from ptxsmt.cli import main
from ptxsmt.function.evaluate import read_function_file
from ptxsmt.isa.types import F16, F32, F64
from ptxsmt.sem.observe import differ, values_differ
from ptxsmt.smt.queries.functions import check_function_equivalence
from ptxsmt.smt.queries.snippets import build_query, decide

NAN = Path(__file__).parent / "ptx" / "nan"

# the snippets, each a difference only in an open NaN: (lhs, rhs, outputs)
TWICE = ("mul.rn.f32 d, a, 2.0;", "add.rn.f32 d, a, a;", None)
NEG_NEG = ("neg.f32 t, a; neg.f32 d, t;", "mov.f32 d, a;", ["d"])
TWICE_F64 = ("mul.rn.f64 d, a, 0d4000000000000000;", "add.rn.f64 d, a, a;", None)
# the same doubling observed as bits (and.b32): no float-typed output
TWICE_BITS = ("mul.rn.f32 t, a, 2.0; mov.b32 d, t; and.b32 d, d, -1;",
              "add.rn.f32 t, a, a; mov.b32 d, t; and.b32 d, d, -1;", ["d"])
# Triton's maximum(x, y, propagate_nan=ALL) against where(x > y | x != x, x, y)
MAXIMUM = ("max.NaN.f32 d, x, y;",
           "setp.gt.f32 p, x, y; setp.nan.f32 q, x, x; or.pred p, p, q; selp.f32 d, x, y, p;",
           ["d"])


def f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def snippet(case, nan: str, timeout: float = 10.0):
    lhs, rhs, outs = case
    return decide(build_query(lhs, rhs, outs, nan=nan), timeout)


@pytest.mark.parametrize("case", [TWICE, NEG_NEG, TWICE_F64], ids=["mul-add", "neg-neg", "f64"])
def test_a_difference_only_in_open_nans_is_equivalent_up_to_nan_payloads(case):
    v = snippet(case, "payload-free")
    assert (v.verdict, v.up_to_nan_payloads, v.nan) == ("equivalent", True, "payload-free")


@pytest.mark.parametrize("case", [TWICE, NEG_NEG], ids=["mul-add", "neg-neg"])
def test_exact_reports_it_different_naming_the_outputs(case):
    v = snippet(case, "exact", timeout=2.0)  # the re-asks may run out: same verdict
    cex = v.counterexample
    assert (v.verdict, cex.nan_payloads_only, cex.differ) == ("different", True, ("d",))
    assert math.isnan(f32(cex.inputs["a"]))  # only a NaN input makes an open NaN


# one side observes the bits: a float on the other is not enough
MIXED = [("mul.rn.f32 d, a, 2.0;", "add.rn.f32 t, a, a; and.b32 d, t, -1;", ["d"]),
         ("mul.rn.f32 d, a, 2.0; and.b32 d, d, -1;", "add.rn.f32 d, a, a;", ["d"]),
         ("mul.rn.f32 d, a, 2.0;", ".reg .b32 d; add.rn.f32 d, a, a;", ["d"])]


@pytest.mark.parametrize("case", [TWICE_BITS, *MIXED],
                         ids=["both-bits", "other-side-bits", "written-as-bits", "declared-bits"])
def test_bits_observed_as_bits_are_never_compared_payload_free(case):
    v = snippet(case, "payload-free", timeout=2.0)
    assert v.verdict == "unknown" and "observed as bits" in v.reason  # never equivalent


def test_bits_observed_as_bits_differ_under_exact():
    v = snippet(TWICE_BITS, "exact", timeout=2.0)
    assert (v.verdict, v.counterexample.nan_payloads_only) == ("different", True)


def test_the_policy_changes_nothing_where_no_nan_is_open():
    # add names no order of its operands: the same open NaN, bit for bit
    v = snippet(("add.f32 d, a, b;", "add.f32 d, b, a;", None), "payload-free")
    assert (v.verdict, v.up_to_nan_payloads) == ("equivalent", False)


@pytest.mark.parametrize("nan", ["payload-free", "exact"])
def test_a_definite_difference_past_an_open_nan_is_found(nan):
    """+0.0 against -0.0 differs through no open value; a NaN input only through the
    canonical NaN. Every run gives the zeros."""
    v = snippet(MAXIMUM, nan)
    cex = v.counterexample
    assert (v.verdict, cex.nan_payloads_only) == ("different", False)
    x, y = f32(cex.inputs["x"]), f32(cex.inputs["y"])
    assert x == y == 0.0 and math.copysign(1, x) != math.copysign(1, y)
    assert cex.lhs["d"] == struct.unpack("<I", struct.pack("<f", max(x, y, key=lambda z:
                                                            math.copysign(1, z))))[0]
    assert cex.rhs["d"] == cex.inputs["y"]  # where(x > y | x != x, x, y): y


# the doubling as bits, and 0 where a is 1.0 on one side: a definite difference behind
# the open NaNs of every NaN input
PLANTED = ("mul.rn.f32 t, a, 2.0; mov.b32 d, t;",
           "add.rn.f32 t, a, a; mov.b32 d, t; setp.eq.b32 p, a, 0x3f800000; @p mov.b32 d, 0;",
           ["d"])


@pytest.mark.parametrize("nan", ["payload-free", "exact"])
def test_a_definite_difference_at_a_bit_typed_output_is_found_past_open_nans(nan):
    v = snippet(PLANTED, nan, timeout=5.0)
    cex = v.counterexample
    assert (v.verdict, cex.nan_payloads_only) == ("different", False)
    assert f32(cex.inputs["a"]) == 1.0 and (cex.lhs["d"], cex.rhs["d"]) == (
        struct.unpack("<I", struct.pack("<f", 2.0))[0], 0)


# ---- two .ptx functions -------------------------------------------------------------------

def functions(name: str, nan: str, timeout: float = 4.0):
    """Verdicts that hold whether or not the re-asks finish within `timeout`."""
    return check_function_equivalence(read_function_file(str(NAN / "arith_a.ptx"), name),
                                      read_function_file(str(NAN / "arith_b.ptx"), name),
                                      timeout=timeout, nan=nan)


def test_functions_follow_the_same_policy():
    v = functions("twice", "payload-free")
    assert (v.verdict, v.up_to_nan_payloads) == ("equivalent", True)
    v = functions("twice", "exact")
    assert (v.verdict, v.counterexample.nan_payloads_only) == ("different", True)
    assert v.counterexample.differ == ("r",)
    assert math.isnan(f32(v.counterexample.inputs["a"]))


def test_a_function_return_viewed_as_bits_is_compared_as_bits():
    assert functions("twice_bits", "payload-free", timeout=2).verdict == "unknown"
    v = functions("twice_bits", "exact", timeout=2)
    assert (v.verdict, v.counterexample.nan_payloads_only) == ("different", True)


def test_a_float_stored_as_b32_on_one_side_is_still_that_float():
    """st.param.f32 on one side, st.param.b32 of the same float instruction's result on
    the other (LLVM 22's spelling): a float-typed return (spec-notes.md, note 14)."""
    v = functions("twice_mixed", "payload-free", timeout=2)
    assert (v.verdict, v.up_to_nan_payloads) == ("equivalent", True)
    v = functions("twice_mixed", "exact", timeout=2)
    assert (v.verdict, v.counterexample.nan_payloads_only) == ("different", True)


_DOUBLED = """.version 7.8
.target sm_80
.address_size 64
.visible .func (.param .b32 func_retval0) f(.param .b32 f_param_0)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [f_param_0];
	DOUBLE;
	st.param.b32 [func_retval0], %r2;
	ret;
}
"""
_TIMES_TWO, _PLUS_ITSELF = "mul.rn.f32 %r2, %r1, 0f40000000", "add.rn.f32 %r2, %r1, %r1"
_AS_BITS = "; and.b32 %r2, %r2, -1"  # a view of the bits as bits


def _doubled(tmp_path, a: str, b: str, *options: str,
             template: str = _DOUBLED) -> tuple[int, dict]:
    files = [tmp_path / "a.ptx", tmp_path / "b.ptx"]
    for f, body in zip(files, (a, b), strict=True):
        f.write_text(template.replace("DOUBLE", body))
    r = CliRunner().invoke(main, ["equiv", *map(str, files), "--function", "f", "--json",
                                  "--no-cache", *options])
    return r.exit_code, json.loads(r.stdout)


def test_a_float_return_stored_as_b32_is_compared_as_its_float(tmp_path):
    """LLVM 22 stores a float return with st.param.b32: where both functions store the
    bits a float instruction wrote, the return is a float (payload-free by default), as
    st.param.f32 is; a side that views the bits as bits (and.b32) makes them bits."""
    code, out = _doubled(tmp_path, _TIMES_TWO, _PLUS_ITSELF)
    assert (code, out["verdict"], out["up_to_nan_payloads"]) == (0, "equivalent", True)
    code, out = _doubled(tmp_path, _TIMES_TWO, _PLUS_ITSELF, "--nan", "exact")
    assert (code, out["verdict"]) == (1, "different")
    code, out = _doubled(tmp_path, _TIMES_TWO + _AS_BITS, _PLUS_ITSELF)
    assert code == 3 and "observed as bits" in out["reason"]


def test_a_function_differing_in_open_nan_bits_says_whether_that_is_all(tmp_path, monkeypatch):
    """x*2 and x+x returned as bits (and.b32) differ only in their open NaNs' bits: said
    so ("nowhere else") where the re-ask ruled every other difference out, and not said
    so where it ran out of time (a faked unknown): then other differences stay possible."""
    from ptxsmt.smt.queries import functions
    from ptxsmt.smt.solving.decide import Decision

    pair = (_TIMES_TWO + _AS_BITS, _PLUS_ITSELF + _AS_BITS)
    code, out = _doubled(tmp_path, *pair)
    assert code == 3 and "observed as bits" in out["reason"] and "nowhere else" in out["reason"]
    monkeypatch.setattr(functions, "_ask_again",
                        lambda *_a, **_k: Decision(z3.unknown, reason="timeout"))
    code, out = _doubled(tmp_path, *pair)
    assert code == 3 and "nowhere else" not in out["reason"]
    assert "not ruled out" in out["reason"]


# llc-14's f16 return: the half's bits stored with st.param.b16 into a .b32 parameter,
# whose upper two bytes neither function writes
_HALF_DOUBLED = """.version 7.0
.target sm_80
.address_size 64
.visible .func (.param .b32 func_retval0) f(.param .b32 f_param_0)
{
	.reg .b16 %h<4>;
	.reg .b32 %r<2>;
	ld.param.b16 %h1, [f_param_0];
	DOUBLE;
	st.param.b16 [func_retval0+0], %h2;
	ret;
}
"""
_HALF_TIMES_TWO = "mov.b16 %h3, 0x4000; mul.rn.f16 %h2, %h1, %h3"
_HALF_PLUS_ITSELF = "add.rn.f16 %h2, %h1, %h1"


def _half_doubled(tmp_path, a: str, b: str, *options: str,
                  template: str = _HALF_DOUBLED) -> tuple[int, dict]:
    return _doubled(tmp_path, a, b, *options, template=template)


def test_half_doubling_differs_in_nan_payloads_only():
    """The independent fact the next test rests on: x * 2 and x + x are the same f16
    for every x, a NaN for a NaN (numpy, all 65,536 halves)."""
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        a, b = x * np.float16(2), x + x
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.array_equal(a[~np.isnan(a)].view(np.uint16), b[~np.isnan(b)].view(np.uint16))


def test_an_f16_return_under_unwritten_bytes_is_compared_as_its_float(tmp_path):
    """llc-14 returns an f16 with st.param.b16 into a .b32 parameter: the low lane is the
    bits a float instruction wrote, the upper bytes are the same unwritten bytes on both
    sides, so the return is an f16 (payload-free by default), as LLVM 22's .b16 is."""
    code, out = _half_doubled(tmp_path, _HALF_TIMES_TWO, _HALF_PLUS_ITSELF)
    assert (code, out["verdict"], out["up_to_nan_payloads"]) == (0, "equivalent", True)
    code, out = _half_doubled(tmp_path, _HALF_TIMES_TWO, _HALF_PLUS_ITSELF, "--nan", "exact")
    assert (code, out["verdict"]) == (1, "different")
    # a side that views the bits as bits (and.b16): bits
    code, out = _half_doubled(tmp_path, _HALF_TIMES_TWO + "; and.b16 %h2, %h2, -1",
                              _HALF_PLUS_ITSELF)
    assert code == 3 and "observed as bits" in out["reason"]
    # bytes above the half that the functions write, a NaN's bits as data (0x7e00
    # against 0x7e01): no float wrote them, so the return is bits, and they differ
    for upper, side in (("0x7E00", "a"), ("0x7E01", "b")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "f.ptx").write_text(_HALF_DOUBLED.replace(
            "DOUBLE", _HALF_PLUS_ITSELF).replace(
            "st.param.b16 [func_retval0+0], %h2",
            f"mov.b16 %h3, {upper}; mov.b32 %r1, {{%h2, %h3}}; "
            "st.param.b32 [func_retval0+0], %r1"))
    r = CliRunner().invoke(main, ["equiv", str(tmp_path / "a" / "f.ptx"),
                                  str(tmp_path / "b" / "f.ptx"), "--function", "f",
                                  "--json", "--no-cache"])
    out = json.loads(r.stdout)
    assert (r.exit_code, out["verdict"]) == (1, "different")
    assert out["counterexample"]


@pytest.mark.parametrize("nan", ["payload-free", "exact"])
def test_functions_find_the_zeros_of_maximum(nan):
    v = functions("maximum", nan)
    assert v.verdict == "different" and not v.counterexample.nan_payloads_only
    ins = v.counterexample.inputs
    assert (ins["x"], ins["y"]) == (0, 0x80000000)  # max(+0, -0) = +0, where gives y
    assert v.counterexample.lhs.returns["r"] == 0
    assert v.counterexample.rhs.returns["r"] == 0x80000000


def test_a_half_in_a_b32_slot_differs_on_the_bytes_written():
    v = functions("half_neg", "payload-free")
    assert v.verdict == "different"
    cex = v.counterexample
    a = cex.inputs["a"] & 0xFFFF
    half = np.array([a], dtype=np.uint16).view(np.float16)
    want = {"lhs": (-half).view(np.uint16)[0], "rhs": np.abs(half).view(np.uint16)[0]}
    for side, ev in (("lhs", cex.lhs), ("rhs", cex.rhs)):
        bits, mask = ev.settled["func_retval0"]
        assert mask == 0xFFFF and bits == int(want[side])  # the high bytes: never written


# ---- a difference through open NaNs' bits, for every choice of them ------------------------

FLIP = 1 << 23  # an exponent bit: flipped, a NaN is no NaN
PAIR_OPEN = {"nan_flip": ["mul.rn.f32 NaN"], "nan_sites": ["fma.rn.f32 NaN", "mul.rn.f32 NaN"]}


def _replayed_as_plain_python(cex) -> None:
    """The counterexample sits where a * b is a NaN; each open NaN it names is a NaN, on
    the operands a and b (unordered: mul and fma name no order of them; fma's c is -0.0);
    and each side returns what plain bit arithmetic gives under that choice."""
    a, b = cex.inputs["a"], cex.inputs["b"]
    assert math.isnan(f32(a) * f32(b))  # exact in a double: NaN where the f32 product is
    chosen = {c.name: c for c in cex.chosen}
    operands = min(a, b) << 32 | max(a, b)
    assert chosen["mul.rn.f32 NaN"].argument == operands
    assert all(_is_nan(c.value, c.width) for c in cex.chosen)
    product = chosen["mul.rn.f32 NaN"].value
    if "fma.rn.f32 NaN" in chosen:  # nan_sites: a flipped product against fma's NaN
        assert chosen["fma.rn.f32 NaN"].argument == operands << 32 | 0x80000000
        want = (product ^ FLIP, chosen["fma.rn.f32 NaN"].value)
    else:  # nan_flip: the product against it flipped
        want = (product, product ^ FLIP)
    assert (cex.lhs.returns["r"], cex.rhs.returns["r"]) == want and want[0] != want[1]


@pytest.mark.parametrize("name", PAIR_OPEN)
def test_a_difference_in_open_nan_bits_for_every_choice_replays_under_one(name):
    """Both sides return an open NaN's bits as .b32, one flipped: the evaluator leaves both
    unspecified, yet whichever NaNs are chosen they differ. The counterexample is replayed
    under one choice, which it names: each NaN as an H200 makes an f32 NaN (once: exit 4,
    "does not replay")."""
    v = functions(name, "payload-free")
    assert v.verdict == "different" and v.counterexample.differ == ("r",)
    assert sorted(c.name for c in v.counterexample.chosen) == PAIR_OPEN[name]
    assert {c.value for c in v.counterexample.chosen} == {0x7FFFFFFF}  # silicon's f32 NaN
    _replayed_as_plain_python(v.counterexample)


def test_an_open_nan_that_is_another_open_nans_operand_is_taken_first():
    """(a * b) + a: where the product is a NaN, the add's NaN is open on the product's
    bits, known only once the product's NaN is taken."""
    v = functions("nan_nested", "payload-free")
    cex = v.counterexample
    a, b = cex.inputs["a"], cex.inputs["b"]
    product = 0x7FFFFFFF
    assert v.verdict == "different" and math.isnan(f32(a) * f32(b))
    assert [(c.name, c.argument, c.value) for c in cex.chosen] == [
        ("mul.rn.f32 NaN", min(a, b) << 32 | max(a, b), product),
        ("add.rn.f32 NaN", min(a, product) << 32 | max(a, product), 0x7FFFFFFF)]
    assert (cex.lhs.returns["r"], cex.rhs.returns["r"]) == (0x7FFFFFFF, 0x7FFFFFFF ^ FLIP)


@pytest.mark.parametrize("name", PAIR_OPEN)
def test_where_the_h200_choice_does_not_replay_the_models_own_does(name, monkeypatch):
    """Faked: the first choice leaves every open value open (so it cannot replay); the
    model's own values, on which the query differs, still give a replayed difference."""
    from ptxsmt.smt.queries import functions as checker
    real = checker._chosen_by
    monkeypatch.setattr(checker, "_chosen_by",
                        lambda model, made: (lambda app: None) if made else real(model, made))
    v = functions(name, "payload-free")
    assert v.verdict == "different"
    assert sorted(c.name for c in v.counterexample.chosen) == PAIR_OPEN[name]
    _replayed_as_plain_python(v.counterexample)


def test_an_open_choice_is_named_in_text_json_and_reproduce_lines(tmp_path, monkeypatch):
    """The text and JSON name each open value taken; each side's reproduce line gives it
    to `ptxsmt eval` (`open[NAME of ARGUMENT]=VALUE`) and runs to the outputs shown; a
    batch's cache keeps the choice, and a cached "different" replays under it."""
    files = [str(NAN / "arith_a.ptx"), str(NAN / "arith_b.ptx")]
    r = cli("equiv", *files, "--function", "nan_sites", "--no-cache")
    assert r.returncode == 1 and "values the PTX ISA leaves open, as taken here" in r.stdout
    assert re.search(r"\n    open\[mul\.rn\.f32 NaN of 0x[0-9a-f]{16}\] = 0x[0-9a-f]{8}\n",
                     r.stdout)
    lines = r.stdout.split("reproduce:\n")[1].splitlines()
    r = cli("equiv", *files, "--function", "nan_sites", "--no-cache", "--json")
    cex = json.loads(r.stdout)["counterexample"]
    assert r.returncode == 1 and sorted(t["open"] for t in cex["open_values"]) == \
        PAIR_OPEN["nan_sites"]
    assert all(_is_nan(int(t["taken_as"], 16), 32) for t in cex["open_values"])
    for line, side in zip(lines, ("lhs", "rhs"), strict=True):
        words = shlex.split(line)
        assert words[:2] == ["ptxsmt", "eval"] and any(w.startswith("open[") for w in words)
        r = cli(*words[1:], "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["outputs"] == cex[side]
    # a batch's cache keeps the choice, and a cached "different" replays under it
    monkeypatch.setenv("PTXSMT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_ENABLED", True)  # --no-cache turned it off in this process
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"a": files[0], "b": files[1], "function": "nan_sites"}) + "\n")
    first, again = (cli("equiv", "--batch", str(pairs)) for _ in range(2))
    rows = [json.loads(x.stdout) for x in (first, again)]
    assert [x.get("cached") for x in rows] == [None, True] and again.stderr == ""
    assert rows[0]["counterexample"] == rows[1]["counterexample"]
    assert rows[1]["counterexample"]["open_values"]


# nan_sites as snippets: d is a * b's bits, bit 23 flipped where it is a NaN, against
# fma.rn(a, b, -0.0)'s bits (t, the float itself, agrees payload-free)
NAN_SITES = ("mul.rn.f32 t, a, b; setp.nan.f32 p, t, t; xor.b32 u, t, 0x00800000; "
             "selp.b32 d, u, t, p;",
             "fma.rn.f32 t, a, b, 0f80000000; mov.b32 d, t; and.b32 d, d, -1;", None)


def test_snippets_differing_in_open_nan_bits_for_every_choice_replay_under_one(tmp_path,
                                                                               monkeypatch):
    """As for functions: each side's open NaN as an H200 makes an f32 NaN, named in the
    text, JSON and reproduce lines (which run to the outputs shown), and kept by a
    batch's cache (once: exit 4, "does not replay")."""
    v = snippet(NAN_SITES, "payload-free")
    cex = v.counterexample
    assert v.verdict == "different" and cex.differ == ("d",)
    a, b = cex.inputs["a"], cex.inputs["b"]
    assert math.isnan(f32(a) * f32(b))
    (product,), (fused,) = cex.chosen
    operands = min(a, b) << 32 | max(a, b)  # mul and fma name no order of a and b
    assert (product.name, product.argument) == ("mul.rn.f32 NaN", operands)
    assert (fused.name, fused.argument) == ("fma.rn.f32 NaN", operands << 32 | 0x80000000)
    assert product.value == fused.value == 0x7FFFFFFF
    assert (cex.lhs["d"], cex.rhs["d"]) == (0x7FFFFFFF ^ FLIP, 0x7FFFFFFF)
    r = cli("equiv", *NAN_SITES[:2])
    assert r.returncode == 1 and "\n    open[mul.rn.f32 NaN of 0x" in r.stdout
    shown = json.loads(cli("equiv", *NAN_SITES[:2], "--json").stdout)["counterexample"]
    assert [t["taken_as"] for t in shown["open_values"]] == ["0x7fffffff"] * 2
    for line, side in zip(r.stdout.split("reproduce:\n")[1].splitlines(), ("lhs", "rhs"),
                          strict=True):
        ran = cli(*shlex.split(line)[1:], "--json")
        assert ran.returncode == 0 and json.loads(ran.stdout)["outputs"]["d"] == shown[side]["d"]
    monkeypatch.setenv("PTXSMT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_ENABLED", True)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"lhs": NAN_SITES[0], "rhs": NAN_SITES[1]}) + "\n")
    first, again = (cli("equiv", "--batch", str(pairs)) for _ in range(2))
    rows = [json.loads(x.stdout) for x in (first, again)]
    assert [x.get("cached") for x in rows] == [None, True] and again.stderr == ""
    assert rows[0]["counterexample"] == rows[1]["counterexample"] == shown


FLIP_FILE = (str(NAN / "arith_a.ptx"), "--function", "nan_flip", "a=0", "b=0x7fc00000")


@pytest.mark.parametrize("args, problem", [
    ((*FLIP_FILE, "open[mul.rn.f32 NaN of 0x1]=0x7fc00000"),
     "nan_flip reaches no open value mul.rn.f32 NaN of 0x1"),
    ((*FLIP_FILE, "open[mul.rn.f32 NaN of 0x000000007fc00000]=0x1ff800000"),
     "does not fit the 32 bits"),
    (("mul.rn.f32 d, a, b;", "a=0", "b=1.0", "open[mul.rn.f32 NaN of 0x0]=true"),
     "the snippet reaches no open value mul.rn.f32 NaN of 0x0"),
])
def test_an_open_value_eval_cannot_take_is_one_line(args, problem):
    r = cli("eval", *args)
    assert r.returncode == 2 and problem in r.output and "Traceback" not in r.output


# ---- the helper ----------------------------------------------------------------------------

def _is_nan(bits: int, width: int) -> bool:
    if width == 32:
        return math.isnan(f32(bits))
    if width == 64:
        return math.isnan(f64(bits))
    return bool(np.isnan(np.array([bits], dtype=np.uint16).view(np.float16)[0]))


@pytest.mark.parametrize("fmt", [F16, F32, F64], ids=["f16", "f32", "f64"])
def test_values_differ_is_equality_up_to_nan_bits(fmt):
    rng = random.Random(7)
    w = fmt.width
    nans = [(0x7FF << (w - 12) if w == 64 else 0xFF << 23 if w == 32 else 0x1F << 10) | 1]
    samples = [rng.getrandbits(w) for _ in range(200)]
    samples += [n | rng.getrandbits(w - 12 if w == 64 else w - 9 if w == 32 else w - 6)
                for n in nans * 50]
    for a, b in zip(samples, reversed(samples)):
        want = a != b and not (_is_nan(a, w) and _is_nan(b, w))
        assert values_differ(a, b, fmt, "payload-free") == want
        assert values_differ(a, b, fmt, "exact") == (a != b)
        assert values_differ(a, b, None, "payload-free") == (a != b)  # bits are bits
        s = z3.Solver()  # and the term agrees with plain Python on the same bits
        s.add(differ(z3.BitVecVal(a, w), z3.BitVecVal(b, w), fmt, "payload-free")
              != z3.BoolVal(want))
        assert s.check() == z3.unsat


# ---- the command line ----------------------------------------------------------------------

def cli(*args: str):
    r = CliRunner().invoke(main, list(args))
    r.returncode = r.exit_code
    return r


def test_cli_snippets_exit_codes_json_and_text():
    lhs, rhs, _ = TWICE
    r = cli("equiv", lhs, rhs)
    assert r.returncode == 0 and r.stdout.startswith("equivalent up to NaN payloads:")
    r = cli("equiv", lhs, rhs, "--json")
    out = json.loads(r.stdout)
    assert (r.returncode, out["verdict"], out["nan"], out["up_to_nan_payloads"]) == \
        (0, "equivalent", "payload-free", True)
    r = cli("equiv", lhs, rhs, "--nan", "exact", "--json", "--timeout", "2")
    out = json.loads(r.stdout)
    assert (r.returncode, out["verdict"], out["nan"], out["only_nan_payloads"]) == \
        (1, "different", "exact", True)
    assert out["counterexample"]["differ"] == ["d"]
    r = cli("equiv", lhs, rhs, "--nan", "exact", "--timeout", "2")
    assert r.stdout.startswith("different: the snippets disagree on d, only in NaN payloads")
    r = cli("equiv", *TWICE_BITS[:2], "--outputs", "d", "--timeout", "2")
    assert r.returncode == 3 and r.stdout.startswith("unknown:")
    r = cli("equiv", lhs, rhs, "--nan", "bits")
    assert r.returncode == 2 and r.exception is None or isinstance(r.exception, SystemExit)


def test_cli_functions_and_batch(tmp_path):
    # generous CPU limits: every verdict here is definite, and the wall cap (twice the
    # limit) must not bite when the machine is loaded
    files = [str(NAN / "arith_a.ptx"), str(NAN / "arith_b.ptx")]
    r = cli("equiv", *files, "--function", "twice", "--timeout", "60")
    assert r.returncode == 0 and r.stdout.startswith("equivalent up to NaN payloads:")
    r = cli("equiv", *files, "--function", "half_neg", "--timeout", "60")
    assert r.returncode == 1 and "func_retval0 = 0x????" in r.stdout  # the half written
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join(json.dumps(p) for p in [
        {"lhs": TWICE[0], "rhs": TWICE[1]},
        {"lhs": TWICE[0], "rhs": TWICE[1], "options": {"nan": "exact", "timeout": 60}},
        {"a": files[0], "b": files[1], "function": "twice",
         "options": {"nan": "exact", "timeout": 60}},
        {"lhs": TWICE[0], "rhs": TWICE[1], "options": {"nan": "bits"}},
    ]) + "\n")
    r = cli("equiv", "--batch", str(pairs), "--no-cache")
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [(x["verdict"], x.get("nan")) for x in rows] == [
        ("equivalent", "payload-free"), ("different", "exact"), ("different", "exact"),
        ("error", None)]
    assert rows[0]["up_to_nan_payloads"] and rows[1]["only_nan_payloads"] and \
        rows[2]["only_nan_payloads"]
    assert "nan is one of" in rows[3]["error"] and r.returncode == 1


def test_ir_verdicts_name_the_policy():
    from ptxsmt.report.llvm import tv_json_line, tv_line
    from ptxsmt.smt.queries.refinement import Refinement, Validated
    up_to = Validated("f", Refinement("refines", up_to_nan_payloads=True))
    only = Validated("g", Refinement("different", inputs={"a": 0x7FC00000}, ir_result=0x7FC00000,
                                     ptx_result=0xFFFFFFFF, nan="exact",
                                     only_nan_payloads=True))
    assert tv_line(up_to) == "@f: refines up to NaN payloads"
    assert tv_line(only).startswith("@g: different only in NaN payloads (--nan exact) (inputs %a=")
    rows = [json.loads(tv_json_line(v)) for v in (up_to, only)]
    assert [(r["verdict"], r["nan"]) for r in rows] == [("refines", "payload-free"),
                                                        ("different", "exact")]
    assert rows[0]["up_to_nan_payloads"] and rows[1]["only_nan_payloads"]
