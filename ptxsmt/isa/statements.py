"""PTX text -> statements: the lexical layer under the grammar (syntax.py) and the
readers of snippets and modules (body.py, module.py).

ptxas ends an instruction or a declaration with `;` and lets it span lines; a
directive such as `.version 9.0` or `.loc 1 5 3` ends with its line; `{` and `}` open
and close a scope; `name:` is a label; `//` and `/* */` are comments; `"..."` strings
(`.file 1 "k.cu"`) are opaque. A snippet is stricter, as ptxsmt always read it: each
instruction ends on its own line (a statement left open at a line's end is reported by
its reader as a missing `;`). Every statement knows its `line L, col C`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from typing import NamedTuple

from .errors import PtxError

LABEL = re.compile(r"(%?[A-Za-z_$][A-Za-z0-9_$]*)\s*:(?!:)")


class Statement(NamedTuple):
    kind: str  # "instruction", "directive", "label", "open" (`{`) or "close" (`}`)
    text: str  # without its `;`, comments blanked; the label's name for a label
    line: int
    col: int
    ended: bool = True  # False: a line or the text ended before its `;`
    end: tuple[int, int] = (0, 0)  # line and column just after its last character

    @property
    def head(self) -> str:
        """The first word: `.reg`, `setp.lt.f32`, `@%p1` ..."""
        return self.text.split(None, 1)[0] if self.text.strip() else ""


class _Text:
    """Positions in the text: 0-based offset <-> 1-based line and column."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def place(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, pos)
        return line, pos - self.starts[line - 1] + 1


_NEWLINE = re.compile("\n")
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:[^"\\\n]|\\.)*(?:"|$)',
                                re.S | re.M)
_NOT_NEWLINE = re.compile(r"[^\n]")


def blank_comments(text: str) -> str:
    """The text with each comment's characters but newlines made spaces, so every place
    stays where it was; an unterminated `/*` or string is an error at its start."""
    if "/" not in text and '"' not in text:
        return text
    out, i = [], 0
    for m in _COMMENT_OR_STRING.finditer(text):
        token = m.group()
        if token.startswith("/*") and not token.endswith("*/") or token == "/*/":
            raise PtxError("unterminated comment '/*'", *_Text(text).place(m.start()))
        if token.startswith('"') and (len(token) < 2 or not token.endswith('"')):
            raise PtxError("unterminated string", *_Text(text).place(m.start()))
        out.append(text[i:m.start()])
        out.append(token if token[0] == '"' else " " * len(token) if token[1] == "/"
                   else _NOT_NEWLINE.sub(" ", token))
        i = m.end()
    out.append(text[i:])
    return "".join(out)


# Directives that end with their line rather than with `;` (ptxas's grammar).
LINE_DIRECTIVES = (".version", ".target", ".address_size", ".file", ".loc", ".maxntid",
                   ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg", ".maxclusterrank",
                   ".reqnctapercluster", ".explicitcluster", ".noreturn", ".blocksareclusters")

# The scanner: one pass over the text, each step a compiled pattern that searches from
# where the last stopped, so reading is linear in the text. Between its stops a
# statement holds nothing that can end it: an instruction of a module can end only at
# `;`, `{`, `}` (or a string or parenthesis that hides them); a directive or a
# snippet's statement also at a newline.
_SPACE = re.compile(r"\s*")
_WORD = re.compile(r"\S*")
_NEXT_WORD = re.compile(r"\s*(\S*)")
_STOPS_IN_MODULE = re.compile(r'[;{}()"]')
_STOPS_IN_LINE = re.compile(r'[;{}()"\n]')


def split_statements(text: str, *, spans_lines: bool) -> list[Statement]:
    """The statements of `text` in order. With `spans_lines` (a module) an instruction
    runs to its `;`; without (a snippet) it also stops at the end of its line, unended."""
    return list(iter_statements(text, spans_lines=spans_lines))


def iter_statements(text: str, *, spans_lines: bool) -> Iterator[Statement]:
    """`split_statements`, one statement at a time (an error is raised where it is met)."""
    clean = blank_comments(text)
    places = _Text(clean)
    i, n = 0, len(clean)
    line, line_start = 1, 0  # of position `i`: kept as `i` moves, for the common case
    while True:
        if spans_lines and (m := _SIMPLE.match(clean, i)):
            # the common case, a statement up to its `;`: placed without a search
            i = m.start(1)
            if newlines := clean.count("\n", line_start, i):
                line += newlines
                line_start = clean.rindex("\n", 0, i) + 1
            body = m.group(1).rstrip()
            kind = "directive" if body[0] == "." else "instruction"
            stop = i + len(body)
            if "\n" in body:
                yield Statement(kind, body, line, i - line_start + 1, True, places.place(stop))
            else:
                yield Statement(kind, body, line, i - line_start + 1, True,
                                (line, stop - line_start + 1))
            i = m.end()
            continue
        if (i := _SPACE.match(clean, i).end()) >= n:
            return
        ch = clean[i]
        if ch in "{}":
            yield Statement("open" if ch == "{" else "close", ch, *places.place(i),
                            end=places.place(i + 1))
            i += 1
        elif ch == ";":
            raise PtxError("empty statement: ';' with no instruction before it",
                           *places.place(i))
        elif ch not in ".@" and (m := LABEL.match(clean, i)):
            yield Statement("label", m.group(1), *places.place(i), end=places.place(m.end()))
            i = m.end()
        else:
            stmt, i = _statement(clean, i, places, spans_lines)
            yield stmt
        line = places.place(i)[0]
        line_start = places.starts[line - 1]


# A statement of a module that `_statement` would end at its `;` with nothing on the way
# that could end it sooner or hide its end (`{`, `}`, `(`, `)`, a string): an instruction
# (not a label: no `name:` at its start), or a directive on one line (`.reg .b32 %r<5>;`).
_SIMPLE = re.compile(r'\s*(?!%?[A-Za-z_$][A-Za-z0-9_$]*\s*:(?!:))'
                     r'(\.[^;{}()"\n]*|[^\s.;{}()"][^;{}()"]*);')


def _statement(clean: str, start: int, places: _Text, spans_lines: bool) -> tuple[Statement, int]:
    """One instruction or directive from `start`: up to its `;` (consumed), or up to a
    `{`/`}`/newline that ends it without one (not consumed)."""
    directive = clean[start] == "."
    line_directive = _WORD.match(clean, start).group() in LINE_DIRECTIVES
    stops = _STOPS_IN_MODULE if spans_lines and not directive else _STOPS_IN_LINE
    parens = braces = 0  # `(` of a parameter list; `{` of an initialiser or `{lo, hi}`
    i = start
    while m := stops.search(clean, i):
        i = m.start()
        ch = clean[i]
        if ch == '"':
            i = clean.index('"', i + 1) + 1  # blank_comments vouched for its end
            continue
        if ch == ";" and not parens and not braces:
            return _make(clean, start, i, places, True), i + 1
        if ch == "\n" and not parens and not braces and (
                line_directive or not spans_lines or directive and _line_directive_at(clean, i)):
            return _make(clean, start, i, places, line_directive), i
        if ch in "()":
            parens += 1 if ch == "(" else -1
        elif ch == "{":
            if directive and not parens and "=" not in clean[start:i]:
                return _make(clean, start, i, places, True), i  # a function body or block
            braces += 1
        elif ch == "}":
            if not braces:
                return _make(clean, start, i, places, False), i
            braces -= 1
        i += 1
    return _make(clean, start, len(clean), places, line_directive), len(clean)


def _line_directive_at(clean: str, i: int) -> bool:
    """Whether the next word after `i` is a line directive (`.maxntid` after a header)."""
    return _NEXT_WORD.match(clean, i).group(1) in LINE_DIRECTIVES


def _make(clean: str, start: int, stop: int, places: _Text, ended: bool) -> Statement:
    text = clean[start:stop].rstrip()
    kind = "directive" if text.startswith(".") else "instruction"
    return Statement(kind, text, *places.place(start), ended,
                     places.place(start + len(text)))
