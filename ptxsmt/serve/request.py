"""A request: two inputs (snippets, two PTX functions, or IR and the PTX it was compiled
to), the function names and the options, read from a form or a JSON body with a bound on
every part; its content address (inputs, options and ptxsmt's build) is its permalink."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import pairs
from ..isa.errors import PtxError, quote
from ..isa.outline import declares_functions
from ..sem.options import DEFAULT_NAN
from ..smt.solving import verdicts

KINDS = ("snippets", "functions", "ir")
MAX_SIDE = 256 * 1024  # bytes of one input: a few thousand PTX lines
MAX_NAME = 256
DEFAULTS = {"timeout": 10.0, "target": "sm_90", "vset_merge": "c", "solver": "auto",
            "unroll": 0, "nan": DEFAULT_NAN}
FIELDS = {"kind", "lhs", "rhs", "function", "function_b", "outputs", *DEFAULTS}
# the file names a worker writes each kind's inputs to, and that its replay lines name
FILES = {"functions": ("a.ptx", "b.ptx"), "ir": ("a.ll", "b.ptx")}
_IR = re.compile(r"^\s*define\b", re.MULTILINE)


class BadRequest(Exception):
    """What is wrong with a request, in one line naming the field."""


@dataclass(frozen=True)
class Request:
    kind: str
    lhs: str
    rhs: str
    function: str | None
    function_b: str | None
    options: dict  # every option, defaults filled in (pairs.OPTIONS)

    def digest(self) -> str:
        return verdicts.pair_digest(self.kind, [self.lhs.encode(), self.rhs.encode()],
                                    [self.function, self.function_b])

    def key(self) -> str:
        """The permalink: the inputs, every option and this build of ptxsmt and Z3."""
        return verdicts.address(self.digest(), self.options)

    def pair(self, folder: Path) -> pairs.Pair:
        """The pair `ptxsmt.pairs` decides; a file pair's inputs written to `folder`."""
        if self.kind == "snippets":
            return pairs.Pair(0, "snippets", self.lhs, self.rhs, options=self.options)
        paths = [folder / name for name in FILES[self.kind]]
        for path, text in zip(paths, (self.lhs, self.rhs)):
            path.write_text(text)
        return pairs.Pair(0, self.kind, str(paths[0]), str(paths[1]), self.function,
                          self.function_b or self.function, self.options)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> Request:
        return cls(**json.loads(text))


def parse(fields: dict, max_timeout: float) -> Request:
    """A request from a form's or a JSON body's fields (strings, or JSON values); raise
    BadRequest naming the first problem."""
    if unknown := sorted(set(fields) - FIELDS):
        raise BadRequest(f"unknown field {quote(unknown[0])} (fields: {', '.join(sorted(FIELDS))})")
    lhs, rhs = (_text(fields, side) for side in ("lhs", "rhs"))
    kind = _optional(fields, "kind") or "auto"
    if kind == "auto":
        kind = "ir" if _IR.search(lhs) else "functions" \
            if declares_functions(lhs) and declares_functions(rhs) else "snippets"
    if kind not in KINDS:
        raise BadRequest(f"kind {quote(kind)}: one of auto, {', '.join(KINDS)}")
    names = [_optional(fields, k) for k in ("function", "function_b")]
    if kind == "snippets" and any(names):
        raise BadRequest("function names apply to functions and IR, not to snippets")
    options = {**DEFAULTS, **{k: _number(k, fields[k]) if k in ("timeout", "unroll")
                              else fields[k] for k in DEFAULTS if _given(fields, k)}}
    if outputs := _optional(fields, "outputs"):
        if kind != "snippets":
            raise BadRequest("outputs applies to snippets only")
        options["outputs"] = [o.strip() for o in outputs.split(",")]
    if kind == "ir" and (given := [k for k in DEFAULTS if k not in pairs.IR_OPTIONS
                                   and options[k] != DEFAULTS[k]]):
        raise BadRequest(f"{given[0]} does not apply to IR against PTX")
    if isinstance(options["timeout"], int | float) and options["timeout"] > max_timeout:
        raise BadRequest(f"timeout {options['timeout']:g}: this server allows at most "
                         f"{max_timeout:g} s")
    try:  # every option checked where `equiv --batch` checks a line's
        pairs.parse_line(0, json.dumps({"lhs": "-", "rhs": "-", "options": options}),
                         {}, Path())
    except PtxError as e:
        raise BadRequest(str(e)) from None
    return Request(kind, lhs, rhs, *names, options)


def _given(fields: dict, key: str) -> bool:
    return fields.get(key) not in (None, "")


def _text(fields: dict, key: str) -> str:
    value = fields.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{key}: empty (paste PTX or IR here)")
    if "\0" in value:
        raise BadRequest(f"{key}: holds a NUL character (binary, not text)")
    if len(value.encode()) > MAX_SIDE:
        raise BadRequest(f"{key}: {len(value.encode()):,} bytes; this server takes at most "
                         f"{MAX_SIDE:,} a side")
    return value.replace("\r\n", "\n")


def _optional(fields: dict, key: str) -> str | None:
    value = fields.get(key)
    if value in (None, ""):
        return None
    if not isinstance(value, str) or len(value) > MAX_NAME or not value.strip():
        raise BadRequest(f"{key}: a name of at most {MAX_NAME} characters")
    return value.strip()


def _number(key: str, value: object) -> float | int:
    """A form's option text as the number `equiv --batch` takes (JSON's stays as it is)."""
    if not isinstance(value, str):
        return value
    try:
        number = float(value)
    except ValueError:
        raise BadRequest(f"{key} {quote(value)} is not a number") from None
    return int(number) if key == "unroll" and number.is_integer() else number
