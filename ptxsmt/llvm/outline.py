"""The part of an IR module that one function needs, found without parsing the module.

llvmlite parses a big module in a second, but printing a function or an instruction of
it (what the reader does for each) walks the whole module, so reading one function
of 16,000 took minutes. `only(text, name)` keeps what `@name` needs: its definition,
every top-level entity it names (a callee's definition, a global, a declaration, an
attribute group, a type, a metadata node), what those name in turn, the header lines,
the comdats, and each named metadata (`!llvm.module.flags`, ...) that names no
function left out; every other line is blanked, so that an error's line and column are
the module's. A module cut wrongly (a name spelled in a way the scan misses) fails to
parse, and is then read whole (`module.read_ir`).

A definition left out is not parsed, so an error in it does not stop reading `@name`.
"""

from __future__ import annotations

import re

# `define ... {` up to the `}` that starts a line: LLVM prints labels at column 0, but
# no other line of a body starts with `}`
_DEFINE = re.compile(r"^define\b.*?^\}[^\n]*\n?", re.M | re.S)
_NAME = r'(?:"(?:[^"\\]|\\.)*"|[-\w$.]+)'
_DEFINED = re.compile(rf"@{_NAME}(?=\s*\()")  # the function's name: first `@name(`
_KEY = re.compile(rf"(?:declare\b[^@]*(@{_NAME})|([@!%$]{_NAME})\s*=|attributes\s+(#\d+))")
_REFERENCE = re.compile(rf"[@!%$]{_NAME}|#\d+")
_ALWAYS = ("$",)  # comdats: named by `comdat` alone, as the global of the same name


def entities(text: str) -> tuple[dict[str, list[tuple[int, int]]], list[str]]:
    """(spans of each top-level entity by its name, the functions defined, in order).
    A line that starts with a space continues the entity above; a line that names no
    entity (`target triple = ...`, a comment) is kept with every cut (key "")."""
    spans: dict[str, list[tuple[int, int]]] = {}
    defined: list[str] = []
    at = 0
    for m in (*_DEFINE.finditer(text), None):
        end = m.start() if m else len(text)
        key = ""
        for line in re.finditer(r"[^\n]*\n?", text[at:end]):
            if not line.group():
                continue
            start = at + line.start()
            if not line.group()[:1].isspace():
                k = _KEY.match(line.group())
                key = next((g for g in k.groups() if g), "") if k else ""
            spans.setdefault(key, []).append((start, at + line.end()))
        if m is None:
            break
        name = _DEFINED.search(text, m.start(), m.end())
        key = name.group() if name else ""
        if key:
            defined.append(key[1:])
        spans.setdefault(key, []).append((m.start(), m.end()))
        at = m.end()
    return spans, defined


def only(text: str, name: str) -> str | None:
    """`text` with what `@name` does not need blanked (see the module docstring); None
    where the module defines no `@name` or defines a name twice (read it whole)."""
    spans, defined = entities(text)
    if name not in defined or len(set(defined)) != len(defined):
        return None

    def closure(roots: list[str]) -> set[str]:
        found, wanted = set(), roots
        while wanted:
            key = wanted.pop()
            if key in found or key not in spans:
                continue
            found.add(key)
            for start, end in spans[key]:
                wanted += _REFERENCE.findall(text, start, end)
        return found

    keep = closure(["", f"@{name}", *(k for k in spans if k.startswith(_ALWAYS))])
    functions = {f"@{f}" for f in defined}
    for key in spans:
        if key.startswith("!") and not key[1:].isdigit() and key not in keep:
            more = closure([key])
            if not (more - keep) & functions:  # it names no function left out
                keep |= more
    pieces, at = [], 0
    for start, end in sorted(s for k in spans if k not in keep for s in spans[k]):
        pieces += [text[at:start], "\n" * text.count("\n", start, end)]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)

