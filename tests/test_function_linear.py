"""Whole-function encoding is linear and its joins are right.

Linear, checked by counting work, never by timing: the terms z3.simplify is handed while
a function is encoded, the registers compared at its joins and the distinct nodes of its
encoding all grow in proportion to the body (a path condition re-simplified whole at
every branch, or every register compared at every join, made them grow with its square).

Right, checked against tests/ptx_interp.py, a plain-Python interpreter that runs one path
of the PTX text with concrete values (no z3, no ptxsmt): generated functions with
if/else diamonds, llc's guarded selects, nested arms, early returns and stores, run by
`eval` (the encoding's terms with the inputs substituted) and by the interpreter, agree on
every input drawn.
"""

from __future__ import annotations

import pytest
import z3
from branchy import KINDS, branchy
from hypothesis import given, settings
from hypothesis import strategies as st
from ptx_interp import run
from tier import THOROUGH

from ptxsmt.function import read_function, state
from ptxsmt.function.encode import encode_function
from ptxsmt.function.evaluate import evaluate_function
from ptxsmt.function.state import Registers, conjoin, disjoin, negate
from ptxsmt.smt.queries import functions

M32 = 0xFFFFFFFF
WORD = st.one_of(st.sampled_from([0, 1, 2, 7, M32, 0x80000000, 0x7FFFFFFF]),
                 st.integers(0, M32))
OUT = 0x1000  # where f_o points


# ---- right: eval of the encoding against the one-path interpreter ------------------------

@pytest.mark.parametrize("fold", [state.FOLD, 0], ids=["", "folding"])
@pytest.mark.parametrize("size", [60, 150] + ([600] if THOROUGH else []))
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3 if THOROUGH else 2))
@settings(max_examples=6 if not THOROUGH else 60, deadline=None)
@given(a=WORD, b=WORD, c=WORD)
def test_eval_of_generated_branchy_functions_matches_the_interpreter(kind, seed, size, fold,
                                                                    a, b, c):
    """`folding`: the registers' writes folded into a new base at nearly every write, so
    that joins find what differs through the folds (`state.Registers.differing`)."""
    text = branchy(size, kind, seed)
    params = {"f_a": a, "f_b": b, "f_c": c, "f_o": OUT}
    returns, memory = run(text, "f", params, {}, {})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state, "FOLD", fold)
        ev = evaluate_function(read_function(text, "f"), params)
    assert ev.returns == returns
    stored = {loc.address + k: (v >> 8 * k) & 0xFF
              for loc, v in ev.stores.items() for k in range(loc.type.width // 8)}
    assert stored == memory


# ---- equiv on the new encoding, with and without the final simplification -------------

@pytest.mark.parametrize("steps", [functions.SIMPLIFY_STEPS, 1], ids=["", "unsimplified"])
@pytest.mark.parametrize("kind", KINDS)
def test_equiv_of_a_respelled_function_and_of_a_mutant(kind, steps, monkeypatch):
    """The same function spelled otherwise is equivalent; one that adds 1 to what it
    returns differs, with a counterexample the interpreter confirms. `unsimplified`: the
    query went to the solver as built (z3.simplify ran past its steps)."""
    monkeypatch.setattr(functions, "SIMPLIFY_STEPS", steps)
    text = branchy(40, kind, 4)
    fn = read_function(text, "f")
    same = functions.check_function_equivalence(fn, read_function(branchy(40, kind, 4, True), "f"))
    assert same.verdict == "equivalent", same.reason
    at = text.rindex("st.param.b32 [func_retval0], ")
    returned = text[at:].split(", ")[1].split(";")[0]
    mutant = f"{text[:at]}add.s32 {returned}, {returned}, 1;\n\t{text[at:]}"
    v = functions.check_function_equivalence(fn, read_function(mutant, "f"))
    assert v.verdict == "different", v.reason
    params = {**{k: v.counterexample.inputs[k] for k in ("f_a", "f_b", "f_c")}, "f_o": OUT}
    assert run(text, "f", params, {}, {}) != run(mutant, "f", params, {}, {})


# ---- linear: the work of encoding, counted --------------------------------------------

def _dag_size(terms) -> int:
    seen, todo = set(), list(terms)
    while todo:
        t = todo.pop()
        if t.get_id() not in seen:
            seen.add(t.get_id())
            todo.extend(t.children())
    return len(seen)


def _nodes_handed_to_simplify(monkeypatch, text: str) -> tuple[int, int]:
    """(distinct nodes of every term z3.simplify got while `text` was encoded, summed
    over calls; distinct nodes of the encoding: reached, returns, final memory)."""
    handed = [0]
    original = z3.simplify

    def counted(term, *args, **kwargs):
        handed[0] += _dag_size([term])
        return original(term, *args, **kwargs)

    monkeypatch.setattr(z3, "simplify", counted)
    enc = encode_function(read_function(text, "f"))
    monkeypatch.setattr(z3, "simplify", original)
    size = _dag_size([enc.reached, *enc.returns.values(), *enc.final.values()])
    return handed[0], size


@pytest.mark.parametrize("kind", KINDS)
def test_encoding_simplifies_and_builds_in_proportion_to_the_body(monkeypatch, kind):
    n = 2000
    small = _nodes_handed_to_simplify(monkeypatch, branchy(n // 2, kind, 1))
    large = _nodes_handed_to_simplify(monkeypatch, branchy(n, kind, 1))
    handed, size = large
    assert handed <= 10 * n  # the old encoding: 10^6 and more at 2,000 instructions
    assert size <= 10 * n
    # and twice the body is about twice the work (not four times)
    assert handed <= 3 * small[0] + 100 and size <= 3 * small[1] + 100


def test_a_join_compares_only_the_registers_written_since_its_paths_forked(monkeypatch):
    """A chain of llc's guarded selects over ever more live registers: each join merges
    the one register its arm wrote, not all of them."""
    compared = [0]
    original = state._merged

    def counted(sides, default=None, keys=None):
        out = original(sides, default, keys)
        compared[0] += len(out)
        return out

    monkeypatch.setattr(state, "_merged", counted)
    n = 2000
    encode_function(read_function(branchy(n, "triangle", 2), "f"))
    assert compared[0] <= 2 * n  # every register at every join: ~n^2/8


# ---- the pieces: local simplification and the persistent registers --------------------

BOOLS = [z3.Bool(f"b{i}") for i in range(4)]


@st.composite
def histories(draw):
    """The lives of paths after random forks (`State.when`) and joins (`disjoin`)."""
    paths = [z3.BoolVal(True)]
    for _ in range(draw(st.integers(1, 12))):
        i = draw(st.integers(0, len(paths) - 1))
        if draw(st.booleans()) and len(paths) > 1:
            j = draw(st.integers(0, len(paths) - 1))
            if i != j:
                joined = disjoin([paths[i], paths[j]])
                paths = [p for k, p in enumerate(paths) if k not in (i, j)] + [joined]
                continue
        c = draw(st.sampled_from(BOOLS))
        c = negate(c) if draw(st.booleans()) else c
        live = paths.pop(i)
        paths += [conjoin(live, c), conjoin(live, negate(c))]
    return paths


@settings(max_examples=200, deadline=None)
@given(paths=histories(), data=st.data())
def test_disjoin_is_or_and_conjoin_is_and(paths, data):
    chosen = data.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=len(paths)))
    extra = data.draw(st.sampled_from([z3.BoolVal(False), z3.BoolVal(True), *BOOLS]))
    solver = z3.Solver()
    solver.add(z3.Or(disjoin(chosen) != z3.Or(chosen),
                     disjoin([*chosen, extra]) != z3.Or(*chosen, extra),
                     conjoin(chosen[0], extra) != z3.And(chosen[0], extra)))
    assert solver.check() == z3.unsat


def test_both_sides_of_a_branch_meet_as_the_path_they_left():
    live = z3.And(BOOLS[0], BOOLS[1])
    taken, fallen = conjoin(live, z3.Not(BOOLS[2])), conjoin(live, BOOLS[2])
    assert disjoin([taken, fallen]).eq(live)
    assert disjoin([conjoin(taken, BOOLS[3]), fallen, conjoin(taken, z3.Not(BOOLS[3]))]).eq(live)
    assert disjoin([live, taken]).eq(live)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.dictionaries(
    st.sampled_from("abcdefgh"), st.integers(0, 3), max_size=4)), max_size=60))
def test_registers_are_a_persistent_map(steps):
    """Each version reads as the dict it models (writes on older versions included), and
    the registers two versions hold differently are among `differing`."""
    terms = [z3.BitVecVal(v, 8) for v in range(4)]
    versions = [(Registers({"a": terms[0]}), {"a": terms[0]})]
    for which, writes in steps:
        regs, model = versions[which % len(versions)]
        values = {k: terms[v] for k, v in writes.items()}
        versions.append((regs.set(values), {**model, **values}))
    for regs, model in versions:
        assert dict(regs) == model and len(regs) == len(model)
        assert all(k in regs for k in model) and "z" not in regs
    for regs, model in versions[-6:]:
        for other, other_model in versions[-6:]:
            differ = {k for k in {*model, *other_model} if model.get(k) is not other_model.get(k)}
            assert differ <= set(regs.differing(other))
