"""A PTX module (a `.ptx` file as nvcc or LLVM emits it) -> header facts and functions.

    .version 8.4
    .target sm_90
    .address_size 64
    .visible .entry k(.param .u64 .ptr .align 1 k_param_0, .param .u32 k_param_1)
    .maxntid 128, 1, 1
    { .reg .b32 %r<5>; ... }
    .func (.param .b32 func_retval0) f(.param .b32 f_param_0) { ... }

Module-level variables (`.global .align 4 .b8 t[8] = {...};`), `.file`, `.pragma` and
`.section` debug blocks are recorded or skipped; function bodies are read by `body.py`.
A function keeps its parameters and return parameters by name and type, so a later
reader can make `ld.param` an input and `st.param` of a return parameter an output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .body import Body, read_body
from .errors import PtxError, quote
from .statements import Statement, skip_block, split_statements
from .targets import Target, parse_target, parse_version
from .types import TYPES, PtxType


@dataclass(frozen=True)
class Param:
    """`.param .align 8 .b8 p[16]` or `.param .u64 .ptr .global .align 4 p`."""

    name: str
    type: PtxType
    array: int | None = None  # p[16]: 16 elements
    align: int | None = None
    attributes: tuple[str, ...] = ()  # ".ptr", ".global", ...


@dataclass
class Function:
    name: str
    kind: str  # "entry" or "func"
    linkage: tuple[str, ...]  # ".visible", ".weak", ".extern"
    params: list[Param]
    returns: list[Param]  # `.func (.param .b32 r) f(...)`
    body: Body | None  # None: a declaration (prototype) without a body
    line: int
    col: int
    performance: list[str] = field(default_factory=list)  # `.maxntid 128, 1, 1` ...
    # the module's functions with a body, by name (calls are followed into them)
    module: dict[str, Function] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Module:
    version: tuple[int, int] | None = None
    target: Target | None = None
    target_options: tuple[str, ...] = ()  # `.target sm_90, debug`: the words after the sm_
    address_size: int | None = None
    functions: list[Function] = field(default_factory=list)
    variables: list[Statement] = field(default_factory=list)  # module-level state spaces


LINKAGE = (".visible", ".weak", ".extern", ".weak_odr", ".common")
STATE_SPACES = (".global", ".shared", ".const", ".local", ".tex")
PERFORMANCE = (".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg",
               ".maxclusterrank", ".reqnctapercluster", ".explicitcluster", ".noreturn",
               ".blocksareclusters", ".pragma")
SKIPPED = (".file", ".pragma", ".loc", ".alias")  # `.alias baz, bar;`: LLVM's GlobalAlias
_HEADER = {".version", ".target", ".address_size"}


def read_module(text: str) -> Module:
    """Read a whole file; raise `PtxError` naming the first thing it cannot read."""
    statements = split_statements(text, spans_lines=True)
    module, i = Module(), 0
    while i < len(statements):
        st = statements[i]
        words = st.text.split()
        if st.kind != "directive":
            raise PtxError(f"expected a directive (.version, .entry, ...) at module level, "
                           f"found {quote(st.text if st.kind != 'instruction' else st.head)}",
                           st.line, st.col)
        if st.head in _HEADER:
            _header(module, st)
            i += 1
        elif st.head == ".section":
            i = skip_block(statements, i + 1) if _opens(statements, i + 1) else i + 1
        elif st.head in SKIPPED:
            i += 1
        elif ".entry" in words or ".func" in words:
            i = _function(module, statements, i)
        elif any(w in STATE_SPACES for w in words[:3]) or st.head in LINKAGE:
            if not st.ended:
                raise PtxError("missing ';' at the end of the declaration", *st.end)
            module.variables.append(st)
            i += 1
        else:
            raise PtxError(f"unknown directive {quote(st.head)}", st.line, st.col)
    return module


def _opens(statements: list[Statement], i: int) -> bool:
    return i < len(statements) and statements[i].kind == "open"


def _header(module: Module, st: Statement) -> None:
    head, _, rest = st.text.partition(" ")
    rest = rest.strip()
    col = st.col + len(st.text) - len(rest)
    try:
        if head == ".version":
            module.version = parse_version(rest)
        elif head == ".target":
            first, *options = [w.strip() for w in rest.split(",")]
            module.target = parse_target(first)
            module.target_options = tuple(options)
        elif not rest.isdigit() or rest not in ("32", "64"):
            raise PtxError(f".address_size is 32 or 64, not {quote(rest)}")
        else:
            module.address_size = int(rest)
    except PtxError as e:
        raise PtxError(e.message, st.line, col) from None


_SIGNATURE = re.compile(r"\s*(?:\((?P<returns>[^()]*)\)\s*)?(?P<name>[A-Za-z_$%][\w$]*)"
                        r"\s*(?:\((?P<params>[^()]*)\))?\s*(?P<tail>(?:\.noreturn\s*)?)", re.S)


def _function(module: Module, statements: list[Statement], i: int) -> int:
    st = statements[i]
    words = st.text.split()
    kind = ".entry" if ".entry" in words else ".func"
    linkage = tuple(w for w in words[:words.index(kind)] if w in LINKAGE)
    unknown = [w for w in words[:words.index(kind)] if w not in LINKAGE]
    if unknown:
        raise PtxError(f"unknown directive {quote(unknown[0])} before {kind}", st.line, st.col)
    signature = st.text[st.text.index(kind) + len(kind):]
    m = _SIGNATURE.fullmatch(signature)
    if not m:
        raise PtxError(f"cannot read the {kind} signature {quote(signature.strip())}",
                       st.line, st.col)
    fn = Function(m.group("name"), kind[1:], linkage,
                  _params(m.group("params") or "", st), _params(m.group("returns") or "", st),
                  None, st.line, st.col)
    if m.group("tail"):  # `.func f() .noreturn`: the attribute follows the parameters
        fn.performance.append(m.group("tail").strip())
    module.functions.append(fn)
    i += 1
    while i < len(statements) and statements[i].head in PERFORMANCE:
        fn.performance.append(statements[i].text)
        i += 1
    if not _opens(statements, i):
        if st.ended:
            return i  # `.extern .func f(...);`: a prototype
        raise PtxError(f"expected '{{' or ';' after the {kind} {fn.name}", *st.end)
    end = skip_block(statements, i)
    fn.body = read_body(statements[i + 1:end - 1], module=True)
    return end


_PARAM = re.compile(r"\.param((?:\s+\.[A-Za-z0-9_]+(?:\s+\d+)?)+)\s+([A-Za-z_$%][\w$]*)"
                    r"\s*(?:\[\s*(\d*)\s*\])?", re.S)


def read_variable(text: str, line: int, col: int) -> tuple[str, Param]:
    """A variable's declaration, its initializer left out: `.shared .align 4 .b8 s[256]`
    -> ("shared", Param("s", .b8, 256, 4))."""
    space, _, rest = text.partition("=")[0].strip().partition(" ")
    while space in (".extern", ".visible", ".weak", ".common") and rest:
        space, _, rest = rest.strip().partition(" ")
    found = _params(".param " + rest, Statement("directive", text, line, col))
    if len(found) != 1:
        raise PtxError(f"cannot read the variable {quote(text)}", line, col)
    return space.lstrip("."), found[0]


def _params(text: str, st: Statement) -> list[Param]:
    out = []
    for raw in filter(str.strip, text.split(",")):
        m = _PARAM.fullmatch(raw.strip())
        if not m:
            raise PtxError(f"cannot read the parameter {quote(raw.strip())}", st.line, st.col)
        words = m.group(1).split()
        types = [w for w in words if w[1:] in TYPES]
        align = words[words.index(".align") + 1] if ".align" in words else None
        if len(types) != 1 or (align is not None and not align.isdigit()):
            raise PtxError(f"cannot read the parameter {quote(raw.strip())}", st.line, st.col)
        attributes = tuple(w for w in words if w.startswith(".") and w not in (*types, ".align"))
        array = int(m.group(3)) if m.group(3) else None
        out.append(Param(m.group(2), TYPES[types[0][1:]], array,
                         int(align) if align else None, attributes))
    return out
