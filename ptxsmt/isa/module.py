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
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from itertools import chain

from . import outline
from .body import Body, Generic, _generic, check_labels, read_address, read_body, vector_elements
from .errors import PtxError, quote
from .literals import LiteralError, parse_immediate
from .statements import Statement, blank_comments, iter_statements, split_statements
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
    # the body's statements while it is not read (`read_module(..., only=...)`)
    source: list[Statement] | None = field(default=None, repr=False, compare=False)
    # the module's functions with a body, by name (calls are followed into them)
    module: dict[str, Function] = field(default_factory=dict, repr=False, compare=False)
    # the module's variables (`.global`, `.const` ...) its body or a callee's names, by name
    variables: dict[str, ModuleVariable] = field(default_factory=dict, repr=False,
                                                 compare=False)
    # the module's `.target` and `.version`, where its header gives both
    header: tuple[Target, tuple[int, int]] | None = field(default=None, repr=False,
                                                          compare=False)

    @property
    def defined(self) -> bool:
        """Whether the module gives its body (read or not), not only a prototype."""
        return self.body is not None or self.source is not None


@dataclass(frozen=True)
class ModuleVariable:
    """`.global .align 4 .b8 tbl[8] = {3, 0, 0, 0, 14};` at module level: its state space,
    declaration, initial bytes (little-endian, the elements an initializer leaves out
    zero; None: no initializer, or one that names an address) and whether other modules
    or the host can name it (`.visible`, `.extern`, `.weak`, `.common`)."""

    space: str
    declaration: Param
    initial: bytes | None
    linked: bool
    written: bool = False  # some instruction of the module may write it (`written_variables`)


@dataclass
class Module:
    version: tuple[int, int] | None = None
    target: Target | None = None
    target_options: tuple[str, ...] = ()  # `.target sm_90, debug`: the words after the sm_
    address_size: int | None = None
    functions: list[Function] = field(default_factory=list)
    variables: list[Statement] = field(default_factory=list)  # module-level state spaces
    unread: list[str] = field(default_factory=list)  # functions defined, left out (`only`)


LINKAGE = (".visible", ".weak", ".extern", ".weak_odr", ".common")
STATE_SPACES = (".global", ".shared", ".const", ".local", ".tex")
PERFORMANCE = (".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg",
               ".maxclusterrank", ".reqnctapercluster", ".explicitcluster", ".noreturn",
               ".blocksareclusters", ".pragma")
SKIPPED = (".file", ".pragma", ".loc", ".alias")  # `.alias baz, bar;`: LLVM's GlobalAlias
_HEADER = {".version", ".target", ".address_size"}


def read_module(text: str, *, only: str | None = None) -> Module:
    """Read a whole file; raise `PtxError` naming the first thing it cannot read. With
    `only`, the body of that function and of those it calls (transitively) is read, the
    definitions of the others are left out unread (`outline.only`: an error in one is
    not met; `Module.unread` names them); a function defined twice is refused all the
    same."""
    module = Module()
    if only is not None:
        text, module.unread = outline.only(text, only)
    for _ in read_functions(text, module, only=only):
        pass
    return module


def read_functions(text: str, module: Module, *, only: str | None = None,
                   seen: dict | None = None) -> Iterator[Function]:
    """Read `text` into `module` in order (its header, variables and functions), yielding
    each function as soon as it is read, so a caller can answer it before the next is
    read. `only`: as `read_module`; `seen`: as `body.read_body`."""
    statements = _Lookahead(iter_statements(text, spans_lines=True))
    defined: dict[str, Function] = {}
    while (st := statements.peek()) is not None:
        words = st.text.split()
        if st.kind != "directive":
            raise PtxError(f"expected a directive (.version, .entry, ...) at module level, "
                           f"found {quote(st.text if st.kind != 'instruction' else st.head)}",
                           st.line, st.col)
        next(statements)
        if st.head in _HEADER:
            _header(module, st)
        elif st.head == ".section":
            if statements.opens():
                statements.block(st)
        elif st.head in SKIPPED:
            pass
        elif ".entry" in words or ".func" in words:
            fn = _function(module, st, statements, defined)
            if fn.source is not None and only is None:
                _read(fn, seen)
            yield fn
        elif any(w in STATE_SPACES for w in words[:3]) or st.head in LINKAGE:
            if not st.ended:
                raise PtxError("missing ';' at the end of the declaration", *st.end)
            module.variables.append(st)
        else:
            raise PtxError(f"unknown directive {quote(st.head)}", st.line, st.col)
    if only is not None:
        wanted = [only]
        while wanted:
            fn = defined.get(wanted.pop())
            if fn is not None and fn.source is not None:
                _read(fn, seen)
                wanted += called(fn.body)


def _read(fn: Function, seen: dict | None) -> None:
    fn.body = read_body(fn.source, module=True, seen=seen)
    fn.source = None


class _Lookahead:
    """The module's statements, read as they are needed, with one of lookahead."""

    def __init__(self, statements: Iterator[Statement]):
        self._statements = statements
        self._next: Statement | None = next(statements, None)

    def peek(self) -> Statement | None:
        return self._next

    def __next__(self) -> Statement:
        st = self._next
        if st is None:
            raise StopIteration
        self._next = next(self._statements, None)
        return st

    def opens(self) -> bool:
        return self._next is not None and self._next.kind == "open"

    def block(self, owner: Statement) -> list[Statement]:
        """The statements inside the `{ ... }` that comes next (its braces consumed)."""
        first = next(self)
        depth, inside = 1, []
        pending = () if self._next is None else (self._next,)
        for st in chain(pending, self._statements):  # the lookahead is refilled at the end
            kind = st.kind
            if kind == "open":
                depth += 1
            elif kind == "close":
                depth -= 1
                if depth == 0:
                    self._next = next(self._statements, None)
                    return inside
            inside.append(st)
        raise PtxError(f"{quote('{')} is never closed", first.line, first.col)

    def __iter__(self) -> Iterator[Statement]:
        return self


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


def _function(module: Module, st: Statement, statements: _Lookahead,
              defined: dict[str, Function]) -> Function:
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
    while (nxt := statements.peek()) is not None and nxt.head in PERFORMANCE:
        fn.performance.append(next(statements).text)
    if not statements.opens():
        if st.ended:
            return fn  # `.extern .func f(...);`: a prototype
        raise PtxError(f"expected '{{' or ';' after the {kind} {fn.name}", *st.end)
    brace = statements.peek()
    if fn.name in defined:
        # ptxas names the line of a `.func`'s `{`, of an `.entry`'s signature's end
        line, col = (brace.line, brace.col) if kind == ".func" else st.end
        raise PtxError(f"Duplicate definition of function '{fn.name}' (ptxas; first "
                       f"defined on line {defined[fn.name].line})", line, col)
    defined[fn.name] = fn
    fn.source = statements.block(st)
    check_labels(fn.source)
    return fn


def operand_names(body: Body) -> set[str]:
    """The names a body's operands spell: the functions it calls and the variables it
    uses among them."""
    return {n for g in body.generic for o in g.operands for n in outline.NAME.findall(o)}


def called(body: Body) -> list[str]:
    """The functions a body calls by name (`call.uni (retval0), f, (param0);`)."""
    names = []
    for item in body.generic:
        if item.opcode == "call":
            names += [o for o in item.operands if _CALLEE.fullmatch(o)]
    return names


_CALLEE = re.compile(r"[A-Za-z_$][\w$]*")


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


def read_module_variable(text: str, line: int, col: int) -> tuple[str, ModuleVariable]:
    """(name, variable) of a module-level declaration; a `.const`/`.global` variable
    without an initializer holds zeros (PTX ISA 5.1.4, 5.1.3: "initialized to zero by
    default")."""
    text = text.strip().removesuffix(";")
    space, v = read_variable(text, line, col)
    words = text.split("=")[0].split()
    linked = any(w in words for w in (".visible", ".extern", ".weak", ".common"))
    size = v.type.width // 8 * (v.array or 1)
    _, eq, init = text.partition("=")
    data: bytes | None = bytes(size)
    if eq:
        data = _initial_bytes(init.strip().rstrip(";").strip(), v.type, size)
    if ".extern" in words or space not in ("global", "const") or v.array == 0:
        data = None
    return v.name, ModuleVariable(space, v, data, linked)


WRITES = {"st": 0, "red": 0, "atom": 1}  # opcode -> the operand that is an address


def written_variables(text: str, names: set[str]) -> set[str]:
    """The variables of `names` that some instruction of the module may write, or whose
    address it lets escape: a `st`/`atom`/`red` through an address computed from the
    variable's (`mov.u64 %rd1, tbl; add.s64 %rd2, %rd1, 4; st.u32 [%rd2], ...`), or that
    address stored as a value (`st.param` to a call's argument included). Registers
    carry the variables their values are computed from within one function body (its
    nested blocks joined: more variables written, never fewer). Only the bodies that
    spell one of `names` are read: no other can write them (each variable's flow is
    its own)."""
    if not names:
        return set()
    clean = blank_comments(text)
    found = outline.definitions(clean)
    written: set[str] = set()
    for body in [clean] if found is None else (clean[d.start:d.end] for d in found.values()):
        if spelled := {n for n in names if n in body}:
            written |= _written_in(body, spelled)
    return written


def _written_in(body: str, names: set[str]) -> set[str]:
    try:
        statements = split_statements(body, spans_lines=True)
    except PtxError:  # a body left unread (`outline`) that cannot be: it may write them all
        return names
    instructions = []
    for st in statements:
        if st.kind == "instruction":
            with suppress(PtxError):
                instructions.append(_generic(st))
    return _written(instructions, names)


def _written(instructions: list[Generic], names: set[str]) -> set[str]:
    carried: dict[str, set[str]] = {}
    written: set[str] = set()

    def origins(operand: str) -> set[str]:
        found = read_address(operand)
        tokens = [found[0]] if found else vector_elements(operand)
        out: set[str] = set()
        for token in (t.lstrip("!-") for t in tokens):
            out |= ({token} if token in names else set()) | carried.get(token, set())
        return out

    changed = True
    while changed:  # to a fixpoint: a loop uses registers written below
        changed = False
        for g in instructions:
            if g.opcode in WRITES and len(g.operands) > WRITES[g.opcode]:
                at = WRITES[g.opcode]
                new = origins(g.operands[at]) | set().union(
                    *(origins(o) for o in g.operands[at + 1:]))
                if not new <= written:
                    written |= new
                    changed = True
            elif g.opcode not in ("ld", "ldu") and g.operands:
                new = set().union(*(origins(o) for o in g.operands[1:]))
                for d in g.destinations():
                    if not new <= carried.get(d, set()):
                        carried[d] = carried.get(d, set()) | new
                        changed = True
    return written


def _initial_bytes(text: str, t: PtxType, size: int) -> bytes | None:
    """`{3, 0, 14}` (or `{{1, 2}, {3, 4}}`, or one value) as `size` bytes of .t elements,
    little-endian; None where an element is not a literal (`generic(foo)`, `foo+4`)."""
    width = t.width // 8
    out = bytearray()
    for element in filter(None, (e.strip() for e in text.replace("{", ",").replace("}", ",")
                                 .split(","))):
        try:
            bits = parse_immediate(element, t)
        except LiteralError:
            return None
        if isinstance(bits, bool):
            return None
        out += (bits % (1 << t.width)).to_bytes(width, "little")
    if len(out) > size:
        return None
    return bytes(out) + bytes(size - len(out))


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
