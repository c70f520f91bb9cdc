"""`ptxsmt synth`, held to the independent reference (tests/reference.py, tests/oracle.py):
every rule it reports agrees there on special and random operands, every near miss's
counterexample differs there, and the inversion table is the one IEEE comparisons give.
The reference never touches the Z3 terms."""

from __future__ import annotations

import functools
import itertools
import json
import operator
import random
from pathlib import Path

import pytest
import z3
from click.testing import CliRunner
from oracle import compare as oracle_compare
from reference import run as reference
from tier import THOROUGH

from ptxsmt import Program, proofs
from ptxsmt.batch import cache
from ptxsmt.cli import main
from ptxsmt.isa.body import parse
from ptxsmt.isa.errors import PtxError
from ptxsmt.isa.types import TYPES
from ptxsmt.smt.queries import classes as smt_classes
from ptxsmt.synth import search
from ptxsmt.synth.boolean import JOINT, closure, implies, outcomes
from ptxsmt.synth.executor import Serial, executor
from ptxsmt.synth.grammar import DEFAULT_FAMILIES, compares, enumerate_snippets, parse_types, pools
from ptxsmt.synth.inversions import table
from ptxsmt.synth.operands import register_specials
from ptxsmt.synth.text import text_of

ROOT = Path(__file__).resolve().parent.parent


def _synth(types: str, size: int, families=DEFAULT_FAMILIES,
           jobs: int = 2) -> search.Synthesis:
    """A run on `jobs` processes (the same rules as one: test_processes_match_serial)."""
    runner = executor("processes", jobs) if jobs > 1 else Serial()
    try:
        return search.synthesize(search.Config(parse_types(types), size, families), runner)
    finally:
        runner.close()


# Each run is synthesised on first use (not at import: collecting the suite stays cheap).
RUNS = {"s32": ("s32", 2, DEFAULT_FAMILIES),
        "f32": ("f32", 2, ("setp", "glue", "selp")),
        "f32 select": ("f32", 1, ("setp", "selp", "slct")),
        "f16x2": ("f16x2", 1, ("setp",)),
        # the 32-bit integers read every way: s32, u32 and b32 compares on one a, b; vset
        "i32": ("i32", 2, ("setp", "glue", "selp", "slct", "vset"))}


@functools.cache
def _run(name: str) -> search.Synthesis:
    return _synth(*RUNS[name])


def _inputs(pool, rng: random.Random) -> dict:
    out = {}
    for name, t in pool.inputs.items():
        if t.width == 1:
            out[name] = rng.random() < 0.5
        elif rng.random() < 0.7 and name in "ab":
            out[name] = rng.choice(register_specials(t))
        else:
            out[name] = rng.getrandbits(t.width)
    if rng.random() < 0.2:
        out["b"] = out["a"]  # equal operands: where lt and le part
    if pool.lanes > 1:
        out |= _lane_inputs(pool, rng)
    return out


LANE_VALUES = (0, 1, 2, 0x7E, 0x7F, 0x80, 0x81, 0xFE, 0xFF)  # and their half-word kin


def _lane_inputs(pool, rng: random.Random) -> dict:
    """a and b lane by lane (vset): each lane 0, 1, a signed extreme or a neighbour, or
    random, and some of b's lanes equal to a's (where lt and le part)."""
    lanes = pool.lanes
    w = 32 // lanes
    top = 1 << (w - 1)
    values = [v if v < 0x7E else {0x7E: top - 2, 0x7F: top - 1, 0x80: top, 0x81: top + 1,
                                  0xFE: 2 * top - 2, 0xFF: 2 * top - 1}[v] for v in LANE_VALUES]
    a = [rng.choice(values) if rng.random() < 0.7 else rng.getrandbits(w) for _ in range(lanes)]
    b = [x if rng.random() < 0.3 else rng.choice(values) if rng.random() < 0.7
         else rng.getrandbits(w) for x in a]
    return {"a": sum(v << (w * i) for i, v in enumerate(a)),
            "b": sum(v << (w * i) for i, v in enumerate(b))}


def _agree(lhs: str, rhs: str, pool, inputs: dict) -> bool:
    left, right = reference(lhs, inputs), reference(rhs, inputs)
    return all(left[o] == right[o] for o in pool.outputs)


@pytest.mark.parametrize("run", RUNS, ids=str)
def test_every_rule_holds_in_the_reference(run):
    rules = _run(run).rules
    assert rules
    for rule in rules:
        rng = random.Random(rule.lhs + rule.rhs)
        for _ in range(40 if THOROUGH else 10):
            inputs = _inputs(rule.pool, rng)
            assert _agree(rule.lhs, rule.rhs, rule.pool, inputs), (rule, inputs)


@pytest.mark.parametrize("run", RUNS, ids=str)
def test_what_the_rules_imply_holds_in_the_reference(run):
    """Members of a group are equal by the kept rules, congruence, renaming and Boolean
    algebra, most of them never sent to the solver: each is checked here."""
    rng = random.Random(run)
    for pool, groups in _run(run).groups.items():
        for group in groups:
            for member in rng.sample(group[1:], min(3, len(group) - 1)):
                for _ in range(12 if THOROUGH else 4):
                    inputs = _inputs(pool, rng)
                    assert _agree(member, group[0], pool, inputs), (member, group[0], inputs)


@pytest.mark.parametrize("run", RUNS, ids=str)
def test_every_near_miss_counterexample_differs_in_the_reference(run):
    for miss in _run(run).near_misses:
        inputs = {k: v for k, v in miss.counterexample["inputs"].items()}
        full = {name: inputs.get(name, 0) for name in miss.pool.inputs}
        assert not _agree(miss.lhs, miss.rhs, miss.pool, full), miss


def _near_miss(run: search.Synthesis, lhs: str, rhs: str):
    return next((m for m in run.near_misses if {m.lhs, m.rhs} == {lhs, rhs}), None)


@pytest.mark.parametrize(("lhs", "rhs", "breaking"), [
    ("setp.gtu.f32 p, a, b;", "setp.gt.f32 p, a, b;", "a is NaN or b is NaN"),
    ("setp.neu.f32 p, a, b;", "setp.ne.f32 p, a, b;", "a is NaN or b is NaN"),
    ("setp.lt.f32 p, a, b; not.pred p, p;", "setp.ge.f32 p, a, b;", "a is NaN or b is NaN"),
])
def test_held_out_near_misses_with_their_classes(lhs, rhs, breaking):
    run = _run("f32")
    found = _near_miss(run, lhs, rhs) or _near_miss(run, *_canonical(run, lhs, rhs))
    assert found is not None, [(m.lhs, m.rhs) for m in run.near_misses]
    assert found.classes["breaking"] == breaking


def _canonical(run, lhs, rhs):
    """The pair as the run names it: each side by the first member of its group."""
    first = {m: g[0] for groups in run.groups.values() for g in groups for m in g}
    return first[lhs], first[rhs]


def test_ftz_near_miss_is_about_subnormals():
    misses = [m for m in _run("f32").near_misses if ".ftz" in m.lhs + m.rhs and
              m.lhs.replace(".ftz", "") == m.rhs.replace(".ftz", "")]
    assert misses
    for m in misses:
        assert "subnormal" in m.classes["breaking"], m


def test_selp_min_near_miss_breaks_only_on_zeros_and_nan():
    """a < b ? a : b and b > a ? a : b ... are min; written with ge they differ on -0/+0."""
    select = _run("f32")
    zeros = [m for m in select.near_misses if m.pool.kind == "select"
             and m.classes["breaking"] == "a is 0 and b is 0, with opposite signs"]
    assert zeros
    for m in zeros:
        a, b = (m.counterexample["inputs"][k] for k in "ab")
        assert {a, b} <= {0, 0x80000000}  # +0 and -0
    assert select.rules


def _closure(run: search.Synthesis):
    return closure([(r.lhs, r.rhs) for r in run.rules], {})


@pytest.mark.parametrize(("run", "lhs", "rhs"), [
    ("f32", "setp.lt.f32 p, a, b; not.pred p, p;", "setp.geu.f32 p, a, b;"),
    ("f32", "setp.gt.f32 p, b, a; not.pred p, p;", "setp.geu.f32 p, a, b;"),
    ("f32", "setp.num.ftz.f32 p, a, b;", "setp.num.f32 p, b, a;"),
    ("f32", "setp.lt.f32 p, a, b; or.pred p, p, c;", "setp.gt.or.f32 p, b, a, c;"),
    ("f32", "setp.nan.f32 p, a, b; not.pred p, p;", "setp.num.f32 p, a, b;"),
    ("s32", "setp.lt.s32 p, a, b; not.pred p, p;", "setp.le.s32 p, b, a;"),
    ("s32", "setp.lt.s32 p, a, b; selp.s32 d, x, y, p;",
     "setp.ge.s32 p, a, b; selp.s32 d, y, x, p;"),
    ("s32", "set.lt.u32.s32 d, a, b;", "set.gt.u32.s32 d, b, a;"),
    ("f16x2", "setp.lt.f16x2 p|q, a, b;", "setp.gt.f16x2 p|q, b, a;"),
    ("i32", "setp.lo.u32 p, a, b;", "setp.lt.u32 p, a, b;"),
    ("i32", "setp.eq.s32 p, a, b;", "setp.eq.b32 p, a, b;"),
    ("i32", "setp.ne.u32 p, b, a;", "setp.ne.s32 p, a, b;"),
    ("i32", "setp.ls.u32 p, a, b;", "setp.le.u32 p, a, b;"),
    ("i32", "setp.hi.u32 p, b, a;", "setp.lt.u32 p, a, b;"),
    ("i32", "setp.lt.u32 p, a, b; not.pred p, p;", "setp.hs.u32 p, a, b;"),
    ("i32", "setp.eq.u32 p, a, b; not.pred p, p;", "setp.ne.s32 p, a, b;"),
    ("i32", "setp.lo.u32 p, a, b; selp.s32 d, x, y, p;",
     "setp.hs.u32 p, a, b; selp.s32 d, y, x, p;"),
    ("i32", "vset4.u32.u32.lt d, a, b, c;", "vset4.u32.u32.gt d, b, a, c;"),
    ("i32", "vset4.s32.u32.le d, a, b, c;", "vset4.u32.s32.ge d, b, a, c;"),
    ("i32", "vset4.s32.s32.eq d, a, b, c;", "vset4.u32.u32.eq d, b, a, c;"),
    ("i32", "vset2.u32.u32.lt d, a, b, c;", "vset2.u32.u32.gt d, b, a, c;"),
    ("i32", "vset2.s32.s32.ge d, b.h32, a.h10, c;", "vset2.s32.s32.le d, b, a, c;"),
    ("i32", "vset4.u32.u32.lt d.b0, b, a, c;", "vset4.u32.u32.gt d.b0, a, b, c;"),
    *(MASKED := [  # a mask over equal plain forms (congruence)
        ("i32", "vset4.u32.s32.ne d.b0, a, b, c;", "vset4.s32.u32.ne d.b0, b, a, c;"),
        ("i32", "vset4.s32.s32.ge d.b0, a.b7654, b.b3210, c;", "vset4.s32.s32.le d.b0, a, b, c;"),
        ("i32", "vset2.u32.s32.lt d.h0, b, a, c;", "vset2.s32.u32.gt d.h0, a, b, c;"),
    ]),
    *(ORDER := [  # the order between compares: chains that are one compare
        ("f32", "setp.eq.f32 p, a, b; setp.ge.or.f32 p, a, b, p;", "setp.ge.f32 p, a, b;"),
        ("f32", "setp.lt.f32 p, a, b; setp.le.and.f32 p, a, b, !p;", "setp.eq.f32 p, a, b;"),
        ("f32", "setp.lt.f32 p, b, a; setp.le.and.f32 p, a, b, !p;", "setp.le.f32 p, a, b;"),
        ("f32", "setp.eq.ftz.f32 p, a, b; setp.ge.or.f32 p, a, b, p;",
         "setp.ge.ftz.f32 p, a, b;"),
        ("f32", "setp.nan.f32 p, a, b; setp.lt.or.ftz.f32 p, a, b, p;",
         "setp.ltu.ftz.f32 p, a, b;"),
        ("s32", "setp.lt.s32 p, a, b; setp.gt.or.s32 p, a, b, p;", "setp.ne.s32 p, b, a;"),
        ("i32", "setp.eq.s32 p, a, b; setp.lo.or.u32 p, a, b, p;", "setp.ls.u32 p, a, b;"),
    ]),
])
def test_held_out_identities_follow_from_the_kept_rules(run, lhs, rhs):
    assert implies(_closure(_run(run)), lhs, rhs)


@pytest.mark.parametrize(("run", "lhs", "rhs"), ORDER + MASKED)
def test_held_out_order_and_mask_identities_hold_in_the_reference(run, lhs, rhs):
    kind = lhs.split(".")[0] if lhs.startswith("vset") else "pred"
    pool = next(p for p in _run(run).groups if p.kind == kind)
    rng = random.Random(lhs + rhs)
    for _ in range(300):
        inputs = _inputs(pool, rng)
        assert _agree(lhs, rhs, pool, inputs), inputs


@pytest.mark.parametrize(("run", "lhs", "rhs"), [
    ("f32", "setp.lt.f32 p, a, b; not.pred p, p;", "setp.ge.f32 p, a, b;"),
    ("i32", "setp.lt.s32 p, a, b;", "setp.lo.u32 p, a, b;"),
    ("i32", "setp.lt.s32 p, a, b; not.pred p, p;", "setp.hs.u32 p, a, b;"),
    ("i32", "vset4.s32.s32.lt d, a, b, c;", "vset4.u32.u32.lt d, a, b, c;"),
    ("i32", "vset4.s32.u32.eq d, a, b, c;", "vset4.u32.u32.eq d, a, b, c;"),
    ("i32", "vset4.u32.u32.lt d, a, b, c;", "vset2.u32.u32.lt d, a, b, c;"),
    ("f32", "setp.eq.f32 p, a, b; setp.gt.or.f32 p, a, b, p;", "setp.geu.f32 p, a, b;"),
    ("f32", "setp.lt.ftz.f32 p, a, b; setp.le.and.f32 p, a, b, p;", "setp.lt.f32 p, a, b;"),
    ("f32", "setp.eq.ftz.f32 p, a, b;", "setp.eq.f32 p, a, b;"),
    ("i32", "setp.lt.s32 p, a, b; setp.lo.and.u32 p, a, b, p;", "setp.lt.s32 p, a, b;"),
    ("i32", "vset4.u32.u32.lt d.b0, a, b, c;", "vset4.u32.u32.lt d, a, b, c;"),
    ("i32", "vset2.u32.u32.lt d.h0, a, b, c;", "vset2.u32.u32.lt d.h1, a, b, c;"),
])
def test_a_wrong_identity_does_not_follow(run, lhs, rhs):
    assert not implies(_closure(_run(run)), lhs, rhs)


# ---- across signedness: the iN domains ------------------------------------------------------


@pytest.mark.parametrize(("lhs", "rhs", "breaking"), [
    ("setp.lt.s32 p, a, b;", "setp.lo.u32 p, a, b;", "exactly one of a and b is negative"),
    ("setp.le.s32 p, a, b;", "setp.ls.u32 p, a, b;", "exactly one of a and b is negative"),
    ("setp.gt.s32 p, a, b;", "setp.hi.u32 p, a, b;", "exactly one of a and b is negative"),
    ("vset4.u32.u32.lt d, a, b, c;", "vset4.s32.s32.lt d, a, b, c;",
     "a is negative or b is negative"),
    ("vset2.u32.u32.ge d, a, b, c;", "vset2.s32.s32.ge d, a, b, c;",
     "a is negative or b is negative"),
    ("vset4.s32.u32.eq d, a, b, c;", "vset4.s32.s32.eq d, a, b, c;", "a is negative"),
])
def test_signedness_near_misses_break_on_the_sign(lhs, rhs, breaking):
    """The NVPTX setp.hi/ls bug class: a signed compare where an unsigned one was meant
    (or back) holds unless the operands' sign bits differ."""
    run = _run("i32")
    found = _near_miss(run, lhs, rhs) or _near_miss(run, *_canonical(run, lhs, rhs))
    assert found is not None, [(m.lhs, m.rhs) for m in run.near_misses]
    assert found.classes["breaking"] == breaking
    cex = found.counterexample["inputs"]
    lanes = found.pool.lanes
    w = 32 // lanes
    signs = [[(cex.get(r, 0) >> (w * i + w - 1)) & 1 for i in range(lanes)] for r in "ab"]
    assert any(signs[0]) or any(signs[1])  # the counterexample has a sign bit set


def _sign_bits(pool) -> int:
    """The sign bit of each lane of a (or b) as the pool reads them."""
    w = 32 // pool.lanes if pool.lanes > 1 else pool.type.width
    return sum(1 << (w * i + w - 1) for i in range(max(pool.lanes, 1)))


def _away_from(breaking: str, pool, inputs: dict) -> dict:
    """The inputs moved out of the classes said to break a sign near miss: the sign
    bits made equal ("exactly one of a and b is negative"), or cleared where "r is
    negative" is named."""
    signs = _sign_bits(pool)
    if breaking == "exactly one of a and b is negative":
        return {**inputs, "b": (inputs["b"] & ~signs) | (inputs["a"] & signs)}
    named = [lit.split(" is ")[0] for lit in breaking.split(" or ")]
    return {**inputs, **{r: inputs[r] & ~signs for r in named}}


def test_sign_near_misses_hold_outside_their_breaking_classes():
    """What "differs only when ..." claims, checked in the reference: with the named
    operands' sign bits cleared (or made equal), the two sides agree."""
    misses = [m for m in _run("i32").near_misses if "negative" in m.classes["breaking"]]
    assert {m.pool.kind for m in misses} >= {"pred", "vset2", "vset4"}
    for m in misses:
        rng = random.Random(m.lhs + m.rhs)
        for _ in range(40):
            inputs = _away_from(m.classes["breaking"], m.pool, _inputs(m.pool, rng))
            assert _agree(m.lhs, m.rhs, m.pool, inputs), (m.lhs, m.rhs, inputs)


def test_sign_is_ordinary_within_one_signedness():
    """Where only one reading is compared the sign breaks nothing on its own: no s32
    near miss names it."""
    assert not any("negative" in m.classes["breaking"] for m in _run("s32").near_misses)


# ---- vset, against the spec's pseudocode (9.7.18.2) --------------------------------------

ORDER = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
         "gt": operator.gt, "ge": operator.ge}


def _vset_spec(text: str, regs: dict) -> int:
    """d of one vset line, transcribed from the pseudocode of 9.7.18.2.2/.4: the
    operands' bank is b:a (selector digit k is lane-sized field k; the last digit feeds
    lane 0), each selected field sign- or zero-extended by its type, compared, and
    written as 0/1 where the mask says; other lanes come from c (Vc[i])."""
    head, _, rest = text.strip().rstrip(";").partition(" ")
    op, atype, btype, cmp = head.split(".")
    n = {"vset2": 2, "vset4": 4}[op]
    w, prefix = 32 // n, {"vset2": "h", "vset4": "b"}[op]
    (d, dmask), (ra, asel), (rb, bsel), (rc, _) = (
        (o.partition(".")[0], o.partition(".")[2]) for o in rest.split(", "))
    bank = (regs[rb] << 32) | regs[ra]
    default = {"h": ("h10", "h32", "h10"), "b": ("b3210", "b7654", "b3210")}[prefix]

    def extract(sel: str, typ: str) -> list[int]:
        fields = [(bank >> (w * int(k))) & ((1 << w) - 1) for k in reversed(sel[1:])]
        return [f - (1 << w) if typ == "s32" and f >> (w - 1) else f for f in fields]

    va, vb = extract(asel or default[0], atype), extract(bsel or default[1], btype)
    mask = {int(k) for k in (dmask or default[2])[1:]}
    vc = [(regs[rc] >> (w * i)) & ((1 << w) - 1) for i in range(n)]
    lanes = [int(ORDER[cmp](x, y)) if i in mask else vc[i]
             for i, (x, y) in enumerate(zip(va, vb))]
    return sum(v << (w * i) for i, v in enumerate(lanes))


def test_the_spec_transcription_reads_the_examples():
    """Hand-worked lanes: bytes 0x80 vs 0x01 are 128 > 1 unsigned and -128 < 1 signed."""
    regs = {"a": 0x00_7F_80_01, "b": 0x01_7F_01_02, "c": 0xAA_BB_CC_DD}
    assert _vset_spec("vset4.u32.u32.lt d, a, b, c;", regs) == 0x01_00_00_01
    assert _vset_spec("vset4.s32.s32.lt d, a, b, c;", regs) == 0x01_00_01_01
    assert _vset_spec("vset4.s32.s32.lt d.b0, a, b, c;", regs) == 0xAA_BB_CC_01
    assert _vset_spec("vset4.u32.u32.eq d, b.b7654, a.b3210, c;", regs) == 0x00_01_00_00
    assert _vset_spec("vset2.s32.u32.lt d, a, b, c;", regs) == 0x0001_0001  # 0x8001 < 0x0102
    assert _vset_spec("vset2.u32.u32.lt d, a, b, c;", regs) == 0x0001_0000


def _vset_rows(pool, rng: random.Random, count: int) -> list[dict]:
    rows = [{**_inputs(pool, rng), "c": rng.getrandbits(32)} for _ in range(count)]
    return rows + [{**r, "b": r["a"]} for r in rows[:4]]


def test_every_vset_rule_holds_by_the_spec():
    rules = [r for r in _run("i32").rules + _run("s32").rules if r.pool.kind.startswith("vset")]
    assert {r.pool.kind for r in rules} == {"vset2", "vset4"}
    for rule in rules:
        rng = random.Random(rule.lhs + rule.rhs)
        for regs in _vset_rows(rule.pool, rng, 60):
            assert _vset_spec(rule.lhs, regs) == _vset_spec(rule.rhs, regs), (rule, regs)


def test_every_vset_group_is_equal_by_the_spec():
    for pool, groups in _run("i32").groups.items():
        if pool.kind.startswith("vset"):
            rng = random.Random(pool.name)
            for group in groups:
                for regs in _vset_rows(pool, rng, 30):
                    want = _vset_spec(group[0], regs)
                    assert all(_vset_spec(m, regs) == want for m in group), (group, regs)


def test_every_vset_near_miss_differs_by_the_spec():
    misses = [m for m in _run("i32").near_misses if m.pool.kind.startswith("vset")]
    assert misses
    for m in misses:
        regs = {r: m.counterexample["inputs"].get(r, 0) for r in "abc"}
        assert _vset_spec(m.lhs, regs) != _vset_spec(m.rhs, regs), m
        assert m.classes["complete"] is False  # lane classes from the operands, not searched


def test_minimisation_drops_implied_rules():
    for run in map(_run, RUNS):
        s = run.stats
        assert s.proved == len(run.rules) + s.derived
    assert _run("s32").stats.derived > 0 and _run("f32").stats.derived > 0


# ---- the order between compares (boolean.outcome_table), against the oracle ---------------

def _outcome(a: int, b: int, t: str, ftz: bool = False) -> str:
    """How a compares with b in the oracle: "<", "=", ">", or "?" (unordered)."""
    if TYPES[t].is_float and oracle_compare("nan", a, b, t, ftz):
        return "?"
    return "<" if oracle_compare("lt", a, b, t, ftz) else \
        "=" if oracle_compare("eq", a, b, t, ftz) else ">"


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64", "s16", "u16", "b16", "s32", "u32",
                               "b32", "s64", "u64", "b64"])
def test_each_compare_is_a_set_of_outcomes_and_linked_outcomes_meet_as_joint(t):
    """The minimiser reads a compare of a and b as the outcomes where it holds, and the
    outcomes with and without .ftz (signed and unsigned) as taking only JOINT's values
    together: both held to the oracle's compares on special and random operands."""
    rng = random.Random(t)
    specials = register_specials(TYPES[t])
    width = TYPES[t].width
    pairs = [(a, b) for a in specials for b in specials] + \
        [(rng.getrandbits(width), rng.getrandbits(width)) for _ in range(200)]
    for v in compares(TYPES[t]):
        for order in (("a", "b"), ("b", "a")):
            variable, true = outcomes(f"{v} p, {order[0]}, {order[1]};")
            for a, b in pairs:
                x, y = (a, b) if order == ("a", "b") else (b, a)
                got = oracle_compare(v.cmp.value, x, y, t, v.ftz)
                assert got == (_outcome(a, b, t, variable.endswith(".ftz")) in true), (v, a, b)
    for a, b in pairs:
        if TYPES[t].is_float:
            assert (_outcome(a, b, t), _outcome(a, b, t, True)) in JOINT["float"]
        else:
            signed, unsigned = (_outcome(a, b, f"{k}{width}") for k in "su")
            assert (signed, unsigned) in JOINT["integer"], (a, b)


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64", "s8", "u16", "s32", "u32", "b32",
                               "s64", "u64", "pred"])
def test_a_value_is_in_exactly_the_class_the_solver_terms_say(t):
    """Synth classes concrete operands with `value_class`, the prover with `class_of`'s
    terms: on every special and random value, the one class `class_of` holds for is the
    one `value_class` names."""
    ty, rng = TYPES[t], random.Random(t)
    values = [False, True] if t == "pred" else \
        register_specials(ty) + [rng.getrandbits(ty.width) for _ in range(100)]
    for v in values:
        const = z3.BoolVal(v) if t == "pred" else z3.BitVecVal(v, ty.width)
        holds = [c for c in smt_classes.classes(ty)
                 if z3.is_true(z3.simplify(smt_classes.class_of(c, const, ty)))]
        assert holds == [smt_classes.value_class(v, ty)], (t, hex(v), holds)


@pytest.mark.parametrize(("types", "size"), [("f16x2", 2), ("s32", 2), ("i32", 1)])
def test_snippet_texts_are_what_isa_prints(types, size):
    """Synth keys everything by text and reads a text only through isa's parser (and
    remembers the instructions of the texts it prints): every snippet the grammar prints
    is isa's own printing of what isa parses from it."""
    for d in parse_types(types):
        for snippet in enumerate_snippets(d, size, DEFAULT_FAMILIES):
            assert text_of(parse(snippet.text)) == snippet.text


# The outcomes of comparing a with b as the plain compares that hold on each
OUTCOME_COMPARES = {"<": "lt", "=": "eq", ">": "gt", "?": "nan"}
# JOINT's groups: (kind, the compares of one a, b read together: (type, .ftz))
JOINT_GROUPS = {"f16": ("float", (("f16", False), ("f16", True))),
                "f32": ("float", (("f32", False), ("f32", True))),
                "i16": ("integer", (("s16", False), ("u16", False))),
                "i32": ("integer", (("s32", False), ("u32", False))),
                "i64": ("integer", (("s64", False), ("u64", False)))}


@pytest.mark.parametrize("group", JOINT_GROUPS)
def test_joint_is_derived_by_the_solver_from_the_semantics(group):
    """JOINT lists exactly the tuples of outcomes some a, b has: each tuple is asked of
    the solver over the compares' terms (every a and b, not a sample). A tuple missing
    from JOINT would let the minimiser call two different snippets equal."""
    kind, readings = JOINT_GROUPS[group]
    names = list(OUTCOME_COMPARES if kind == "float" else "<=>")
    text = " ".join(f"setp.{OUTCOME_COMPARES[o]}{'.ftz' * ftz}.{t} r{k}_{n}, a, b;"
                    for k, (t, ftz) in enumerate(readings) for n, o in enumerate(names))
    holds = Program.parse(text).encode().outputs
    possible = set()
    for row in itertools.product(names, repeat=len(readings)):
        solver = z3.Solver()
        solver.add(*(holds[f"r{k}_{names.index(o)}"] for k, o in enumerate(row)))
        if solver.check() == z3.sat:
            possible.add(row)
    assert possible == set(JOINT[kind])


# ---- the inversion table, against IEEE comparisons in the oracle -------------------------

SAMPLE = {"f32": register_specials(TYPES["f32"]), "s32": register_specials(TYPES["s32"])}
HAND_INVERSIONS = {  # what a backend needs: !(a X b) is a Y b
    "f32": {"eq": "neu", "ne": "equ", "lt": "geu", "le": "gtu", "gt": "leu", "ge": "ltu",
            "equ": "ne", "neu": "eq", "ltu": "ge", "leu": "gt", "gtu": "le", "geu": "lt",
            "num": "nan", "nan": "num"},
    "s32": {"eq": "ne", "ne": "eq", "lt": "ge", "le": "gt", "gt": "le", "ge": "lt"},
}
INVERSION_KEYS = [(t.name, ftz, str(v.cmp)) for d in parse_types("f32,s32") for t in d.members
                  for ftz in (False, True) for v in compares(t) if v.ftz == ftz]


@functools.cache
def _inversions() -> dict:
    """The table, proved once on first use (not at import)."""
    rows = table(parse_types("f32,s32"), search.Prover(Serial(), search.Stats(), 30.0))
    return {(r.type, r.ftz, r.cmp): r for r in rows}


def test_inversion_table_has_a_row_per_compare():
    assert sorted(_inversions()) == sorted(dict.fromkeys(INVERSION_KEYS))


def _oracle_holds(t: str, ftz: bool, fn) -> bool:
    return all(fn(a, b) for a in SAMPLE[t] for b in SAMPLE[t])


@pytest.mark.parametrize("key", dict.fromkeys(INVERSION_KEYS),
                         ids=lambda k: f"{k[0]}{'.ftz' * k[1]}.{k[2]}")
def test_inversion_table_is_ieee(key):
    row = _inversions()[key]
    t, x = row.type, row.cmp
    assert row.invert == HAND_INVERSIONS[t][x]
    assert _oracle_holds(t, row.ftz, lambda a, b: oracle_compare(x, a, b, t, row.ftz)
                         != oracle_compare(row.invert, a, b, t, row.ftz))
    assert _oracle_holds(t, row.ftz, lambda a, b: oracle_compare(x, a, b, t, row.ftz)
                         == oracle_compare(row.swap, b, a, t, row.ftz))
    assert row.selp_swap == row.invert
    assert row.naive_safe == (t == "s32" or x in ("num", "nan"))
    if not row.naive_safe:
        assert row.naive_breaks == "a is NaN or b is NaN"


# ---- cache, executors, command line --------------------------------------------------------


def test_rerun_reads_every_proof_from_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PTXSMT_CACHE_DIR", str(tmp_path))
    first = _synth("s32", 1, ("setp",))
    again = _synth("s32", 1, ("setp",))
    assert first.stats.cache_hits == 0 and first.stats.cache_lookups > 0
    assert again.stats.cache_hits == again.stats.cache_lookups == first.stats.cache_lookups
    assert [(r.lhs, r.rhs) for r in again.rules] == [(r.lhs, r.rhs) for r in first.rules]
    cache.enable(False)
    try:
        off = _synth("s32", 1, ("setp",))
    finally:
        cache.enable(True)
    assert off.stats.cache_hits == 0


def test_dask_executor_on_a_local_cluster():
    distributed = pytest.importorskip("distributed")
    from ptxsmt.synth.executor import Dask

    # a worker process with two threads: z3's context is not thread-safe, so the tasks
    # take turns (ptxsmt.synth.work), and none runs beside this process's own z3
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as c, \
            distributed.Client(c) as client:
        runner = Dask(1, client=client)
        result = search.synthesize(search.Config(parse_types("s32"), 1, ("setp",)), runner)
    serial = _synth("s32", 1, ("setp",), jobs=1)
    assert [(r.lhs, r.rhs) for r in result.rules] == [(r.lhs, r.rhs) for r in serial.rules]


def test_processes_match_serial():
    """The same rules, in the same order, from two processes as from one (so the runs
    above, which take two, test what one would find)."""
    config = ("i32", 1, ("setp", "glue", "vset"))
    serial, pooled = _synth(*config, jobs=1), _synth(*config, jobs=2)
    assert [(r.lhs, r.rhs) for r in pooled.rules] == [(r.lhs, r.rhs) for r in serial.rules]
    assert serial.rules


@pytest.mark.parametrize(("args", "message"), [
    (["--types", "q99"], "no setp on type 'q99'"),
    (["--types", "pred"], "no setp on type 'pred'"),
    (["--size", "0"], "--size"),
    (["--families", "setp,bogus"], "unknown family 'bogus'"),
])
def test_bad_input_is_one_line_exit_2(args, message):
    r = CliRunner().invoke(main, ["synth", *args])
    assert r.exit_code == 2
    assert message in r.output and len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.output


def test_json_and_out_dir_round_trip(tmp_path):
    r = CliRunner().invoke(main, ["synth", "--types", "s32", "--size", "2", "--families",
                                  "setp,glue", "--json", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out) >= {"rules", "near_misses", "stats"}
    assert set(out["stats"]) >= {"enumerated", "candidates", "proved", "refuted", "seconds"}
    assert out["rules"] and all(set(x) >= {"lhs", "rhs", "types", "verdict"} and
                                x["verdict"] == "proved" for x in out["rules"])
    assert {p.name for p in tmp_path.iterdir()} >= {
        "rules.toml", "near-misses.md", "near-misses.json", "inversions.md", "inversions.json"}
    library = proofs.load(tmp_path)
    assert len(library) == len(out["rules"])
    assert all(r.ok for r in proofs.run(library))


def test_f32_near_miss_json_shape():
    r = CliRunner().invoke(main, ["synth", "--types", "f32", "--size", "1", "--families",
                                  "setp", "--json"])
    misses = json.loads(r.stdout)["near_misses"]
    assert misses
    for m in misses:
        assert set(m) >= {"lhs", "rhs", "counterexample", "breaking_classes"}
        assert set(m["counterexample"]) == {"inputs", "lhs", "rhs"}


@pytest.mark.parametrize("spec", ["", " , "])
def test_empty_type_list_is_bad_input(spec):
    with pytest.raises(PtxError):
        parse_types(spec)


# ---- the committed library ------------------------------------------------------------------

COMMITTED = proofs.load(ROOT / "proofs" / "synth")


def _pool_of(inst):
    """The pool a committed rule came from: its description starts with the pool's name."""
    [domain] = parse_types(inst.name.split("-")[1])
    return next(p for p in pools(domain, DEFAULT_FAMILIES)
                if p.name == inst.description.split(":")[0])


def test_committed_library_covers_the_main_types():
    names = {p.stem for p in (ROOT / "proofs" / "synth").glob("*.toml")}
    assert names == {"f32", "f16x2", "s32", "i32"}
    assert len(COMMITTED) > 100


def test_committed_rules_hold_in_the_reference():
    rng = random.Random(7)
    for inst in rng.sample(COMMITTED, min(300, len(COMMITTED))):
        pool = _pool_of(inst)
        for _ in range(20):
            inputs = _inputs(pool, rng)
            assert _agree(inst.lhs, inst.rhs, pool, inputs), (inst.id, inputs)


def test_prove_identities_reads_the_synthesized_library():
    """CI's `ptxsmt prove identities` re-proves the committed rules: the library is
    read with its subfolders."""
    ids = {inst.id for inst in proofs.load(ROOT / "proofs")}
    assert {inst.id for inst in COMMITTED} <= ids
