"""`ptxsmt synth`, held to the independent reference (tests/reference.py, tests/oracle.py):
every rule it reports agrees there on special and random operands, every near miss's
counterexample differs there, and the inversion table is the one IEEE comparisons give.
The reference never touches the Z3 terms."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from oracle import compare as oracle_compare
from reference import run as reference

from ptxsmt import proofs
from ptxsmt.cli import main
from ptxsmt.eval import cache
from ptxsmt.isa.errors import PtxError
from ptxsmt.isa.types import TYPES
from ptxsmt.synth import search
from ptxsmt.synth.boolean import closure, implies
from ptxsmt.synth.executor import Serial, executor
from ptxsmt.synth.grammar import DEFAULT_FAMILIES, parse_types, pools
from ptxsmt.synth.inversions import table
from ptxsmt.synth.operands import register_specials

ROOT = Path(__file__).resolve().parent.parent


def _synth(types: str, size: int, families=DEFAULT_FAMILIES) -> search.Synthesis:
    return search.synthesize(search.Config(parse_types(types), size, families), Serial())


S32 = _synth("s32", 2)
F32 = _synth("f32", 2, ("setp", "glue"))
F32_SELECT = _synth("f32", 1, ("setp", "selp", "slct"))
F16X2 = _synth("f16x2", 1, ("setp",))
RUNS = {"s32": S32, "f32": F32, "f32 select": F32_SELECT, "f16x2": F16X2}


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
    return out


def _agree(lhs: str, rhs: str, pool, inputs: dict) -> bool:
    left, right = reference(lhs, inputs), reference(rhs, inputs)
    return all(left[o] == right[o] for o in pool.outputs)


@pytest.mark.parametrize("run", RUNS, ids=str)
def test_every_rule_holds_in_the_reference(run):
    rules = RUNS[run].rules
    assert rules
    for rule in rules:
        rng = random.Random(rule.lhs + rule.rhs)
        for _ in range(40):
            inputs = _inputs(rule.pool, rng)
            assert _agree(rule.lhs, rule.rhs, rule.pool, inputs), (rule, inputs)


@pytest.mark.parametrize("run", RUNS, ids=str)
def test_what_the_rules_imply_holds_in_the_reference(run):
    """Members of a group are equal by the kept rules, congruence, renaming and Boolean
    algebra, most of them never sent to the solver: each is checked here."""
    rng = random.Random(run)
    for pool, groups in RUNS[run].groups.items():
        for group in groups:
            for member in rng.sample(group[1:], min(3, len(group) - 1)):
                for _ in range(12):
                    inputs = _inputs(pool, rng)
                    assert _agree(member, group[0], pool, inputs), (member, group[0], inputs)


@pytest.mark.parametrize("run", RUNS, ids=str)
def test_every_near_miss_counterexample_differs_in_the_reference(run):
    for miss in RUNS[run].near_misses:
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
    found = _near_miss(F32, lhs, rhs) or _near_miss(F32, *_canonical(F32, lhs, rhs))
    assert found is not None, [(m.lhs, m.rhs) for m in F32.near_misses]
    assert found.classes["breaking"] == breaking


def _canonical(run, lhs, rhs):
    """The pair as the run names it: each side by the first member of its group."""
    first = {m: g[0] for groups in run.groups.values() for g in groups for m in g}
    return first[lhs], first[rhs]


def test_ftz_near_miss_is_about_subnormals():
    misses = [m for m in F32.near_misses if ".ftz" in m.lhs + m.rhs and
              m.lhs.replace(".ftz", "") == m.rhs.replace(".ftz", "")]
    assert misses
    for m in misses:
        assert "subnormal" in m.classes["breaking"], m


def test_selp_min_near_miss_breaks_only_on_zeros_and_nan():
    """a < b ? a : b and b > a ? a : b ... are min; written with ge they differ on -0/+0."""
    select = search.synthesize(search.Config(parse_types("f32"), 2, ("setp", "selp")),
                               Serial())
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
])
def test_held_out_identities_follow_from_the_kept_rules(run, lhs, rhs):
    assert implies(_closure(RUNS[run]), lhs, rhs)


def test_a_wrong_identity_does_not_follow():
    assert not implies(_closure(F32), "setp.lt.f32 p, a, b; not.pred p, p;",
                       "setp.ge.f32 p, a, b;")


def test_minimisation_drops_implied_rules():
    for run in RUNS.values():
        s = run.stats
        assert s.proved == len(run.rules) + s.derived
    assert S32.stats.derived > 0 and F32.stats.derived > 0


# ---- the inversion table, against IEEE comparisons in the oracle -------------------------

SAMPLE = {"f32": register_specials(TYPES["f32"]), "s32": register_specials(TYPES["s32"])}
HAND_INVERSIONS = {  # what a backend needs: !(a X b) is a Y b
    "f32": {"eq": "neu", "ne": "equ", "lt": "geu", "le": "gtu", "gt": "leu", "ge": "ltu",
            "equ": "ne", "neu": "eq", "ltu": "ge", "leu": "gt", "gtu": "le", "geu": "lt",
            "num": "nan", "nan": "num"},
    "s32": {"eq": "ne", "ne": "eq", "lt": "ge", "le": "gt", "gt": "le", "ge": "lt"},
}
INVERSIONS = table(parse_types("f32,s32"), search.Prover(Serial(), search.Stats(), 30.0))


def _oracle_holds(t: str, ftz: bool, fn) -> bool:
    return all(fn(a, b) for a in SAMPLE[t] for b in SAMPLE[t])


@pytest.mark.parametrize("row", INVERSIONS, ids=lambda r: f"{r.type}{'.ftz' * r.ftz}.{r.cmp}")
def test_inversion_table_is_ieee(row):
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
    serial = _synth("s32", 1, ("setp",))
    assert [(r.lhs, r.rhs) for r in result.rules] == [(r.lhs, r.rhs) for r in serial.rules]


def test_processes_match_serial():
    runner = executor("processes", 2)
    try:
        result = search.synthesize(search.Config(parse_types("s32"), 2, DEFAULT_FAMILIES),
                                   runner)
    finally:
        runner.close()
    assert [(r.lhs, r.rhs) for r in result.rules] == [(r.lhs, r.rhs) for r in S32.rules]


@pytest.mark.parametrize(("args", "message"), [
    (["--types", "q99"], "no setp on type 'q99'"),
    (["--types", "pred"], "no setp on type 'pred'"),
    (["--size", "0"], "--size"),
    (["--families", "setp,bogus"], "unknown family 'bogus'"),
])
def test_bad_input_is_one_line_exit_2(args, message):
    r = CliRunner().invoke(main, ["synth", *args])
    assert r.exit_code == 2
    assert message in r.output and len(r.output.strip().splitlines()) == 1
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
    assert names == {"f32", "f16x2", "s32"}
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
