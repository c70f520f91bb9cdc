"""A claimed miscompile, as a TOML or JSON claim file (docs/triage.md).

    title = "llc-14: a 64-bit rotate by a variable amount"   # optional
    link = "https://github.com/llvm/llvm-project/issues/..." # optional
    [ptx]        # the PTX the claim is about: text = "..." or file = "x.ptx"; function
    [ir]         # the LLVM IR it was compiled from: text or file; function (without
                 # [ptx]: the PTX llvmlite's LLVM makes of it, as `ptxsmt tv`)
    [reference]  # or: other PTX said to compute something else (text or file; function)
    [inputs]     # NAME = value: registers, parameters, memory, as `ptxsmt eval` takes them
                 # (with [ir], an IR argument's name too: the parameter it is passed in)
    [reported]   # got = {OUTPUT = value} (the value said to be wrong); expected = {...}
    [options]    # target = "sm_90", nan = "payload-free" | "exact", unroll = K; for IR
                 # compiled here: mcpu = "sm_80", opt = 2, mattr = "+ptx80" (llc's -mattr)

What the PTX is measured against: the IR (LangRef) with `[ir]`, the other PTX with
`[reference]`, and else the PTX ISA itself, which then needs `[inputs]` and
`[reported].got`. A bad field is one `ClaimError` naming the file and the field.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..isa.errors import PtxError, quote
from ..isa.outline import declares_functions
from ..isa.source import read_text
from ..isa.targets import parse_target
from ..llvm.module import parse_features
from ..sem.options import DEFAULT_NAN, NAN_POLICIES

READERS = {".toml": tomllib.loads, ".json": json.loads}
CODE_FIELDS = ("text", "file", "function")
# the fields a claim may have, and for each table the keys it may hold
FIELDS: dict[str, tuple[str, ...] | None] = {
    "title": None, "link": None, "ptx": CODE_FIELDS, "ir": CODE_FIELDS,
    "reference": CODE_FIELDS, "inputs": None, "reported": ("got", "expected"),
    "options": ("target", "nan", "unroll", "mcpu", "opt", "mattr"),
}
COMPILE_OPTIONS = ("mcpu", "opt", "mattr")  # how IR is compiled here (no [ptx])
MAX_UNROLL = 64


class ClaimError(PtxError):
    """A claim file that cannot be triaged: unreadable, not TOML/JSON, a field missing,
    of the wrong type or naming something that is not there."""


@dataclass(frozen=True)
class Code:
    """PTX or IR the claim gives: its text, the file it came from (None: inline), and the
    function named (None: the only one, or the IR's for PTX)."""

    field: str  # "ptx", "ir" or "reference": where it is in the claim
    text: str
    path: str | None
    function: str | None
    made: str = ""  # how ptxsmt made it ("" if the claim gives it)

    @property
    def is_module(self) -> bool:
        """A module with functions (else a snippet of instructions)."""
        return self.field == "ir" or declares_functions(self.text)


@dataclass(frozen=True)
class Claim:
    path: str
    ptx: Code | None  # None: compiled from the IR
    ir: Code | None = None
    reference: Code | None = None
    title: str = ""
    link: str = ""
    inputs: dict[str, str | int | bool] = field(default_factory=dict)
    got: dict[str, str | int | bool] = field(default_factory=dict)
    expected: dict[str, str | int | bool] = field(default_factory=dict)
    target: str = "sm_90"
    nan: str = DEFAULT_NAN
    unroll: int = 0
    mcpu: str = "sm_80"  # IR compiled here: llvmlite's NVPTX backend, as `ptxsmt tv`
    opt: int = 2
    mattr: str = ""  # LLVM target features, as llc's -mattr: "+ptx80"

    @property
    def against(self) -> str:
        """What the PTX is measured against: "ir", "reference" (other PTX) or "isa"."""
        return "ir" if self.ir else "reference" if self.reference else "isa"


def read_claim(path: str | Path) -> Claim:
    """The claim in the file at `path` (.toml or .json), its code files read relative to
    it; raise ClaimError naming the file and the field at fault."""
    path = str(path)
    reader = READERS.get(Path(path).suffix.lower())
    if reader is None:
        raise ClaimError(f"{path}: a claim file is .toml or .json")
    try:
        data = reader(read_text(path))
    except PtxError as e:
        raise ClaimError(str(e)) from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
        raise ClaimError(f"{path}: not {Path(path).suffix[1:].upper()}: {e}") from None
    return _claim(path, data)


def _claim(path: str, data: object) -> Claim:
    def bad(where: str, what: str) -> ClaimError:
        return ClaimError(f"{path}: {where}: {what}")

    if not isinstance(data, dict):
        raise bad("the claim", "is not a table of fields")
    for key, value in data.items():
        if key not in FIELDS:
            raise bad(quote(key), f"unknown field (a claim has {', '.join(FIELDS)})")
        keys = FIELDS[key]
        if keys is None:
            continue
        if not isinstance(value, dict):
            raise bad(f"[{key}]", f"is a table ({', '.join(keys)})")
        for k in value:
            if k not in keys:
                raise bad(f"[{key}] {quote(k)}", f"unknown field ([{key}] has {', '.join(keys)})")
    for key in ("title", "link"):
        if not isinstance(data.get(key, ""), str):
            raise bad(key, "is a string")
    if "ptx" not in data and "ir" not in data:
        raise bad("[ptx]", "missing: the PTX the claim is about (text = \"...\" or "
                           "file = \"x.ptx\"), or [ir] to compile")
    if "ir" in data and "reference" in data:
        raise bad("[reference]", "give [ir] or [reference] (what the PTX is measured "
                                 "against), not both")
    options = _options(data.get("options", {}), bad)
    if "ptx" in data and (compiling := [k for k in COMPILE_OPTIONS if k in options]):
        raise bad(f"[options] {compiling[0]}", "is for IR compiled here (a claim without "
                                               "[ptx])")
    base = Path(path).parent
    codes = {k: _code(k, data[k], base, bad) for k in ("ptx", "ir", "reference") if k in data}
    inputs = _values(data.get("inputs", {}), "[inputs]", bad)
    reported = data.get("reported", {})
    got = _values(reported.get("got", {}), "[reported] got", bad)
    expected = _values(reported.get("expected", {}), "[reported] expected", bad)
    if "ir" not in codes and "reference" not in codes and not (inputs and got):
        raise bad("[reported] got" if inputs else "[inputs]",
                  "missing: a claim without [ir] or [reference] is measured against the "
                  "PTX ISA, at the claim's [inputs], where [reported] got says what was "
                  "seen")
    if "reference" in codes and codes["ptx"].is_module != codes["reference"].is_module:
        kinds = {True: "a module", False: "a snippet"}
        raise bad("[reference]", f"is {kinds[codes['reference'].is_module]} and [ptx] "
                                 f"{kinds[codes['ptx'].is_module]}: give two snippets or two "
                                 "modules' functions")
    if "ir" in codes and "ptx" in codes and not codes["ptx"].is_module:
        raise bad("[ptx]", "against [ir] the PTX is a module's function (a .func or "
                           ".entry), not a snippet")
    return Claim(path, codes.get("ptx"), codes.get("ir"), codes.get("reference"),
                 data.get("title", ""), data.get("link", ""), inputs, got, expected,
                 **options)


def _code(key: str, table: dict, base: Path, bad) -> Code:
    if ("text" in table) == ("file" in table):
        raise bad(f"[{key}]", "give text = \"...\" or file = \"PATH\" (one of them)")
    for k in CODE_FIELDS:
        if k in table and not isinstance(table[k], str):
            raise bad(f"[{key}] {k}", "is a string")
    function = table.get("function")
    if "text" in table:
        text, where = table["text"], None
    else:
        where = os.path.normpath(base / table["file"])
        try:
            text = read_text(where)
        except PtxError as e:
            raise bad(f"[{key}] file", str(e)) from None
    if not text.strip():
        raise bad(f"[{key}]", "is empty")
    return Code(key, text, where, function)


def _values(table: object, where: str, bad) -> dict[str, str | int | bool]:
    if not isinstance(table, dict):
        raise bad(where, "is a table NAME = value")
    for k, v in table.items():
        if not isinstance(v, str | int | bool):
            raise bad(f"{where} {quote(k)}", "is a string (\"0x7fc00000\", \"-0.0\"), an "
                                            "integer or a boolean")
    return dict(table)


def _options(table: dict, bad) -> dict:
    out = {}
    if "target" in table:
        try:
            parse_target(str(table["target"]))
        except PtxError as e:
            raise bad("[options] target", e.message) from None
        out["target"] = str(table["target"])
    if "nan" in table:
        if table["nan"] not in NAN_POLICIES:
            raise bad("[options] nan", f"is one of {', '.join(NAN_POLICIES)}")
        out["nan"] = table["nan"]
    if "unroll" in table:
        unroll = table["unroll"]
        if isinstance(unroll, bool) or not isinstance(unroll, int) \
                or not 0 <= unroll <= MAX_UNROLL:
            raise bad("[options] unroll", f"is an integer from 0 to {MAX_UNROLL}")
        out["unroll"] = unroll
    if "mcpu" in table:
        try:
            parse_target(str(table["mcpu"]))
        except PtxError as e:
            raise bad("[options] mcpu", e.message) from None
        out["mcpu"] = str(table["mcpu"])
    if "opt" in table:
        if table["opt"] not in (0, 1, 2, 3) or isinstance(table["opt"], bool):
            raise bad("[options] opt", "is 0, 1, 2 or 3")
        out["opt"] = table["opt"]
    if "mattr" in table:
        try:
            out["mattr"] = parse_features(str(table["mattr"]))
        except PtxError as e:
            raise bad("[options] mattr", e.message) from None
    return out
