"""Snippets as Boolean functions of their compares: what Boolean algebra implies.

The ISA defines a BoolOp compare as `BoolOp(a CMP b, c)`, the glue ops as not, and,
or and xor of predicates, `set` as its predicate written in the destination type and
`selp x, y, p` as a choice on p (so `selp y, x, p` is `selp x, y, !p`). Read that way,
a snippet is a Boolean formula over atoms: its compares' cores (each named by the
smallest plain setp proved equal to it, or to its complement) and c. Two snippets
whose formulas have the same truth table over the atoms they depend on are equal by
Boolean algebra alone (commutativity, De Morgan, `x xor !c` = `!(x xor c)`, ...), so
a rule between them follows from the rules that named the atoms.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

from .minimise import RENAMINGS, Classes, Compare, congruent, imply, rename

GLUE = {"and": lambda x, y: x and y, "or": lambda x, y: x or y, "xor": lambda x, y: x != y}
SWAPPED_CHOICES = {("y", "x"): ("x", "y"), ("b", "a"): ("a", "b")}

Formula = tuple  # ("atom", name) | ("not", f) | (glue op, f, g)


def _literal(name: str, negated: bool) -> Formula:
    return ("not", ("atom", name)) if negated else ("atom", name)


def _source(source: str, p: Formula | None) -> Formula:
    term = ("atom", "c") if source.lstrip("!") == "c" else p
    return ("not", term) if source.startswith("!") else term


def read(text: str, atom: Callable[[str], tuple[str, bool]]) -> tuple | None:
    """The snippet's output as ("pred", f), ("set", dtype, f) or ("selp", type, x, y, f);
    None for a form it does not read (slct, whose compare is against zero)."""
    p: Formula | None = None
    out: tuple | None = None
    for line in (s.strip() for s in text.split(";") if s.strip()):
        words = line.split()
        compare = Compare.read(line + ";")
        if compare is not None:
            f = _literal(*atom(compare.core))
            if compare.boolop:
                f = (compare.boolop, f, _source(compare.source, p))
            if compare.opcode == "set":
                out = ("set", compare.types[0], f)
            p = f
        elif words[0] == "not.pred":
            if words[1].startswith("p"):  # a packed type's q line is the same step
                p = ("not", p)
        elif words[0].removesuffix(".pred") in GLUE and words[0].endswith(".pred"):
            if words[1].startswith("p"):
                p = (words[0].removesuffix(".pred"), p, _source(words[3], p))
        elif words[0].startswith("selp."):
            x, y = words[2].rstrip(","), words[3].rstrip(",")
            out = ("selp", words[0], x, y, p)
        else:
            return None
    return out or ("pred", p)


def _atoms(f: Formula) -> set[str]:
    return {f[1]} if f[0] == "atom" else set().union(*(_atoms(g) for g in f[1:]))


def _value(f: Formula, env: dict[str, bool]) -> bool:
    if f[0] == "atom":
        return env[f[1]]
    if f[0] == "not":
        return not _value(f[1], env)
    return GLUE[f[0]](_value(f[1], env), _value(f[2], env))


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


def normal_form(text: str, atom: Callable[[str], tuple[str, bool]]) -> str | None:
    """A key equal for snippets Boolean algebra makes equal (given the atoms' names)."""
    out = read(text, atom)
    if out is None or out[-1] is None:
        return None
    if out[0] == "selp" and (out[2], out[3]) in SWAPPED_CHOICES:
        out = (*out[:2], *SWAPPED_CHOICES[out[2], out[3]], ("not", out[4]))
    return f"boolean {out[:-1]} {truth_table(out[-1])}"


def _atom_of(classes: Classes) -> Callable[[str], tuple[str, bool]]:
    return lambda core: classes.literals.find(classes.find(core))


def note(classes: Classes, text: str) -> None:
    """Join the snippet with what it is by congruence and by Boolean algebra; where it
    and its class's smallest member are each a compare or its complement, so are the
    two compares."""
    c = congruent(text, classes)
    if c != text and c in classes.order:
        classes.union(text, c)
    key = normal_form(text, _atom_of(classes))
    if key:
        classes.union(text, key)
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
