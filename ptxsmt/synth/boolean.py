"""Snippets as Boolean functions of their compares: what Boolean algebra implies.

The ISA defines a BoolOp compare as `BoolOp(a CMP b, c)`, the glue ops as not, and,
or and xor of predicates, `set` as its predicate written in the destination type and
`selp x, y, p` as a choice on p (so `selp y, x, p` is `selp x, y, !p`). Read that way,
a snippet is a Boolean formula over atoms: its compares' cores (each named by the
smallest plain setp proved equal to it, or to its complement) and c. Two snippets
whose formulas have the same truth table over the atoms they depend on are equal by
Boolean algebra alone (commutativity, De Morgan, `x xor !c` = `!(x xor c)`, ...), so
a rule between them follows from the rules that named the atoms.

What independent atoms cannot see is the order between compares: every compare of a
and b is a set of the outcomes of comparing them (less, equal, greater, or unordered:
a NaN; 9.7.6.1's tables, the set read off the evaluator), so `eq or ge` = `ge`. A
snippet of two or more compares is read over outcome variables too (one per type and
`.ftz`: the compares of a pool read the same a and b) and joins the snippets of the
same outcome table, and one snippet of a single compare with that table. Only one: a
single compare's own facts (an operand swap, an inversion) are still proved, not read
off the outcome table, so the library keeps them. Variables of one group (with and
without `.ftz`; signed and unsigned) take their values together, only as JOINT
allows. tests/test_synth.py derives JOINT with the solver from the compares' terms
(every a and b) and holds every outcome set to the oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache
from itertools import product

from ..batch.programs import compile_program
from ..fast import Unsupported
from ..isa.errors import PtxError
from ..isa.literals import parse_value
from ..isa.syntax import Operand
from ..isa.types import PRED, TYPES, Kind
from .minimise import RENAMINGS, Classes, Compare, compares, congruent, imply
from .text import rename

GLUE = {"and": lambda x, y: x and y, "or": lambda x, y: x or y, "xor": lambda x, y: x != y}
SWAPPED_CHOICES = {("y", "x"): ("x", "y"), ("b", "a"): ("a", "b")}

Formula = tuple  # ("atom", name) | ("not", f) | (glue op, f, g)


def _literal(name: str, negated: bool) -> Formula:
    return ("not", ("atom", name)) if negated else ("atom", name)


def _source(source: Operand, p: Formula | None) -> Formula:
    """A BoolOp's or glue op's predicate operand: c, or the compare's result p."""
    term = ("atom", "c") if source.text == "c" else p
    return ("not", term) if source.negated else term


def read(text: str, atom: Callable[[str], tuple[str, bool]]) -> tuple | None:
    """The snippet's output as ("pred", f), ("set", dtype, f) or ("selp", type, x, y, f);
    None for a form it does not read (slct, whose compare is against zero)."""
    p: Formula | None = None
    out: tuple | None = None
    for ins, compare in compares(text):
        v, ops = ins.variant, ins.operands
        glue = v.opcode in (*GLUE, "not") and v.type is PRED
        if compare is not None:
            f = _literal(*atom(compare.core))
            if compare.boolop:
                f = (compare.boolop, f, _source(compare.source, p))
            if v.opcode == "set":
                out = ("set", v.dtype.name, f)
            p = f
        elif glue and ops["d"].text != "p":
            continue  # a packed type's q line is the same step
        elif glue and v.opcode == "not":
            p = ("not", p)
        elif glue:
            p = (v.opcode, p, _source(ops["b"], p))
        elif v.opcode == "selp":
            out = ("selp", str(v), ops["a"].text, ops["b"].text, p)
        else:
            return None
    return out or ("pred", p)


def _atoms(f: Formula) -> set[str]:
    return {f[1]} if f[0] == "atom" else set().union(*(_atoms(g) for g in f[1:]))


# The outcomes of comparing a with b: less, equal, greater, unordered (a or b NaN),
# each with an (a, b) that has it (small numbers: the signed and unsigned orders agree).
FLOAT_OUTCOMES = {"<": ("1.0", "2.0"), "=": ("2.0", "2.0"), ">": ("2.0", "1.0"),
                  "?": ("nan", "1.0")}
INTEGER_OUTCOMES = {"<": ("1", "2"), "=": ("2", "2"), ">": ("2", "1")}
_SWAPPED = str.maketrans("<>", "><")  # `b CMP a` as outcomes of comparing a with b


@cache
def outcomes(atom: str) -> tuple[str, str] | None:
    """A compare of a and b as (its outcome variable, the outcomes where it is true):
    `setp.gt.ftz.f32 p, b, a;` is ("f32.ftz", "<"). The outcomes come from the
    evaluator (the Z3 terms), run on a pair that has each outcome. None for another
    atom."""
    compare = Compare.read(atom)
    if compare is None or sorted(compare.order) != ["a", "b"]:
        return None
    t = compare.type
    # b-types compare bits for equality only: the `=` of the unsigned order
    variable = t.name if t.lane.is_float else \
        f"{'s' if t.kind is Kind.SIGNED else 'u'}{t.width}"
    try:
        true = _true_outcomes(compare.core_on(("a", "b")))
    except (PtxError, Unsupported):  # not a compare the evaluator runs: an atom alone
        return None
    return variable + ".ftz" * compare.ftz, \
        true if compare.order == ("a", "b") else true.translate(_SWAPPED)


@cache
def _true_outcomes(core: str) -> str:
    """Where the plain compare `setp.CMP.T p, a, b;` is true, outcome by outcome."""
    program = compile_program(core)
    t = program.types["a"]
    lane = t.lane if t.is_packed else t
    pairs = FLOAT_OUTCOMES if lane.is_float else INTEGER_OUTCOMES
    true = ""
    for outcome, (a, b) in pairs.items():
        bits = {name: parse_value(text, lane) for name, text in (("a", a), ("b", b))}
        if t.is_packed:  # every lane alike: the first lane's result says it
            bits = {n: sum(v << (lane.width * k) for k in range(t.lanes)) for n, v in bits.items()}
        if program({n: [v] for n, v in bits.items()})["p"][0]:
            true += outcome
    return true


# Outcome variables that read the same a and b are linked: flushing subnormals keeps
# NaNs and equal values and never reverses an order (it may make two values equal),
# and the signed and unsigned orders agree on equality. A group's variables take their
# values together, from these tuples; a lone variable of a group reads it all the same.
JOINT = {
    "float": (("<", "<"), ("<", "="), ("=", "="), (">", ">"), (">", "="), ("?", "?")),
    "integer": (("<", "<"), ("<", ">"), ("=", "="), (">", "<"), (">", ">")),
    "c": ((False,), (True,)),
}


def _group(variable: str) -> tuple[str, tuple[str, ...], str]:
    """(the group's name, its variables in JOINT's order, its kind)."""
    if variable == "c":
        return "c", ("c",), "c"
    t = TYPES[variable.removesuffix(".ftz")]
    if t.lane.is_float:
        return t.name, (t.name, t.name + ".ftz"), "float"
    return f"i{t.width}", (f"s{t.width}", f"u{t.width}"), "integer"


@lru_cache(maxsize=1 << 16)  # pure: a search notes the same formulas many times
def outcome_table(f: Formula) -> tuple | None:
    """(the groups of outcome variables it depends on, its values over them): equal for
    formulas equal over the compares' outcomes and c; None where an atom is not a
    compare of a, b."""
    reading = {name: outcomes(name) for name in _atoms(f) if name != "c"}
    if None in reading.values():
        return None
    groups = sorted({_group(v) for v, _ in reading.values()} |
                    ({_group("c")} if "c" in _atoms(f) else set()))
    rows = list(product(*(JOINT[kind] for _, _, kind in groups)))

    def value(row: tuple) -> bool:
        env = {v: x for (_, names, _), values in zip(groups, row) for v, x in zip(names, values)}
        return _value(f, {name: env[v] in true for name, (v, true) in reading.items()} |
                      {"c": env.get("c", False)})

    values = {row: value(row) for row in rows}
    needed = [i for i, (_, _, kind) in enumerate(groups)
              if any(values[r] != values[r[:i] + (x,) + r[i + 1:]]
                     for r in rows for x in JOINT[kind])]
    base = rows[0]  # what the value does not depend on, fixed at any value
    table = []
    for part in product(*(JOINT[groups[i][2]] for i in needed)):
        row = list(base)
        for i, x in zip(needed, part):
            row[i] = x
        table.append(values[tuple(row)])
    return tuple(groups[i][0] for i in needed), tuple(table)


def _value(f: Formula, env: dict[str, bool]) -> bool:
    if f[0] == "atom":
        return env[f[1]]
    if f[0] == "not":
        return not _value(f[1], env)
    return GLUE[f[0]](_value(f[1], env), _value(f[2], env))


@lru_cache(maxsize=1 << 16)
def truth_table(f: Formula) -> tuple:
    """(atoms it depends on, its values over them in order): equal for formulas equal
    under Boolean algebra."""
    names = sorted(_atoms(f))
    rows = list(product((False, True), repeat=len(names)))
    values = [_value(f, dict(zip(names, row))) for row in rows]
    needed = [n for i, n in enumerate(names)
              if any(values[k] != values[j] for k, r in enumerate(rows)
                     for j, s in enumerate(rows) if r[:i] + r[i + 1:] == s[:i] + s[i + 1:]
                     and r[i] != s[i])]
    if needed != names:
        rows2 = list(product((False, True), repeat=len(needed)))
        values = [_value(f, {**dict.fromkeys(names, False), **dict(zip(needed, row))})
                  for row in rows2]
    return tuple(needed), tuple(values)


def _output(text: str, atom: Callable[[str], tuple[str, bool]]) -> tuple | None:
    out = read(text, atom)
    if out is None or out[-1] is None:
        return None
    if out[0] == "selp" and (out[2], out[3]) in SWAPPED_CHOICES:
        out = (*out[:2], *SWAPPED_CHOICES[out[2], out[3]], ("not", out[4]))
    return out


def normal_form(text: str, atom: Callable[[str], tuple[str, bool]]) -> str | None:
    """A key equal for snippets Boolean algebra makes equal (given the atoms' names)."""
    out = _output(text, atom)
    return f"boolean {out[:-1]} {truth_table(out[-1])}" if out else None


def ordered_form(text: str, atom: Callable[[str], tuple[str, bool]]) -> tuple[str, int] | None:
    """A key equal for snippets equal over the outcomes of their compares, and how many
    distinct compares the snippet has; None where it is not read so."""
    out = _output(text, atom)
    table = outcome_table(out[-1]) if out else None
    if table is None:
        return None
    return f"ordered {out[:-1]} {table}", len(_atoms(out[-1]) - {"c"})


def _atom_of(classes: Classes) -> Callable[[str], tuple[str, bool]]:
    return lambda core: classes.literals.find(classes.find(core))


def note(classes: Classes, text: str) -> None:
    """Join the snippet with what it is by congruence and by Boolean algebra; where it
    and its class's smallest member are each a compare or its complement, so are the
    two compares."""
    c = congruent(text, classes)
    if c != text:
        classes.union(text, c)
    key = normal_form(text, _atom_of(classes))
    if key:
        classes.union(text, key)
    ordered = ordered_form(text, _atom_of(classes))
    if ordered:
        key, compares = ordered
        if compares > 1 or classes.anchors.setdefault(key, text) == text:
            classes.union(text, key)  # a single compare only as the key's one anchor
    relate_literals(classes, text, classes.find(text))


def learn(classes: Classes, lhs: str, rhs: str) -> None:
    """Record a proved lhs = rhs: the texts (and their renamings) are one class."""
    imply(classes, lhs, rhs)
    relate_literals(classes, lhs, rhs)


def relate_literals(classes: Classes, lhs: str, rhs: str) -> None:
    """Where both sides of a true lhs = rhs are one compare or its complement, those
    compares are one atom (so `!(a ne b)` and `a equ b` read alike)."""
    if lhs == rhs or not all(_as_literal(read(t, _atom_of(classes))) for t in (lhs, rhs)):
        return  # a renaming reads as a literal only where the text itself does
    for mapping in ({}, *RENAMINGS):
        sides = [read(rename(t, mapping), _atom_of(classes)) for t in (lhs, rhs)]
        (x, nx), (y, ny) = (_as_literal(side) for side in sides)
        classes.literals.relate(x, y, nx != ny)


def _as_literal(side: tuple | None) -> tuple[str, bool] | None:
    if side is None or side[0] != "pred":
        return None
    f, negated = side[1], False
    while f[0] == "not":
        f, negated = f[1], not negated
    return (f[1], negated) if f[0] == "atom" and f[1] != "c" else None


def closure(rules: list[tuple[str, str]], order: dict[str, tuple]) -> Classes:
    """The classes the rules give, with congruence, renaming and Boolean algebra."""
    classes = Classes(order)
    for lhs, rhs in rules:
        note(classes, lhs)
        note(classes, rhs)
        learn(classes, lhs, rhs)
    return classes


def implies(classes: Classes, lhs: str, rhs: str) -> bool:
    for _ in range(2):
        note(classes, lhs)
        note(classes, rhs)
    return classes.same(lhs, rhs)
