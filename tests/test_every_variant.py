"""Every catalogue variant against the independent reference, deterministically.

Each variant's instruction forms (`!c`, vset masks and selectors) run on a fixed
grid of special operands: every pair of a type's special values (so equal
operands too; per lane for packed types, with the lanes paired differently),
predicates both ways (drawn per row, seeded by the text). Then again under
sm_13 (float set/setp/slct) and with the prose vset merge. The batch fast path
evaluates; tests/reference.py (the plain-Python oracle, never the Z3 terms)
answers. One case per family chunk; a failure names the variant and operands.

The default tier takes every variant in one of its forms (a fixed choice per variant)
on a fixed sample of ROWS grid rows; PTXSMT_PROFILE=thorough takes every form on the
whole grid.
"""

from __future__ import annotations

import random
import re
from functools import cache, lru_cache
from itertools import product

import pytest
import reference as reference_module
from batchbits import evaluate_bits
from reference import UNSPECIFIED
from reference import run as reference
from tier import sample

from ptxsmt import Options, PtxError, parse_one
from ptxsmt.isa.types import PRED
from ptxsmt.isa.variants import FAMILIES, catalogue, operand_slots, operand_types
from ptxsmt.smt.queries.vectors import instruction_forms

CHUNK = 200  # forms per case: small enough to name, large enough to batch
ROWS = 30  # grid rows per form in the default tier


def float_specials(ebits: int, mbits: int) -> list[int]:
    """±0, the smallest subnormal and the largest negative one, the smallest normal, 1.0,
    ±inf, a quiet NaN and a negative signalling one, from the format's fields."""
    sign, exp_top = 1 << (ebits + mbits), ((1 << ebits) - 1) << mbits
    one = ((1 << (ebits - 1)) - 1) << mbits
    return [0, sign, 1, sign | ((1 << mbits) - 1), 1 << mbits, one,
            exp_top, sign | exp_top, exp_top | (1 << (mbits - 1)), sign | exp_top | 1]


def int_specials(width: int) -> list[int]:
    """0, 1, 2, all ones (-1), the signed minimum and maximum, and a byte edge."""
    top = 1 << (width - 1)
    return [0, 1, 2, (1 << width) - 1, top, top - 1, 0x80 if width > 8 else 0x81]


FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}  # (exp, man)


def specials(t) -> tuple[int, ...]:
    name = t.lane.name if t.is_packed else t.name
    return tuple(float_specials(*FORMATS[name]) if name in FORMATS else
                 int_specials(t.lane_width))


@cache
def pairs(values: tuple[int, ...], lanes: int, width: int) -> list[tuple[int, int]]:
    """Every pair of values in every lane; lane k takes the pair shifted by (3k, 5k),
    so the lanes of one row differ and a lane mix-up shows."""
    n = len(values)
    return [(sum(values[(i + 3 * k) % n] << (width * k) for k in range(lanes)),
             sum(values[(j + 5 * k) % n] << (width * k) for k in range(lanes)))
            for i, j in product(range(n), repeat=2)]


def rows(text: str) -> list[dict]:
    """The operand grid of one instruction text."""
    ins = parse_one(text)
    v, types, slots = ins.variant, operand_types(ins.variant), set(ins.sources)
    rng = random.Random(text)
    if v.syntax.lane_prefix:  # vset: lanes of a and b paired; c's lanes never 0 or 1
        lanes = v.syntax.lanes
        width = 32 // lanes
        cs = [0xFFFFFFFF] + [rng.getrandbits(32) | 0x02020202 for _ in range(3)]  # .add wraps
        return [{"a": a, "b": b, "c": cs[i % 4]}
                for i, (a, b) in enumerate(pairs(tuple(int_specials(width)), lanes, width))]
    if v.family in ROUNDING_FAMILIES or v.opcode in ("mad", "div", "rem"):
        return _rounding_rows(v, types, rng)
    if types.get("c", PRED) is not PRED:  # slct: every selector special, a and b distinct
        a, b = specials(types["a"])[5:7]
        return [{"a": a, "b": b, "c": c} for c in specials(types["c"])]
    if slots == {"a"}:  # mov, not, cvt
        t = types["a"]
        return [{"a": x} for x in ([False, True] if t.width == 1 else specials(t))]
    t = types["a"]
    if types.get("b", t) is not t:  # shl/shr: b is a .u32 amount, clamped to the width
        w = t.width
        return [{"a": a, "b": b} for a in specials(t) for b in (0, 1, w - 1, w, w + 1, 0xFFFFFFFF)]
    grid = list(product([False, True], repeat=2)) if t.width == 1 else \
        pairs(specials(t), t.lanes if t.is_packed else 1, t.lane_width)
    if "c" not in slots:
        return [{"a": a, "b": b} for a, b in grid]
    return [{"a": a, "b": b, "c": rng.random() < 0.5} for a, b in grid]  # both ways, unbiased


ROUNDING_FAMILIES = ("float-arith", "convert", "bits")
AMOUNTS = (0, 1, 7, 8, 31, 32, 33, 63, 64, 255, 256)  # bfe's and bfi's pos/len, shf's shift
PER_FLOAT_VARIANT = 16  # rows of a rounding variant: sampled from its grid (fallback path)


def _rounding_rows(v, types, rng) -> list[dict]:
    """Every pair of a and b's specials (per lane), c cycling through its own; an amount
    operand (bfe, shf) around the widths. The float families, which the batch answers
    line by line, keep a seeded sample of the grid."""
    def values(slot):
        t = types[slot]
        return AMOUNTS if v.family == "bits" and slot != "a" and t.name == "u32" and \
            v.opcode != "prmt" else specials(t)
    sources = [s for s in ("a", "b", "c", "e") if s in types and s in operand_slots(v)]
    t = types["a"]
    if len(sources) == 1:
        return [{"a": a} for a in values("a")]
    if values("b") is AMOUNTS:
        grid = [(a, b) for a in values("a") for b in AMOUNTS]
    else:
        grid = pairs(values("a"), t.lanes if t.is_packed else 1, t.lane_width)
    cs = values("c") if "c" in sources else ()
    es = values("e") if "e" in sources else ()  # bfi's length: against each of c's in turn
    out = [{"a": a, "b": b, **({"c": cs[i % len(cs)]} if cs else {}),
            **({"e": es[i // len(cs) % len(es)]} if es else {})}
           for i, (a, b) in enumerate(grid)]
    if v.family in ("float-arith", "convert") and len(out) > PER_FLOAT_VARIANT:
        out = rng.sample(out, PER_FLOAT_VARIANT)
    return out


def _hex(value, width: int):
    return value if width == 1 else f"0x{value:x}"


def check_forms(texts: list[str], opts: Options) -> list[str]:
    """Disagreements between the fast batch path and the reference, as readable lines."""
    items, raws = [], []
    for text in texts:
        ins = parse_one(text)
        types = {o.text: operand_types(ins.variant)[slot] for slot, o in ins.sources.items()}
        for r in sample(rows(text), ROWS, text):
            items.append((text, {k: _hex(x, types[k].width) for k, x in r.items()}))
            raws.append(r)
    bad = []
    for (text, shown), raw, got in zip(items, raws, evaluate_bits(items, opts)):
        problem = _disagreement(got, reference(text, raw, opts.target, opts.vset_merge))
        if problem:
            bad.append(f"{text} {shown}: {problem}")
    return bad


def _disagreement(got, want: dict) -> str:
    if isinstance(got, PtxError):  # fine only where the reference finds the value open too
        open_ = re.match(r"output (\S+) is unspecified", str(got))
        return "" if open_ and want.get(open_[1]) == UNSPECIFIED else str(got)
    for reg, value in got.items():
        if value != want[reg]:
            return f"{reg} = {value!r}, reference {want[reg]!r}"
    return ""


def _chunks(families, opts: Options, label: str, keep=lambda v: True):
    """Each family's forms in chunks, named after the family and the chunk's first variant."""
    for family in families:
        forms = [f for v in catalogue().family(family) if keep(v)
                 for f in sample(instruction_forms(v), 1, v)]
        for i in range(0, len(forms), CHUNK):
            first = parse_one(forms[i]).variant
            yield pytest.param(forms[i:i + CHUNK], opts, id=f"{label}{family}-{first}")


def _all_forms():
    yield from _chunks((*FAMILIES, "glue", "arith", *ROUNDING_FAMILIES), Options(), "")
    yield from _chunks(("set", "setp", "slct", "arith"), Options(target=13), "sm_13-",
                       lambda v: v.compared_type and v.compared_type.is_float)  # sm_1x
    # changes f32 compares and f32 abs/neg/min/max only
    yield from _chunks(("vset2", "vset4"), Options(vset_merge="b"), "merge_b-")


@pytest.fixture(scope="module")
def parse_once():
    """The reference parses its text on every call; here each text comes ~100 times."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reference_module, "parse", lru_cache(maxsize=None)(reference_module.parse))
        yield


@pytest.mark.parametrize("texts,opts", list(_all_forms()))
def test_every_variant_meets_the_reference(texts, opts, parse_once):
    bad = check_forms(texts, opts)
    assert not bad, f"{len(bad)} mismatches, first:\n" + "\n".join(bad[:8])


def test_the_grid_covers_what_it_claims():
    """Equal operands, both predicate values, NaN, ±0 and subnormals, on both lanes."""
    grid = rows("setp.lt.and.f16x2 p|q, a, b, c;")
    lanes = [[((r["a"] >> s) & 0xFFFF, (r["b"] >> s) & 0xFFFF) for r in grid] for s in (0, 16)]
    f16 = float_specials(5, 10)
    for lane in lanes:
        assert set(lane) == set(product(f16, f16))
    assert any(x != y for x, y in zip(*lanes))
    assert {r["c"] for r in grid} == {False, True}
    assert {0x0000, 0x8000, 0x0001, 0x7E00, 0x7C00, 0xFC00} <= set(f16)
