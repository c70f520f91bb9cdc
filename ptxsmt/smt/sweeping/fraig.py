"""Equivalence sweeping (SAT sweeping, "fraiging", as in ABC's `cec`): before the
whole "do the two functions differ" query, find the internal values the two sides
share and merge them, so that the last query is small.

1. Simulate every node of the query's DAG on a few hundred inputs (special values, then
   random; `simulate.py` interprets the very terms).
2. Walk the nodes children first. A node whose values match a node seen before (or a
   constant) is a candidate: with its children already replaced by their merged
   representatives, ask the solver, under a small time limit, whether the two can
   differ. Unsat: the node is replaced by the representative everywhere above it.
   Sat: the model becomes one more simulation input, so the pair is never guessed
   again. Unknown: the node stays as it is.
3. The query is rebuilt over the representatives.

Every merge is an unconditional equality, so the rebuilt query is equivalent to the
original one in every model: "equivalent" still comes only from an unsat of the (whole,
rebuilt) query, and a model of it is a model of the original. Each merge carries its
justification: a solver's unsat, the same term (hash-consing), a rewrite of
`rewrite.normal` (each rule proved in tests/test_rewrite.py), or one of the rules of
JUSTIFICATIONS, whose tables tests/test_sweep_rules.py proves row by row. The merges of
those rules are kept (`SweepStats.justified`): a verdict lists them, and `--certify`
asks a solver for each one again (`certify`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache

import z3

from ...sem.sorts import ieee_result
from ..solving import budget as budgets
from ..solving.budget import Budget, Effort, stepped
from ..solving.portfolio import IN_F32, solve_here, unavailable
from .division import divisions
from .ieee_classes import FALSE, TRUE, Classes
from .order import structural
from .rewrite import is_value, normal
from .simulate import Node, as_key, cost, edge_vectors, evaluate_node, input_vectors, read_node
from .truth import Table, Tables, shallow_table

SIMULATIONS = 128  # input vectors to start with
# Before the proofs, up to EDGE_VECTORS more (`simulate.edge_vectors`) are simulated for
# a difference alone (not kept), in batches of EDGE_BATCH, while their cost stays within
# EDGE_WORK (`simulate.cost`, bit-vector operations: a fifth of a CPU second; an integer
# DAG gets what it got when this counted nodes, a float DAG less: counted in nodes, a
# bf16 DAG's search took tens of seconds, and on the float pairs it found no difference
# the first vectors did not, docs/scale.md)
EDGE_VECTORS, EDGE_BATCH, EDGE_WORK = 2048, 256, 4_000_000
QUERY_SECONDS = 1.0  # the limit of one candidate's proof (CPU seconds, as every limit here)
# a class constant in simulation gets 1/CONSTANT_SHARE of that (`_Sweep._sweep`); a
# DAG holding a format the fast solver reads only within f32 (bf16, `bf16_in_f32`: larger
# queries) 1/TRANSLATED_SHARE (at an eighth, 6 of 9 such proofs left undecided on a
# bf16 pair were unsat at 0.15 to 0.34 s)
CONSTANT_SHARE, TRANSLATED_SHARE = 8, 2
# A pair only one function reads is asked whole where its terms hold at most this many
# nodes (`_Sweep._one_side`): larger, bitwuzla's preprocessing alone takes most of a second
ONE_SIDE_CONE = 500
# A pair whose terms differ in more nodes than this (those only one of them holds) gets
# an eighth of the time: the proofs found whole differ in a few operations over operands
# both share; pairs further apart are mostly guesses simulation has not split yet
APART = 64
TRIES = 3  # members of its class a node is asked against
PHIS = 16  # members of its class a node is read against as a phi's arms
# the conditions of selects a candidate pair is read under, nearest first, before its
# whole query (`_Sweep._split_meets`)
SPLITS = 8
GIVEN_TERMS = 64  # terms rebuilt to read a node with a condition fixed (`_Sweep._given`)
GIVEN_DEPTH = 12  # levels below a node read for the condition (`_Sweep._given_as_built`)
CUT_DEPTHS = (2, 5)  # a candidate's proof first sees only this many levels of its terms
# Queries of fewer nodes go to the solver whole: they are decided faster than swept,
# unless they multiply or divide two values (bit-blasting those is what sweeping avoids:
# mixed-50-llvm22-0, 96 nodes with 22 such products, whole unknown at 28 CPU s, swept
# equivalent in 0.2 s)
SMALL = 100
# The share of a query's time limit that sweeping may take (the whole query gets the rest)
SWEEP_SHARE = 0.75
# A sweep that walked every node within its share and left pairs undecided sweeps its
# result again in the rest of the share, each candidate's proof this many times longer
# (at most twice: with no limit, the passes would not end)
AGAIN = 4
# A query's solver spends about a millisecond (bitwuzla, one core) on each hard
# operation it holds (`_hard`: a float operation, a multiplier of two values) before
# its limit can stop it: a query of more than HARD_PER_SECOND of them a second of its
# limit is not asked (at a thousand half operations, whole queries of 400 at a limit of
# 0.06 s took 0.6 s each, a second of the sweep in 60; at 500, float-300-llvm22-1 lost
# the proofs its outputs' merge needs)
HARD_PER_SECOND = 1000
# The walk's pace: PACE of the sweep's budget, spread evenly over the nodes; where the
# walk falls behind, a candidate's proof gets less than QUERY_SECONDS (at least FLOOR
# of it), so that a large query's walk reaches its outputs (at a thousand operations,
# undecided proofs at a second each spent the share two thirds of the way up) and
# leaves time to sweep again (`AGAIN`)
PACE, FLOOR = 0.5, 1 / 16
# The walk's own work, charged to its pace beside the proofs' (`budget.Work`): each
# refuted candidate's model simulated again over the whole DAG (`_add_vector`), about
# 10 us a node (5 to 14 over the case sweeps of two held-out fsel pairs, the rest of
# their CPU seconds that the proofs' work does not account for)
RESIMULATED_NODE_SECONDS = 1e-5

# Operators whose operands may be put in any order (SMT-LIB's meaning: fp.add and fp.mul
# have one NaN, so they commute exactly; fp.min and fp.max do not, on zeros of two signs)
COMMUTATIVE = {z3.Z3_OP_BADD, z3.Z3_OP_BMUL, z3.Z3_OP_BAND, z3.Z3_OP_BOR, z3.Z3_OP_BXOR,
               z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_XOR, z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT,
               z3.Z3_OP_FPA_EQ}
COMMUTATIVE_AFTER_ROUNDING = {z3.Z3_OP_FPA_ADD, z3.Z3_OP_FPA_MUL}
_HARD = {z3.Z3_OP_BMUL, z3.Z3_OP_BUDIV, z3.Z3_OP_BUREM, z3.Z3_OP_BSDIV, z3.Z3_OP_BSREM,
         z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM_I, z3.Z3_OP_BSDIV_I, z3.Z3_OP_BSREM_I}


Sides = tuple[Sequence[z3.ExprRef], Sequence[z3.ExprRef]]


@dataclass
class SweepStats:
    nodes: int = 0
    simulated: int = 0
    proved: int = 0  # merged by a proof
    structural: int = 0  # merged because the rebuilt node was the representative
    refuted: int = 0
    undecided: int = 0
    seconds: float = 0.0
    # the inputs of a simulated vector on which every root is true, with their values,
    # and the free functions' applications there (for "the functions differ": a likely
    # counterexample; the sweep is then skipped,
    # or stopped where a refuted candidate's model was one)
    witness: list[tuple[z3.ExprRef, z3.ExprRef]] = field(default_factory=list)
    # the merges that rest on a rule, not on a solver: (rule, the two terms made equal)
    justified: list[tuple[str, z3.ExprRef, z3.ExprRef]] = field(default_factory=list)
    # (node, its representative) for each node merged, in the order merged; a node is its
    # position in the walk of the query's DAG from the roots: the same query, the same
    # numbers in every run (`order.py`); a sweep again (`AGAIN`) numbers its own DAG
    merges: list[tuple[int, int]] = field(default_factory=list)
    # every node walked before the deadline, and the two sides' outputs as swept (the
    # sides of a sweep again)
    done: bool = False
    sides: Sides | None = None

    def apart(self) -> bool:
        """Some output of one side is still another term than the other side's (or the
        sides are not known)."""
        return self.sides is None or len(self.sides[0]) != len(self.sides[1]) or \
            any(not a.eq(b) for a, b in zip(*self.sides, strict=True))

    def then(self, again: SweepStats) -> SweepStats:
        """These stats followed by those of a sweep of their result (`AGAIN`)."""
        return SweepStats(self.nodes, self.simulated, self.proved + again.proved,
                          self.structural + again.structural, self.refuted + again.refuted,
                          again.undecided, self.seconds + again.seconds, again.witness,
                          self.justified + again.justified, self.merges + again.merges,
                          again.done, again.sides)


# The rules a merge may rest on besides a solver's unsat and the same term: each asserts
# that two terms are equal on every input
JUSTIFICATIONS = {
    "class rule": "IEEE value classes (ieee_classes.py): a condition decided by the classes "
                  "of the values it tests",
    "truth table": "one truth table over the float tests a condition asks (truth.py), or "
                   "its negation, or a constant",
    "phi cases": "a select equals a node that is its arms where its condition is fixed "
                 "true and false; two nodes are equal that are one term where a condition "
                 "is fixed true and one where it is fixed false",
    "float bits": "a float read back from the bits its to_bits wrote (sorts.ieee_result)",
}


@dataclass
class _Dag:
    """The query's DAG as a table, each node read from Z3 once, children first."""

    terms: list[z3.ExprRef] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    kids: list[tuple[int, ...]] = field(default_factory=list)
    index: dict[int, int] = field(default_factory=dict)  # AST id -> position

    def add_roots(self, roots: Sequence[z3.ExprRef]) -> list[int]:
        stack = [(r, None) for r in reversed(roots)]
        while stack:
            n, children = stack.pop()
            if children is None:
                if n.get_id() in self.index:
                    continue
                children = n.children() if z3.is_app(n) else []
                stack.append((n, children))
                stack.extend((c, None) for c in reversed(children))
                continue
            i = n.get_id()
            if i in self.index:
                continue
            self.index[i] = len(self.terms)
            self.terms.append(n)
            self.nodes.append(read_node(n, children))
            self.kids.append(tuple(self.index[c.get_id()] for c in children))
        return [self.index[r.get_id()] for r in roots]


def sweep_if_large(roots: list[z3.ExprRef], inputs: list[z3.ExprRef],
                   timeout: Budget | float | None, sides: Sides | None = None,
                   until_witness: bool = True) -> tuple[list[z3.ExprRef], SweepStats]:
    """`roots` swept (`sweep`) when their DAG has SMALL nodes or more or a product or
    quotient of two values (`_bit_blast_hard`), within
    SWEEP_SHARE of what is left of `timeout` (None: no limit), and the sweep's
    `SweepStats` (its witness, its merges by rule); `sides`, `until_witness`: as `sweep`
    takes them."""
    whole = Budget.of(timeout)
    left = whole.left()
    share = whole.part(None if left is None else SWEEP_SHARE * left)
    dag = _Dag()
    dag.add_roots(roots)  # seconds of the share, for a DAG of ten thousand nodes or more
    if len(dag.terms) < SMALL and not _bit_blast_hard(dag):
        return roots, SweepStats(nodes=len(dag.terms))
    try:
        swept, stats = sweep(roots, inputs, share, dag=dag, sides=sides,
                             until_witness=until_witness)
    except (z3.Z3Exception, ValueError, ArithmeticError, RecursionError):
        # a term sweeping cannot rebuild: the query as it is (still sound)
        return roots, SweepStats(nodes=len(dag.terms))
    return _again(swept, inputs, stats, share)


def _again(roots: list[z3.ExprRef], inputs: list[z3.ExprRef], stats: SweepStats,
           share: Budget) -> tuple[list[z3.ExprRef], SweepStats]:
    """A sweep that walked every node within its `share`, left pairs undecided and the
    outputs apart, swept again, over its result, in the share left, each candidate's
    proof AGAIN times longer (then once more, AGAIN times longer again, where that
    holds too). The last query
    would get that time otherwise: the same undecided pairs, asked all at once and
    under everything above them. Each pass merges only by proof or rule, so the result
    is still equal to the first roots."""
    for seconds in (QUERY_SECONDS * AGAIN, QUERY_SECONDS * AGAIN ** 2):
        left = _counted_left(share, stats)
        if not (stats.done and stats.undecided and stats.apart()) or stats.witness \
                or share.expired() or left is not None and left < seconds:
            break
        try:
            # a budget of its own: its walk is paced (PACE) from its start
            roots, again = sweep(roots, inputs, share.part(None), seconds, sides=stats.sides)
        except (z3.Z3Exception, ValueError, ArithmeticError, RecursionError):
            break  # as sweep_if_large: the result so far stands
        stats = stats.then(again)
    return roots, stats


def _counted_left(share: Budget, stats: SweepStats) -> float | None:
    """The seconds of `share` less the work its passes did as counted (the proofs'
    `budget.Work`, the models simulated again), as the pace reads it: whether to sweep
    again is then the same in every run (by the CPU seconds left, a loaded run of
    heldout3's fsel-llc14-3002 left a case's sweep again out that an idle one made)."""
    if share.seconds is None:
        return None
    resimulated = RESIMULATED_NODE_SECONDS * stats.refuted * stats.nodes
    return share.seconds - share.worked - resimulated


def sweep(roots: list[z3.ExprRef], inputs: list[z3.ExprRef], seconds: Budget | float | None,
          query_seconds: float = QUERY_SECONDS,
          dag: _Dag | None = None, sides: Sides | None = None,
          until_witness: bool = False) -> tuple[list[z3.ExprRef], SweepStats]:
    """`roots` with every internal value proved equal to an earlier one replaced by it,
    within `seconds` of CPU time (or a `Budget`; past them, the nodes not yet walked
    keep their spelling, over the merged ones). `sides`: the two functions' outputs
    (subterms of `roots`); a node that only one of them reads is asked only against a
    node the other reads.
    `until_witness`: where the simulation (or `edge_vectors`) makes every root true,
    `roots` as they are and that witness (`SweepStats`): the query holds there, and no
    merge would help; so too where a refuted candidate's model does, midway."""
    start, budget = time.perf_counter(), Budget.of(seconds)
    if dag is None:
        dag = _Dag()
    top = dag.add_roots(roots)
    sweeper = _Sweep(dag, inputs, budget, query_seconds)
    if until_witness:
        sweeper.read_at = [c for c in inputs if c.get_id() in dag.index]
        if witness := sweeper.edge_witness(top) or sweeper.witness(top):
            return roots, SweepStats(nodes=len(dag.terms), witness=witness)
    if sides is not None:
        sweeper.side = _sides(dag, sides)
        sweeper.outputs = [[dag.index[t.get_id()] for t in side if t.get_id() in dag.index]
                           for side in sides]
    with budget.spending():  # a candidate's proof ends at the sweep's wall cap at the latest
        return sweeper.run(top, start)


class _Sweep:
    def __init__(self, dag: _Dag, inputs: list[z3.ExprRef], budget: Budget,
                 query_seconds: float):
        self.dag, self.budget, self.query_seconds = dag, budget, query_seconds
        nodes = dag.nodes
        given = {dag.index[c.get_id()] for c in inputs if c.get_id() in dag.index}
        # every free constant is an input of the simulation (an opaque result too)
        self.inputs = [i for i, n in enumerate(nodes)
                       if n.leaf and n.kind == z3.Z3_OP_UNINTERPRETED]
        self.free = _free(dag, given)
        vectors = input_vectors([nodes[i].sort for i in self.inputs], SIMULATIONS)
        self.given: dict[int, list | None] = dict(zip(self.inputs, vectors, strict=True))
        self.values: list[list | None] = []
        for i in range(len(nodes)):
            self.values.append(self._evaluate(i, self.values, self.given, SIMULATIONS))
        self.rep: list[int] = list(range(len(nodes)))  # each node's representative
        self.constant_share = TRANSLATED_SHARE if any(
            n.sort.kind == "fp" and n.sort.fmt == IN_F32 for n in nodes) else CONSTANT_SHARE
        self.divisions = divisions(dag.terms, nodes, dag.kids)  # magic multiplies, read
        self.classes_of = Classes(nodes, dag.kids, self.rep)
        self.term: list[z3.ExprRef] = list(dag.terms)  # each node's rebuilt term
        self.classes: dict[tuple, list[int]] = {}  # simulation values -> the nodes
        # node -> its class key (`_key`): a float's values read as bits once, not at
        # each look-up; extended, not made anew, by a vector more (`_add_vector`)
        self.keys: dict[int, tuple] = {}
        # the node each term stands for (AST id; the terms kept alive, so that no id is
        # reused), and each node's children as its rebuilt term has them (`_term_kids`)
        self.node_of: dict[int, int] = dict(dag.index)
        self.alive: list[z3.ExprRef] = []
        self.term_kids: dict[int, tuple[z3.ExprRef, list[int]]] = {}
        self.kinds: dict[int, tuple[z3.ExprRef, int | None]] = {}  # `_kind`
        self.walked: list[int] = []
        # conditions proved constant, kept as facts about their operands (`_facts_over`)
        self.facts: list[tuple[z3.BoolRef, frozenset[int]]] = []
        self.facts_of: dict[int, list[int]] = {}  # node -> the facts over it
        self.side: list[int] = []  # per node: 1 read by one side's outputs, 2 the other's
        self.outputs: list[list[int]] = []  # the nodes of each side's outputs
        self.tables = Tables()
        self.by_table: dict[Table, int] = {}  # a condition's function -> its first node
        self.by_shallow: dict[Table, int] = {}  # the same over walked conditions
        self.nan_reps: set[int] = set()  # the representatives of NaN tests
        self.undecided: set[tuple[int, int]] = set()  # pairs whose proof was not decided
        self.top: set[int] = set()  # the roots: their question is the whole query's
        # the inputs a witness is read at (`sweep`'s until_witness; [] none is looked
        # for), and one found at a refuted candidate's model (`_add_vector`)
        self.read_at: list[z3.ExprRef] = []
        self.differs: list[tuple[z3.ExprRef, z3.ExprRef]] = []
        self.justified: list[tuple[str, z3.ExprRef, z3.ExprRef]] = []  # `SweepStats`

    def _evaluate(self, i: int, values: list, given: dict, count: int,
                  open_zero: bool = False) -> list | None:
        args = [values[j] for j in self.dag.kids[i]]
        if any(a is None for a in args):
            return None
        try:
            return evaluate_node(self.dag.nodes[i], args, given.get(i), count, open_zero)
        except (ValueError, ArithmeticError, OverflowError):
            return None

    def witness(self, top: list[int], values: list[list | None] | None = None
                ) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """The inputs (`read_at`: bit-vectors and Booleans) of the first vector on
        which every root of `top` is true in `values` (each node's; the simulation's
        by default), each with its value; [] where there is none."""
        values = self.values if values is None else values
        rows = [values[t] for t in top]
        if not rows or any(v is None for v in rows):
            return []
        k = next((k for k in range(len(rows[0])) if all(v[k] for v in rows)), None)
        if k is None:
            return []
        out = []
        # the inputs, then each free function's application as the vector took it (a
        # NaN the ISA leaves open: the choice that made the difference, which a solver
        # otherwise searches for; mixed-100-llvm22-0-planted, 10 s to no model)
        opened = [self.dag.terms[i] for i, n in enumerate(self.dag.nodes)
                  if n.kind == z3.Z3_OP_UNINTERPRETED and not n.leaf]
        for c in (*self.read_at, *opened):
            v = values[self.dag.index[c.get_id()]]
            if v is not None and z3.is_bool(c):
                out.append((c, z3.BoolVal(bool(v[k]))))
            elif v is not None and z3.is_bv(c):
                out.append((c, z3.BitVecVal(v[k], c.size())))
        return out

    def edge_witness(self, top: list[int]) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """`differs_at` the simulation's vectors, then at `edge_vectors` (in batches,
        none kept): where only a NaN, an infinity or an overflow inside tells the two
        functions apart, the simulation's vectors, whose NaN inputs reach every output
        alike, rarely show it."""
        if found := self.differs_at(top, self.given, SIMULATIONS):
            return found
        count = min(EDGE_VECTORS, EDGE_WORK // max(1, sum(map(cost, self.dag.nodes))))
        sorts = [self.dag.nodes[i].sort for i in self.inputs]
        for seed in range(1, 1 + count // EDGE_BATCH):
            if self.budget.expired():
                break
            vectors = edge_vectors(sorts, EDGE_BATCH, seed)
            if found := self.differs_at(top, dict(zip(self.inputs, vectors, strict=True)),
                                        EDGE_BATCH):
                return found
        return []

    def differs_at(self, top: list[int], given: dict[int, list | None], count: int
                   ) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """`witness` among `count` input vectors (`given`: each input's values), the
        open values all zero (`simulate.evaluate_node`'s open_zero): a difference that
        a NaN's bits alone make (the simulation's choice of them) is no witness, where
        it would hide the one that is."""
        values: list[list | None] = []
        for i in range(len(self.dag.nodes)):
            values.append(self._evaluate(i, values, given, count, open_zero=True))
        return self.witness(top, values)

    def run(self, top: list[int], start: float) -> tuple[list[z3.ExprRef], SweepStats]:
        stats = SweepStats(nodes=len(self.term),
                           simulated=sum(v is not None for v in self.values),
                           justified=self.justified)
        self.top = set(top)
        for i, n in enumerate(self.dag.nodes):
            if self.differs:
                stats.seconds, stats.witness = time.perf_counter() - start, self.differs
                return [self.dag.terms[t] for t in top], stats
            if self.budget.expired():
                stats.seconds = time.perf_counter() - start
                return self._over_representatives(top, i), stats
            self._rebuild(i)
            nan_test = z3.is_app_of(self.term[i], z3.Z3_OP_FPA_IS_NAN)
            self._walk(i, n, stats)
            if nan_test:
                self.nan_reps.add(self.rep[i])
            if self.rep[i] != i:
                stats.merges.append((i, self.rep[i]))
        stats.seconds = time.perf_counter() - start
        stats.done = True
        if self.outputs:
            stats.sides = tuple([self.term[j] for j in side] for side in self.outputs)
        return [self.term[i] for i in top], stats

    def _walk(self, i: int, n: Node, stats: SweepStats) -> None:
        """Node i, rebuilt: merged by its term or its function, else asked."""
        if self._same_term_as_earlier(i) or self._same_function_as_earlier(i):
            stats.structural += 1
            return
        v = self.values[i]
        if v is None or n.sort.kind not in ("bv", "bool", "fp") or n.leaf:
            return
        if (i in self.free and len(set(v)) == 1) or self._ieee_bits(i):
            return  # constant where a free value was simulated: rarely so for all;
            # or a float's bits unguarded (a NaN's, free in the SMT-LIB text, smt2.py)
        if i in self.divisions.hidden:
            return  # a step of a division read back: no term above reads it
        self._sweep(i, stats)

    def _left(self) -> float:
        """CPU seconds left to the sweep (`budget.py`: the load does not change them)."""
        left = self.budget.left()
        return float("inf") if left is None else left

    def _paced(self, i: int) -> float:
        """The limit of a candidate's proof at node i: `query_seconds`, less in the
        measure the walk is behind its pace (PACE of the budget spread evenly over the
        nodes): the walk's seconds left a node not yet walked, against that. The
        seconds walked are the proofs' work as counted (`budget.Work`) and the models
        simulated again (RESIMULATED_NODE_SECONDS), not the CPU clock's, and the budget
        and the limit are rounded to a step (`budget.stepped`), so that the limits, and
        the proofs that a limit too small for them skips (`_too_hard`), are the same in
        every run, at any load."""
        if self.budget.seconds is None:
            return self.query_seconds
        walk, nodes = PACE * stepped(self.budget.seconds), len(self.dag.nodes)
        worked = self.budget.worked + RESIMULATED_NODE_SECONDS * self._refuted() * nodes
        pace = (walk - worked) / (nodes - i) / (walk / nodes) if walk > 0 else 0
        return stepped(self.query_seconds * min(1.0, max(FLOOR, pace)))

    def _refuted(self) -> int:
        """The models of refuted candidates simulated so far: the vectors past the first
        SIMULATIONS (each node simulated holds a value of each; a node of a sort not
        simulated, none)."""
        simulated = next((v for v in self.values if v is not None), None)
        return 0 if simulated is None else len(simulated) - SIMULATIONS

    def _over_representatives(self, top: list[int], walked: int) -> list[z3.ExprRef]:
        """The roots with each of the first `walked` nodes written as the sweep wrote it
        (over its representatives): the nodes above keep their spelling. One
        `z3.substitute`, in C (it replaces the outermost match): rebuilding the rest
        through the Python API took tens of seconds past the deadline at a thousand
        float operations."""
        pairs = [(self.dag.terms[j], self.term[j]) for j in range(walked)
                 if not self.term[j].eq(self.dag.terms[j])]
        roots = [self.dag.terms[i] for i in top]
        return [z3.substitute(r, *pairs) for r in roots] if pairs else roots

    def _sweep(self, i: int, stats: SweepStats) -> None:
        """Node i asked against the members of its class (those the other function
        reads first): proved equal to one, i is merged into it. A refuted pair's model
        is one more simulation input, and i's class is looked up again (up to TRIES
        members in all); a node not merged joins its class, so that a node equal to it
        and not to the first member still meets it."""
        n, tried = self.dag.nodes[i], set()
        likeness: dict[int, tuple] = {}  # per member, read once: a class may hold thousands
        if self._meets_a_phi(i, stats):
            return
        if self._proved_constant(i, stats):
            if not self._same_term_as_earlier(i):  # no node has the constant: i leads
                self.walked.append(i)
                self._join_class(i)
            return
        while len(tried) < TRIES:
            members = self.classes.get(self._key(i), [])
            if not members or _constant(self.term[i]) and not _constant(self.term[members[0]]):
                break  # a constant is its class's plainest member: the others are asked
                # against it, not against a term that only simulates as one
            r = min((m for m in members if m not in tried), default=None,
                    key=lambda m: likeness.get(m) or likeness.setdefault(m, self._likeness(i, m)))
            left = self._left()
            if r is None or left <= 0 or self._one_side(i, r) and n.sort.kind != "bv":
                break
            tried.add(r)
            if self._above_undecided(i, r):
                self.undecided.add((i, r))
                stats.undecided += 1
                break
            # a class that simulates as a constant is mostly conditions that are false
            # on the inputs tried but not on all (found in seconds, if at all): asked briefly
            v = self.values[i]
            seconds = self._paced(i) / (self.constant_share if len(set(v)) == 1 else 1)
            result, vector = self._prove_equal(i, r, min(seconds, left))
            if result == "unsat":
                self._keep_fact(i, r)
                self.rep[i], self.term[i] = r, self.term[r]
                stats.proved += 1
                return
            if result != "sat":  # a member more is asked only after a refutation:
                self.undecided.add((i, r))  # undecided against one, it mostly is
                stats.undecided += 1  # against all
                break
            stats.refuted += 1
            self._add_vector(vector)
        self.walked.append(i)
        self._join_class(i)

    def _proved_constant(self, i: int, stats: SweepStats) -> bool:
        """Node i (not a root) is constant on every simulated input, and no constant
        leads its class (none is a node): it is asked against that constant, briefly
        (as a class constant is). Proved, its term is the constant, which folds the
        terms above it (llc's guard `(x & 31) <u 32` of a shift by a masked register)
        and leads the class. Refuted, the model is one more simulation input."""
        v, sort = self.values[i], self.dag.nodes[i].sort
        members = self.classes.get(self._key(i), [])
        if len(set(v)) != 1 or sort.kind not in ("bool", "bv") or _constant(self.term[i]) \
                or i in self.top or members and _constant(self.term[members[0]]):
            return False
        value = z3.BoolVal(bool(v[0])) if sort.kind == "bool" else z3.BitVecVal(v[0], sort.width)
        below = self._below(i, i)
        query = _assuming(self.term[i] != value, self._facts_over(below))
        seconds = min(self._paced(i) / self.constant_share, self._left())
        if seconds <= 0 or self._too_hard(below, seconds):
            return False
        result, vector = _check(self._standard(query, [j for j in below if self._is_ieee(j)]),
                                seconds, self._names(), self._left())
        if result == "sat":
            stats.refuted += 1
            self._add_vector(vector)
        if result != "unsat":
            return False
        stats.proved += 1
        self._set_term(i, value)
        return True

    def _meets_a_phi(self, i: int, stats: SweepStats) -> bool:
        """Node i merged with the first select (or -O0 phi) of its class whose arms
        it meets (`_cases_meet`), asked before any query: the member most like i is
        often the phi's arm, whose query ends undecided and ends the asking."""
        for m in self.classes.get(self._key(i), [])[:PHIS]:
            if self._cases_meet(m, i) or self._cases_meet(i, m):
                self._justify("phi cases", i, self.term[m])
                self._keep_fact(i, m)
                self.rep[i], self.term[i] = m, self.term[m]
                stats.proved += 1
                return True
        return False

    def _likeness(self, i: int, m: int) -> tuple[bool, bool, int]:
        """Where member m comes among node i's candidates: the other function's first,
        then those of i's operator, then those sharing the most operands with i (a
        compiler's value and its counterpart mostly differ in one place; a class of
        conditions holds many that only simulate alike)."""
        shared = set(self._term_kids(self.rep[i])).intersection(self._term_kids(m))
        return self._one_side(i, m), self._kind(m) != self._kind(i), -len(shared)

    def _kind(self, j: int) -> int | None:
        """The operator of node j's term as rebuilt, read from z3 once a term."""
        t = self.term[j]
        cached = self.kinds.get(j)
        if cached is not None and cached[0] is t:  # `is`: no call into z3
            return cached[1]
        kind = t.decl().kind() if z3.is_app(t) else None
        self.kinds[j] = (t, kind)
        return kind

    def _above_undecided(self, i: int, r: int) -> bool:
        """Nodes i and r read two nodes whose pair was left undecided: theirs holds
        that question and more, undecided too (a chain of them cost a second each)."""
        return any((a, b) in self.undecided or (b, a) in self.undecided
                   for a in self._term_kids(i) for b in self._term_kids(r))

    def _key(self, i: int) -> tuple:
        key = self.keys.get(i)
        if key is None:
            sort = self.dag.nodes[i].sort
            key = self.keys[i] = (sort, as_key(self.values[i], sort))
        return key

    def _join_class(self, i: int) -> None:
        members = self.classes.setdefault(self._key(i), [])
        if members and _constant(self.term[i]) and not _constant(self.term[members[0]]):
            members.insert(0, i)
        else:
            members.append(i)

    def _one_side(self, i: int, r: int) -> bool:
        """Nodes i and r are read by one function only, the same. Asked only where they
        are bit-vectors: -O0 computes an integer twice where -O2 computes it once, and
        merged, the terms above meet the other function's. Its conditions and floats
        agree with each other on the inputs tried far more often than they are equal
        (most such guesses were refuted or undecided, each at up to a second); so do
        the inner selects of -O0's float min and max, whose proofs over deep terms end
        undecided: asked whole only where their terms are small (ONE_SIDE_CONE)."""
        return bool(self.side) and self.side[i] == self.side[r] and self.side[i] in (1, 2)

    def _keep_fact(self, i: int, r: int) -> None:
        """Node i, a condition, proved equal to node r: kept as a fact about the nodes
        its term reads (`isNaN(x)` is `isNaN(a) and isNaN(b)`), which the merge hides
        from the terms above (`isNaN(x) or y <= x` becomes `y <= x` where `y` is a NaN
        with `a` and `b`) where a later proof may need it."""
        if self.dag.nodes[i].sort.kind != "bool" or _constant(self.term[i]):
            return
        fact = self.term[i] == self.term[r]
        kids = frozenset(self._term_kids(i))
        for k in kids:
            self.facts_of.setdefault(k, []).append(len(self.facts))
        self.facts.append((fact, kids))

    def _facts_over(self, nodes: set[int]) -> list[z3.BoolRef]:
        """The facts (`_keep_fact`) about nodes among `nodes` only: each holds for every
        input, so a query that assumes them has the same counterexamples."""
        found = {f for k in nodes for f in self.facts_of.get(k, ())}
        return [self.facts[f][0] for f in sorted(found) if self.facts[f][1] <= nodes]

    def _same_term_as_earlier(self, i: int) -> bool:
        """Node i's rebuilt term is an earlier node's (structural hashing): i takes
        that node's representative, so that the terms above them are one term too."""
        k = self.node_of.get(self.term[i].get_id())
        if k is None or k == i or not self.term[k].eq(self.term[i]):
            return False
        self.rep[i] = self.rep[k]
        return True

    def _same_function_as_earlier(self, i: int) -> bool:
        """Node i, a condition, computes the function an earlier one computes
        (`truth.Tables`, over the inputs' float tests; else `truth.shallow_table`,
        over the conditions walked before): it takes that node's representative.
        Where it is constant, its term is the constant; where an earlier one computes
        its negation, its term is that one's negated, so that an `ite` over it meets an
        `ite` over the other with its arms swapped (`rewrite.normal`)."""
        if self.dag.nodes[i].sort.kind != "bool":
            return False
        for read, seen in ((self.tables.table, self.by_table),
                           (lambda t: shallow_table(t, self._name, self._nan_like),
                            self.by_shallow)):
            table = read(self.term[i])
            if table is None:
                continue
            if table.constant is not None:
                self._justify("truth table", i, z3.BoolVal(table.constant))
                self._set_term(i, z3.BoolVal(table.constant))
                return self._same_term_as_earlier(i)
            k = seen.setdefault(table, i)
            if k != i and self.values[k] == self.values[i]:  # unequal: a bug; kept apart
                self._justify("truth table", i, self.term[self.rep[k]])
                self.rep[i], self.term[i] = self.rep[k], self.term[self.rep[k]]
                return True
            negated = seen.get(table.negated())
            if negated is not None:
                self._justify("truth table", i, z3.Not(self.term[self.rep[negated]]))
                self._set_term(i, normal(z3.Not(self.term[self.rep[negated]])))
                return self._same_term_as_earlier(i)
        return False

    def _justify(self, rule: str, i: int, equal_to: z3.ExprRef) -> None:
        """Node i's term (as rebuilt so far) is made `equal_to` by `rule`, not by a
        solver: kept, to be listed and certified (`certify`)."""
        self.justified.append((rule, self.term[i], equal_to))

    def _nan_like(self, t: z3.ExprRef) -> bool:
        """t is (or was) the term of a node merged with a NaN test: a shallow table
        reads it as one variable, as it reads `isNaN(x)` (`and(isNaN(a), isNaN(b))`
        is the variable of `isNaN(min(a, b))` too)."""
        k = self.node_of.get(t.get_id())
        return k is not None and self.rep[k] in self.nan_reps

    def _name(self, t: z3.ExprRef) -> tuple | None:
        """The variable of a condition that is (or was, before a merge) a node's term:
        its representative's. Each term `node_of` names is kept alive, so that no
        other term takes its id."""
        k = self.node_of.get(t.get_id())
        return None if k is None else ("node", self.rep[k])

    def _set_term(self, i: int, t: z3.ExprRef) -> None:
        self.term[i] = t
        if self.node_of.setdefault(t.get_id(), i) == i:
            self.alive.append(t)

    def _rebuild(self, i: int) -> None:
        """Node i over its children's representatives, the operands of a commutative
        operator in one order, so that `a + b` and `b + a` are one term, and written
        as `rewrite.normal` writes it."""
        kids = self.dag.kids[i]
        if not kids:
            return
        if (division := self.divisions.get(i)) is not None:  # proved (`division.py`)
            self._set_term(i, normal(division.over(self.term[self.rep[division.operand]],
                                                    normal)))
            return
        n = self.dag.nodes[i]
        order = [self.rep[j] for j in kids]
        if n.kind in COMMUTATIVE:
            order.sort()
        elif n.kind in COMMUTATIVE_AFTER_ROUNDING:
            order[1:] = sorted(order[1:])
        if n.kind == z3.Z3_OP_FPA_TO_FP and len(kids) == 1:  # a float read from its bits
            k = self._ieee_result_of(order[0])
            if k is not None:
                self.term[i] = self.dag.terms[i].decl()(self.term[order[0]])
                self._justify("float bits", i, self.term[k])
                self.rep[i], self.term[i] = k, self.term[k]
                return
        if order != list(kids) or any(self.term[j] is not self.dag.terms[j] for j in order):
            self.term[i] = self.dag.terms[i].decl()(*[self.term[j] for j in order])
        self._set_term(i, normal(self.term[i]))

    def _ieee_result_of(self, bits: int) -> int | None:
        """The representative of the float whose `to_bits` wrote node `bits`
        (`sem.sorts.ieee_result`), read from the term as the semantics built it (the
        rebuilt one may be rewritten: `rewrite.normal`)."""
        kids = self.dag.kids[bits]
        if self.dag.nodes[bits].kind != z3.Z3_OP_ITE or len(kids) != 3:
            return None
        value = kids[2]
        if self.dag.nodes[value].kind != z3.Z3_OP_FPA_TO_IEEE_BV:
            return None
        x = self.dag.kids[value][0]
        found = ieee_result(self.dag.terms[bits], self.dag.terms[x].sort())
        return self.rep[x] if found is not None and found.eq(self.dag.terms[x]) else None

    def _ieee_bits(self, i: int) -> bool:
        n = self.dag.nodes[i]
        if n.kind == z3.Z3_OP_EXTRACT:
            n = self.dag.nodes[self.dag.kids[i][0]]
        return n.kind == z3.Z3_OP_FPA_TO_IEEE_BV

    def _add_vector(self, vector: dict[int, object]) -> None:
        """Extend every node's values by one input vector (a counterexample's), and
        regroup the nodes walked. Where every root is true on it, it is a witness
        (`differs`, where one is looked for): a model that tells two inner values
        apart often tells the outputs apart too."""
        given = {i: [vector.get(i, False if self.dag.nodes[i].sort.kind == "bool" else 0)]
                 for i in self.inputs}
        one: list[list | None] = []
        for i, v in enumerate(self.values):
            extra = self._evaluate(i, one, given, 1) if v is not None else None
            one.append(extra)
            self.values[i] = None if extra is None else [*v, extra[0]]
            key = self.keys.pop(i, None)
            if key is not None and extra is not None:
                self.keys[i] = (key[0], key[1] + as_key(extra, key[0]))
        # each class split by the new value, its members in their order: the classes
        # `_join_class` would make of the nodes walked, without reading them anew
        classes: dict[tuple, list[int]] = {}
        for members in self.classes.values():
            for m in members:
                if self.values[m] is not None:
                    classes.setdefault(self._key(m), []).append(m)
        self.classes = classes
        top = sorted(self.top)
        if self.read_at and all(self.values[t] is not None and self.values[t][-1] for t in top):
            # the roots hold on it as simulated: again with the open NaNs canonical (a
            # DAG's evaluation, asked only here: a thousand refutations would cost seconds)
            self.differs = self.differs_at(top, given, 1)

    def _prove_equal(self, i: int, r: int, seconds: float) -> tuple[str, dict | None]:
        """"unsat": node i always equals node r; "sat", with the inputs of a model where
        they differ; or "unknown". First with the terms cut below a depth (the nodes
        there free constants, and every multiplier or float operation both share): a
        proof there holds for whatever values they take. Then whole, unless the pair
        is one side's only and its terms hold more than ONE_SIDE_CONE nodes; with an
        eighth of the time where the terms lie APART. A query too hard for its limit
        (`_too_hard`) is not asked. Before the whole query, the two read in the cases
        of a condition (`_split_meets`)."""
        if self._classes_meet(i, r):
            self._justify("class rule", i, self.term[r])
            return "unsat", None
        a, b = self.term[i], self.term[r]
        for depth in CUT_DEPTHS:
            cut, kept, reached = self._cut(i, r, depth)
            if not cut:
                break
            if self._too_hard(kept, seconds / 8):
                continue
            query = _assuming(a != b, self._facts_over(reached))
            query = self._standard(query, [j for j in kept if self._is_ieee(j)], cut)
            if _check(query, seconds / 8, {}, self._left())[0] == "unsat":
                return "unsat", None
        if self._split_meets(i, r):
            return "unsat", None
        names = self._names()
        mine, theirs = self._below(i, i), self._below(r, r)  # each cone walked once
        below = mine | theirs
        if self._one_side(i, r) and len(below) > ONE_SIDE_CONE:
            return "unknown", None
        if len(mine ^ theirs) > APART:
            seconds /= 8
        if self._too_hard(below, seconds):
            return "unknown", None
        query = _assuming(a != b, self._facts_over(below))
        return _check(self._standard(query, [j for j in below if self._is_ieee(j)]), seconds,
                      names, self._left())

    def _too_hard(self, nodes: Iterable[int], seconds: float) -> bool:
        """A query over `nodes` holds more hard operations than its solver turns into
        clauses within `seconds` (HARD_PER_SECOND), before its limit can stop it."""
        hard = sum(_hard(self.dag.nodes[j], self.dag, j) for j in nodes)
        return hard > HARD_PER_SECOND * seconds

    def _names(self) -> dict[str, int]:
        """The inputs a model's values are read for (by name), each with its node."""
        return {self.dag.terms[j].decl().name(): j for j in self.inputs
                if self.dag.nodes[j].sort.kind in ("bv", "bool")}

    def _cases_meet(self, phi: int, other: int) -> bool:
        """Node `phi` is `ite(c, a, b)`, and node `other` rebuilt with `c` read as true
        is a, read as false b: then they are equal, with no solver query. -O0 computes
        `max(p, x)` and `max(p, y)` and joins them in a phi where opt selects the
        operand first, `max(p, ite(c, x, y))`."""
        t = self.term[phi]
        if not z3.is_app_of(t, z3.Z3_OP_ITE):
            return False
        c = self.node_of.get(t.arg(0).get_id())
        if c is None or not self.term[c].eq(t.arg(0)):
            return False
        return all(any(given.eq(arm) for given in self._readings(other, c, value))
                   for value, arm in ((True, t.arg(1)), (False, t.arg(2))))

    def _split_meets(self, i: int, r: int) -> bool:
        """Nodes i and r are one term where a condition c is fixed true, and one where
        it is fixed false (`_given`, `_given_as_built`): then they are equal (each is
        the select on c of its two cases), with no solver query. c is one of the
        SPLITS nearest conditions of selects in their terms. -O0 branches where opt
        selects, and a phi deep in one term meets a select deep in the other: whole,
        such float pairs were undecided at seconds each (fsel-llc14-3001)."""
        for c in self._conditions(i, r):
            if all(self._given_meet(i, r, c, value) for value in (True, False)):
                self._justify("phi cases", i, self.term[r])
                return True
        return False

    def _given_meet(self, i: int, r: int, c: int, value: bool) -> bool:
        """Nodes i and r read with condition node c fixed `value` are one term."""
        theirs = self._readings(r, c, value)
        return any(a.eq(b) for a in self._readings(i, c, value) for b in theirs)

    def _readings(self, j: int, c: int, value: bool) -> list[z3.ExprRef]:
        """Node j's term where condition node c is `value`, as rebuilt (`_given`) and as
        built (`_given_as_built`), those that are read."""
        return [t for t in (self._given(j, c, value), self._given_as_built(j, c, value))
                if t is not None]

    def _conditions(self, i: int, r: int) -> list[int]:
        """The nodes that are conditions of selects in the terms of nodes i and r,
        level by level from the top (of i's, then of r's, at each level), at most
        SPLITS, within GIVEN_DEPTH levels (`_given` rebuilds few terms above one)."""
        found: dict[int, None] = {}
        level, seen = [self.term[i], self.term[r]], set()
        for _ in range(GIVEN_DEPTH):
            if not level or len(found) >= SPLITS:
                break
            below = []
            for t in level:
                if t.get_id() in seen or not z3.is_app(t):
                    continue
                seen.add(t.get_id())
                if z3.is_app_of(t, z3.Z3_OP_ITE):
                    c = self.node_of.get(t.arg(0).get_id())
                    if c is not None and self.term[c].eq(t.arg(0)):
                        found[c] = None
                below.extend(t.children())
            level = below
        return list(found)[:SPLITS]

    def _classes_meet(self, i: int, r: int) -> bool:
        """Conditions i and r are equal by the IEEE classes of the values they test
        (`ieee_classes`): a NaN test of a chain of float operations against one of
        its inputs, which bit-blasting cannot decide in a second."""
        if self.dag.nodes[i].sort.kind != "bool":
            return False
        t = self.term[r]
        if z3.is_true(t) or z3.is_false(t):
            return self.classes_of.value(i, {}) == (TRUE if z3.is_true(t) else FALSE)
        return self.classes_of.equal(i, r)

    def _given(self, root: int, c: int, value: bool) -> z3.ExprRef | None:
        """Node `root`'s term where condition node `c` is `value`, rebuilt as the sweep
        rebuilds (operands in order, `rewrite.normal`, a term a node has is that node's
        representative's): equal to the term wherever `c` is `value`. Only the terms
        the substitution made anew are rebuilt, children first; None where they are
        more than GIVEN_TERMS (`c` deep below: no select an -O0 phi meets)."""
        top = z3.substitute(self.term[root], (self.term[c], z3.BoolVal(value)))
        done: dict[int, z3.ExprRef] = {}
        todo, rebuilt = [top], 0
        while todo:
            u = todo[-1]
            if u.get_id() in done:
                todo.pop()
                continue
            k = self.node_of.get(u.get_id())
            if k is not None or not z3.is_app(u) or u.num_args() == 0:
                done[u.get_id()] = u if k is None else self.term[self.rep[k]]
                todo.pop()
                continue
            kids = u.children()
            pending = [x for x in kids if x.get_id() not in done]
            if pending:
                todo.extend(pending)
                continue
            todo.pop()
            done[u.get_id()] = self._as_rebuilt(u.decl()(*[done[x.get_id()] for x in kids]))
            rebuilt += 1
            if rebuilt > GIVEN_TERMS:
                return None
        return done[top.get_id()]

    def _given_as_built(self, root: int, c: int, value: bool) -> z3.ExprRef | None:
        """`_given` read over node `root`'s operands as the function computes them
        (the DAG's children), down to GIVEN_DEPTH levels: where a merge took `c` out of
        a rebuilt term (O2's `isNaN(a) and isNaN(select c, x, y)` proved equal to
        -O0's test of the one arm that can be NaN with `a`), the node as built still
        reads it. A node not rebuilt stands as its representative's term, equal to it
        everywhere; one whose representative is `c` (or `c` negated) is `value` (or
        its negation)."""
        negated = self.node_of.get(z3.Not(self.term[c]).get_id())
        flips = {c: value}
        if negated is not None:
            flips[self.rep[negated]] = not value
        low = min(flips)  # a node holds only nodes before it, and a representative is
        # its class's first node
        done: dict[int, z3.ExprRef | None] = {}  # node -> its term given c; None: as is
        todo, rebuilt = [(root, 0)], 0
        while todo:
            j, depth = todo[-1]
            if j in done:
                todo.pop()
                continue
            kids = self.dag.kids[j]
            if self.rep[j] in flips:
                done[j] = z3.BoolVal(flips[self.rep[j]])
            elif j < low or not kids or depth >= GIVEN_DEPTH:
                done[j] = None
            elif pending := [(k, depth + 1) for k in kids if k not in done]:
                todo.extend(pending)
                continue
            elif all(done[k] is None for k in kids):
                done[j] = None
            else:
                args = [self.term[self.rep[k]] if done[k] is None else done[k] for k in kids]
                done[j] = self._as_rebuilt(self.dag.terms[j].decl()(*args))
                rebuilt += 1
                if rebuilt > GIVEN_TERMS:
                    return None
            todo.pop()
        return done[root]

    def _as_rebuilt(self, t: z3.ExprRef) -> z3.ExprRef:
        """t as `_rebuild` and `_same_term_as_earlier` would leave a node's term."""
        kind = t.decl().kind() if z3.is_app(t) else None
        if kind in COMMUTATIVE or kind in COMMUTATIVE_AFTER_ROUNDING:
            args = t.children()
            first = 1 if kind in COMMUTATIVE_AFTER_ROUNDING else 0
            args[first:] = sorted(args[first:], key=self._order)
            t = normal(t.decl()(*args))
        else:
            t = normal(t)
        k = self.node_of.get(t.get_id())
        return self.term[self.rep[k]] if k is not None else t

    def _order(self, t: z3.ExprRef) -> tuple:
        """Where `_rebuild` puts an operand of a commutative operator: by its node (a
        position in the DAG's walk from the roots), else by what it is."""
        k = self.node_of.get(t.get_id())
        return (0, self.rep[k]) if k is not None else (1, structural(t))

    def _standard(self, query: z3.BoolRef, ieee: list[int],
                  cut: Sequence[tuple[z3.ExprRef, z3.ExprRef]] = ()) -> z3.BoolRef:
        """`query` cut (`_cut`'s pairs), and with the `fp.to_ieee_bv` of nodes `ieee`
        replaced as `smt2.standard` replaces them (fresh bits `b`, `(_ to_fp e s) b`
        equal to the float), so that z3 prints the text the fast solver reads, instead
        of the printer in Python that walks every subterm. The nodes come from the
        table, not from a walk of the terms; any that is missed stays, and `solve_here`
        then prints the text itself. Where the fast solver is missing, z3 gets the
        query with its `fp.to_ieee_bv`. One substitution for both: it replaces the
        outermost match, so a cut node holding a conversion goes whole, and a
        conversion's float is cut in its definition."""
        if _fast_solver() is None:
            ieee = []
        terms = {self.term[j].get_id(): self.term[j] for j in ieee}  # one each
        for t, _ in cut:
            terms.pop(t.get_id(), None)
        bits = [(t, _named(t.sort(), "ieee", k)) for k, t in enumerate(terms.values())]
        definitions = [z3.fpBVToFP(b, t.arg(0).sort()) == t.arg(0) for t, b in bits]
        if not bits and not cut:
            return query
        whole = z3.And(query, *definitions) if definitions else query  # no `(and x)`
        return z3.substitute(whole, *bits, *cut)

    def _is_ieee(self, j: int) -> bool:
        return self.dag.nodes[j].kind == z3.Z3_OP_FPA_TO_IEEE_BV

    def _below(self, i: int, r: int) -> set[int]:
        """The nodes the terms of nodes i and r hold (their children's representatives,
        down to the inputs)."""
        seen, todo = set(), [self.rep[i], r]
        while todo:
            j = todo.pop()
            if j not in seen:
                seen.add(j)
                todo.extend(self._term_kids(j))
        return seen

    def _cut(self, i: int, r: int, depth: int) -> tuple[list[tuple[z3.ExprRef, z3.ExprRef]],
                                                       list[int], set[int]]:
        """Each node `depth` levels below nodes i and r (and each hard one above that
        both reach), with a fresh constant; the nodes reached above the cut; and all
        the nodes reached."""
        seen: dict[int, int] = {}  # node -> 1 reached from i, 2 from r, 3 both
        roots = (self.rep[i], r)
        for side, root in zip((1, 2), roots, strict=True):
            level, d = [root], 0
            while level and d <= depth:
                nxt = []
                for j in level:
                    if seen.get(j, 0) & side:
                        continue
                    seen[j] = seen.get(j, 0) | side
                    if d < depth:
                        nxt.extend(self._term_kids(j))
                level, d = nxt, d + 1
        out = []
        for j, sides in seen.items():
            n = self.dag.nodes[j]
            if n.leaf or n.sort.kind not in ("bv", "bool", "fp") or j in roots:
                continue
            if self._is_frontier(j, seen) or (sides == 3 and (
                    _hard(n, self.dag, j) or j in self.divisions.found)):
                out.append((self.term[j], _named(self.term[j].sort(), "cut", len(out))))
        return out, [j for j in seen if not self._is_frontier(j, seen)], set(seen)

    def _is_frontier(self, j: int, seen: dict[int, int]) -> bool:
        """A node reached whose children were not all reached: where the cut lies."""
        return any(k not in seen for k in self._term_kids(j))

    def _term_kids(self, j: int) -> list[int]:
        """The nodes whose terms are the nearest subterms of node j's term: its
        children's representatives, or deeper where a rewrite (`rewrite.normal`) took
        its operands from further down. The cut and the conversions a query holds
        follow the terms as they are, so that a cut node is one the query holds."""
        t = self.term[j]
        cached = self.term_kids.get(j)
        if cached is not None and (cached[0] is t or cached[0].eq(t)):  # `is`: no call into z3
            return cached[1]
        out, todo = [], list(reversed(t.children())) if z3.is_app(t) else []
        seen = set()  # subterms walked: the terms are DAGs, walked as trees they blew up
        # (a bf16 pair's sweep spent 57 of its 79 CPU s here); a node met again adds nothing
        while todo:
            c = todo.pop()
            if c.get_id() in seen:
                continue
            seen.add(c.get_id())
            k = self.node_of.get(c.get_id())
            if k is not None and self.term[k].eq(c):
                out.append(k)
            elif z3.is_app(c):
                todo.extend(reversed(c.children()))
        self.term_kids[j] = (t, out)
        return out


def _named(sort: z3.SortRef, what: str, k: int) -> z3.ExprRef:
    """The k-th fresh constant of a query's `what`: named by its place, not by a
    counter of the process, so that the query's text is the same in every run (a name
    with spaces: no PTX or IR input has one)."""
    return z3.Const(f"sweep {what} {k}", sort)


def _assuming(query: z3.BoolRef, facts: list[z3.BoolRef]) -> z3.BoolRef:
    return z3.And(query, *facts) if facts else query  # no `(and x)`


def _constant(t: z3.ExprRef) -> bool:
    """A constant a class may lead: a value `rewrite` folds, or a float's."""
    return is_value(t) or z3.is_fp_value(t)


def _hard(n: Node, dag: _Dag, j: int) -> bool:
    """A multiplier or divider of two values, or a floating-point operation: costly to
    bit-blast."""
    return (n.kind in _HARD and not any(dag.nodes[k].const is not None for k in dag.kids[j])) \
        or z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN <= n.kind <= z3.Z3_OP_FPA_BV2RM


def _bit_blast_hard(dag: _Dag) -> bool:
    """Whether `dag` multiplies or divides two values (no constant operand)."""
    return any(n.kind in _HARD and all(dag.nodes[k].const is None for k in dag.kids[j])
               for j, n in enumerate(dag.nodes))


def _sides(dag: _Dag, sides: Sides) -> list[int]:
    """Per node of `dag`: bit 1 where the first side's outputs read it, bit 2 the
    second's."""
    out = [0] * len(dag.terms)
    for bit, roots in zip((1, 2), sides, strict=True):
        todo = [dag.index[t.get_id()] for t in roots if t.get_id() in dag.index]
        while todo:
            j = todo.pop()
            if not out[j] & bit:
                out[j] |= bit
                todo.extend(dag.kids[j])
    return out


def _free(dag: _Dag, inputs: set[int]) -> set[int]:
    """The nodes that depend on a free value other than an input: a function symbol
    (an uninterpreted instruction, a NaN the ISA leaves open) or a free constant."""
    out = set()
    for i, n in enumerate(dag.nodes):
        if (n.kind == z3.Z3_OP_UNINTERPRETED and i not in inputs) or \
                any(k in out for k in dag.kids[i]):
            out.add(i)
    return out


def _check(term: z3.BoolRef, seconds: float,
           names: dict[str, int], most: float | None = None
           ) -> tuple[str, dict[int, object] | None]:
    """The query's answer, and for sat the values of the named inputs (by node), within
    `seconds` as an `Effort`: the solver's own count of its work, so that a proof near
    its limit ends alike in every run, whatever the load; its CPU cap at most `most`
    seconds (what the sweep has left). Its work, counted, is charged to the sweep's pace."""
    effort = Effort(seconds, most)
    if _fast_solver() is not None:
        answer = solve_here([term], effort)
        budgets.charge(effort.work)
        if answer.result != "sat":
            return answer.result, None
        return "sat", {i: answer.values[name] for name, i in names.items()
                       if name in answer.values}
    solver = z3.Solver()
    solver.add(term)
    result = budgets.check(solver, effort)
    budgets.charge(effort.work)
    if result != z3.sat:
        return str(result), None
    model, out = solver.model(), {}
    for d in model.decls():
        if d.arity() == 0 and d.name() in names:
            v = model[d]
            out[names[d.name()]] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
    return "sat", out


def _check_z3(term: z3.BoolRef, seconds: float, names: dict, most: float | None = None
              ) -> tuple[str, None]:
    """z3 alone (no model read back), within `seconds` as an `Effort`, as `_check`."""
    solver, effort = z3.Solver(), Effort(seconds, most)
    solver.add(term)
    result = budgets.check(solver, effort)
    budgets.charge(effort.work)
    return str(result), None


@cache
def _fast_solver() -> str | None:
    """bitwuzla where it is installed: it decides these small bit-vector queries far
    faster than z3."""
    return None if "bitwuzla" in unavailable() else "bitwuzla"


@dataclass(frozen=True)
class Certified:
    """What a solver said of each merge a sweep rested on a rule (`--certify`)."""

    certified: int = 0
    refuted: list[str] = field(default_factory=list)  # the rules whose merge a model breaks
    undecided: list[str] = field(default_factory=list)


def certify(justified: Sequence[tuple[str, z3.ExprRef, z3.ExprRef]],
            seconds: float) -> Certified:
    """Ask a solver (the sweep's own: bitwuzla where installed) whether each merge of
    `justified` can fail (its two terms differ on some input), within `seconds` in all,
    shared evenly among those left; what it leaves undecided (a query it does not read)
    z3 is asked in the rest of that share."""
    budget = Budget.capped(seconds)
    done, refuted, undecided = 0, [], []
    for k, (rule, a, b) in enumerate(justified):
        share = budget.part(budget.left() / (len(justified) - k))
        result = "unknown"
        for ask in (_check, _check_z3):
            if result == "unknown" and not share.expired():
                left = share.left()  # an effort, its CPU cap no more than the share
                result = ask(a != b, left, {}, left)[0]
        if result == "unsat":
            done += 1
        else:
            (refuted if result == "sat" else undecided).append(rule)
    return Certified(done, refuted, undecided)
