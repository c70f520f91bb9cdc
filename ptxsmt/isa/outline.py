"""Where each function's body lies in a PTX module, found without reading its statements.

Reading one function of a big module (`ptxsmt equiv big.ptx ... --function f`) reads
the module's header, variables and prototypes, and the definitions of `f` and of the
functions it names (transitively); every other definition is left out, blanked to
its line ends so that every line and column stays where it was. Finding the
definitions is a scan for braces, linear in the text and a small share of reading it.

A definition left out is not read at all, so an error in it (a label defined twice,
an instruction or a parameter ptxas refuses) does not stop reading `f`; `ptxsmt check`
reads every one. Where the outline cannot be found (braces that do not balance, a
comment or a string that does not end, a function defined twice) the text is read
whole, and the reader names the problem.
"""

from __future__ import annotations

import contextlib
import re
from typing import NamedTuple

from .errors import PtxError
from .statements import blank_comments

_BRACE_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}]')
_HEADER = re.compile(r"(?:\.(?:visible|weak|extern|weak_odr|common)\s+)*"
                     r"\.(?:entry|func)\b\s*(?:\([^()]*\)\s*)?([A-Za-z_$%][\w$]*)")
# a name as an operand spells it: not a register's tail (`%f3`), not a literal's (`0f3F80`)
NAME = re.compile(r"(?<![\w$%])[A-Za-z_$][\w$]*")


def declares_functions(text: str) -> bool:
    """Whether PTX text holds a function (`.entry`/`.func` outside comments): functions of
    a module, not a snippet's instructions."""
    # an unterminated comment or string is the reader's error to report, with its place
    with contextlib.suppress(PtxError):
        text = blank_comments(text)
    return _HEADER.search(text) is not None


class Definition(NamedTuple):
    """Where a function's definition lies: its header's start, its body's (just after
    the `{`) and the body's end (at the `}`)."""

    header: int
    start: int
    end: int


def definitions(clean: str) -> dict[str, Definition] | None:
    """Each function defined in `clean` (comments blanked), by name, in order; None where
    braces do not balance or a function is defined twice."""
    out: dict[str, Definition] = {}
    depth, start, after = 0, 0, 0  # after: the end of the last top-level block
    for m in _BRACE_OR_STRING.finditer(clean):
        brace = m.group()
        if brace == "{":
            depth += 1
            if depth == 1:
                start = m.end()
        elif brace == "}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                chunk = max(after, clean.rfind(";", after, start) + 1)
                after = m.end()
                headers = list(_HEADER.finditer(clean, chunk, start - 1))
                if headers and "=" not in clean[chunk:start]:  # not a variable's `= {...}`
                    name = headers[-1].group(1)
                    if name in out:
                        return None
                    out[name] = Definition(headers[-1].start(), start, m.start())
    return out if depth == 0 else None


def named(clean: str, d: Definition) -> set[str]:
    """The names a body's operands may spell: callees and variables among them."""
    return set(NAME.findall(clean, d.start, d.end))


def only(text: str, name: str) -> tuple[str, list[str]]:
    """`text` with every function definition blanked but those of `name` and the
    functions it names, transitively (see the module docstring), and the names of those
    blanked, in order; `text` itself (none blanked) where its outline cannot be found."""
    try:
        clean = blank_comments(text)
    except PtxError:
        return text, []
    found = definitions(clean)
    if found is None:
        return text, []
    kept, wanted = set(), [name]
    while wanted:
        n = wanted.pop()
        if n in found and n not in kept:
            kept.add(n)
            wanted += named(clean, found[n]) & found.keys()
    pieces, at = [], 0
    for n, d in found.items():
        if n not in kept:
            lines = clean.count("\n", d.header, d.end + 1)
            column = d.end + 1 - (clean.rfind("\n", d.header, d.end + 1) + 1 if lines else d.header)
            pieces += [text[at:d.header], "\n" * lines, " " * column]
            at = d.end + 1
    pieces.append(text[at:])
    return "".join(pieces), [n for n in found if n not in kept]
