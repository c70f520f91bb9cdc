"""What one path through a function has computed, and the merge of paths at a join.

Branches only go forward (loops are refused), so the blocks form a DAG and every path
reaching a label is finished when the label is reached. A path carries `live`, the
condition on the inputs under which execution takes it; paths meeting at a label are
exclusive, so their merge picks each value by the condition of the path it came from.

Every term is built once and shared: a branch's side is `live ∧ c` over the live term
of the path it leaves, a join `∨` of the lives that meet, and a value at a join an `If`
over the lives of the paths it came from. Simplification is local (a constant, or the
two sides of one branch meeting again: `(L ∧ c) ∨ (L ∧ ¬c)` is `L`): a whole path
condition or value is never simplified again, so encoding grows with the body's length,
not with its square. The solver simplifies the query once, as a DAG.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

import z3

from .memory import initial


@dataclass(frozen=True)
class State:
    live: z3.BoolRef
    registers: Registers  # by name without `%` (a dict is taken as one)
    memory: dict[str, z3.ArrayRef]  # state space -> bytes
    returns: dict[str, z3.ExprRef]  # `st.param` to a return parameter: name -> value

    def __post_init__(self):
        if not isinstance(self.registers, Registers):
            object.__setattr__(self, "registers", Registers(self.registers))

    def when(self, condition: z3.BoolRef) -> State:
        """This path, taken only where `condition` also holds (a branch's side)."""
        return replace(self, live=conjoin(self.live, condition))

    def updated(self, registers: Mapping[str, z3.ExprRef] | None = None,
                memory: Mapping[str, z3.ArrayRef] | None = None,
                returns: Mapping[str, z3.ExprRef] | None = None) -> State:
        """This path with some registers, memories or return values written."""
        return State(self.live, self.registers.set(registers) if registers else self.registers,
                     {**self.memory, **memory} if memory else self.memory,
                     {**self.returns, **returns} if returns else self.returns)


FOLD = 1024  # writes since the base are folded in when their square exceeds this more
# than the base's size


class Registers(Mapping):
    """Register values, persistent: a write makes a new version that shares its
    entries with the old (a dict shared by many versions and a few writes since, folded
    in when they are many), so that a write costs little on a path of thousands of
    registers, and a join finds the registers two paths may hold differently from the
    writes since they forked (`differing`)."""

    __slots__ = ("_base", "_fold", "_recent")

    def __init__(self, base: Mapping[str, z3.ExprRef] = ()):
        self._base: dict[str, z3.ExprRef] = dict(base)
        self._fold = _Fold((), None)  # how _base came to be
        self._recent: dict[str, z3.ExprRef] = {}  # written since

    def __getitem__(self, key: str) -> z3.ExprRef:
        try:
            return self._recent[key]
        except KeyError:
            return self._base[key]

    def __contains__(self, key: object) -> bool:
        return key in self._recent or key in self._base

    def __iter__(self) -> Iterator[str]:
        yield from (k for k in self._base if k not in self._recent)
        yield from self._recent

    def __len__(self) -> int:
        return len(self._base) + sum(k not in self._base for k in self._recent)

    def set(self, values: Mapping[str, z3.ExprRef]) -> Registers:
        """These registers with `values` written."""
        r = Registers.__new__(Registers)
        r._base, r._fold, r._recent = self._base, self._fold, {**self._recent, **values}
        if len(r._recent) ** 2 > len(self._base) + FOLD:  # fold in: O(√n) a write
            r._base, r._fold = {**self._base, **r._recent}, _Fold(tuple(r._recent), self._fold)
            r._recent = {}
        return r

    def differing(self, other: Registers) -> Iterable[str]:
        """The registers that may hold different values here and in `other`: of the
        writes since their last common base (of all, for unrelated versions), those that
        are not the same term in both."""
        keys = dict.fromkeys([*self._recent, *other._recent])
        a, b = self._fold, other._fold
        while a is not b:
            if a.depth < b.depth:
                a, b = b, a
            if a.parent is None:
                keys = dict.fromkeys([*self, *other])
                break
            keys.update(dict.fromkeys(a.keys))
            a = a.parent
        return [k for k in keys if self.get(k) is not other.get(k)]


class _Fold:
    """The registers folded into a base over its parent's base (None: a first base)."""

    __slots__ = ("keys", "parent", "depth")

    def __init__(self, keys: tuple[str, ...], parent: _Fold | None):
        self.keys, self.parent = keys, parent
        self.depth = parent.depth + 1 if parent else 0


def negate(condition: z3.BoolRef) -> z3.BoolRef:
    """¬condition, without a double negation (`@!p` is ¬p; its other side is p)."""
    if z3.is_not(condition):
        return condition.arg(0)
    if z3.is_true(condition) or z3.is_false(condition):
        return z3.BoolVal(z3.is_false(condition))
    return z3.Not(condition)


def conjoin(live: z3.BoolRef, condition: z3.BoolRef) -> z3.BoolRef:
    """live ∧ condition, as one new node over both (constants folded)."""
    if z3.is_false(live) or z3.is_false(condition) or z3.is_true(condition):
        return condition if z3.is_false(condition) else live
    return condition if z3.is_true(live) else z3.And(live, condition)


def disjoin(lives: list[z3.BoolRef]) -> z3.BoolRef:
    """The condition that one of `lives` holds: a branch's two sides that meet again
    are the path they left, a path met twice or a path and a side it took are that path
    (`(L ∧ c) ∨ (L ∧ ¬c)` = `L`, `L ∨ (L ∧ x)` = `L`), repeatedly, then one `∨`."""
    left = list(dict.fromkeys(_Term(t) for t in lives if not z3.is_false(t)))
    changed = True
    while changed and len(left) > 1:
        changed = False
        ids = {t.id for t in left}
        # a side whose path is also here is absorbed by it
        kept = [t for t in left if t.parent is None or t.parent.get_id() not in ids]
        sides: dict[tuple[int, int], _Term] = {}
        for t in kept:
            if t.parent is None:
                continue
            other = sides.get((t.parent.get_id(), t.negated_id))
            if other is not None:  # both sides of one branch: the path they left
                kept = [x for x in kept if x is not t and x is not other] + [_Term(t.parent)]
                changed = True
                break
            sides[(t.parent.get_id(), t.condition_id)] = t
        changed = changed or len(kept) < len(left)
        left = list(dict.fromkeys(kept))
    terms = [t.term for t in left]
    if any(z3.is_true(t) for t in terms):
        return z3.BoolVal(True)
    return z3.BoolVal(False) if not terms else terms[0] if len(terms) == 1 else z3.Or(terms)


class _Term:
    """A live term, compared by identity (z3 hash-conses: equal ids, one term), and read
    as `parent ∧ condition` when it is a binary `And` (what `conjoin` builds)."""

    __slots__ = ("term", "id", "parent", "condition_id", "negated_id")

    def __init__(self, term: z3.BoolRef):
        self.term, self.id = term, term.get_id()
        self.parent = None
        if z3.is_and(term) and term.num_args() == 2:
            self.parent = term.arg(0)
            condition = term.arg(1)
            self.condition_id = condition.get_id()
            self.negated_id = negate(condition).get_id()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Term) and other.id == self.id

    def __hash__(self) -> int:
        return self.id


def merge(paths: list[State], registers: bool = True) -> State:
    """One state for paths that meet. Memory a path has not touched is the initial
    memory; a return value a path has not written is `unwritten` there (as in
    `effects.set_return`: a value neither side chooses). A register written on some
    paths only (defined on one side of a branch) keeps what those paths hold: reading it
    where no path wrote it is undefined in PTX, and any value is a correct reading.
    `registers=False`: where the paths end (registers die there), none are kept."""
    if len(paths) == 1:
        return paths[0]
    widths: dict[str, set[int]] = {}
    for p in paths:
        for k, v in p.returns.items():
            widths.setdefault(k, set()).add(v.size())
    # a name of two widths is two call sequences' `.param`s (nvcc -G declares `param0`
    # as .b32 in one and .b8[2] in another): each is out of scope past its own braces,
    # so neither is read after the meet (a later call declares it anew)
    scoped = {k for k, sizes in widths.items() if len(sizes) > 1}
    first = paths[0].registers
    differing = dict.fromkeys(k for p in paths[1:] for k in first.differing(p.registers)) \
        if registers else {}
    return State(disjoin([p.live for p in paths]),
                 first.set(_merged([(p.live, p.registers) for p in paths], keys=differing))
                 if registers else Registers(),
                 _merged([(p.live, p.memory) for p in paths], initial),
                 _merged([(p.live, {k: v for k, v in p.returns.items() if k not in scoped})
                          for p in paths], lambda k: z3.BitVec(f"{k} unwritten", *widths[k])))


def _merged(sides: list[tuple[z3.BoolRef, Mapping]], default=None,
            keys: Iterable[str] | None = None) -> dict:
    """Each key's value (of `keys`, else of every key a side holds), picked by the
    live condition of the side it comes from."""
    out = {}
    if keys is None:
        keys = dict.fromkeys(k for _, values in sides for k in values)
    for key in keys:
        held = [(live, values[key] if key in values else default(key))
                for live, values in sides if key in values or default]
        value = held[-1][1]
        for live, v in reversed(held[:-1]):
            value = value if v.eq(value) else z3.If(live, v, value)
        out[key] = value
    return out
