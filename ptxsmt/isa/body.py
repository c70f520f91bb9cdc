"""Statements -> a body: instructions with their declared registers, labels, scopes.

One reader for a function body in a module and for a snippet (an inline-asm body is a
snippet: `{ .reg .pred p; setp.ne.b32 p, %1, 0; selp.u32 %0, 1, 0, p; }`). A register
named by a `.reg` in scope has that declared type, and an operand it cannot stand for
is an error naming both places (the rule is `registers.fits`). In a module every
register must be declared; in a snippet an undeclared one is typed by its use.

Instructions outside ptxsmt's families (ld, st, bra, add, ...) are kept as `Generic`
statements in a module, for later readers; a snippet refuses them, as ptxsmt always has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from .errors import NotModelled, PtxError, quote
from .opcodes import SYNTAX
from .registers import Register, Scope, fits, parse_reg
from .statements import Statement, split_statements
from .syntax import Guard, Instruction, opcode_col, parse_statement, require_legal
from .types import PRED, Kind, bit_type
from .variants import Variant, operand_types


class Generic(NamedTuple):
    """An instruction ptxsmt does not model, as written: `@%p1 ld.param.u32 %r1, [p];`."""

    opcode: str  # "ld"
    modifiers: tuple[str, ...]  # ("param", "u32")
    operands: tuple[str, ...]  # ("%r1", "[p]")
    guard: Guard | None
    line: int
    col: int
    text: str

    @property
    def spelled(self) -> str:
        """The instruction as messages show it: its text on one line, spaces collapsed."""
        return " ".join(self.text.split())

    def destinations(self) -> list[str]:
        """The registers its first operand names: `p|q` and `{a, b}` each give two."""
        return [d for part in self.operands[0].split("|") for d in vector_elements(part)]


class Label(NamedTuple):
    name: str
    line: int
    col: int


@dataclass(frozen=True)
class Checked:
    """An instruction of ptxsmt's families with the declaration of each register it
    names (none for a snippet's registers typed by use)."""

    instruction: Instruction
    registers: dict[str, Register] = field(default_factory=dict)


class Repeat(NamedTuple):
    """An instruction of ptxsmt's families read as a `Checked` one before in the same run:
    the same text but for the names of its registers, each declared with the same type
    (what the reading depends on), so it is legal or not as that one was. Only a reader
    that judges (`read_body(..., seen=...)`) gets these, not the whole instruction."""

    variant: Variant
    text: str
    line: int
    col: int  # of the opcode, after a guard, as `Instruction.col`


@dataclass(frozen=True)
class Rejected:
    """A statement of ptxsmt's families that ptxas refuses, and why."""

    text: str
    error: PtxError


class Directive(NamedTuple):
    """A directive the body only records: `.pragma "nounroll"`, `.loc 1 5 3`, `.local ...`."""

    name: str
    text: str
    line: int
    col: int

    @property
    def operands(self) -> tuple[str, ...]:
        """`.branchtargets L0, L1` -> ("L0", "L1")."""
        rest = self.text[len(self.name):]
        return tuple(p.strip() for p in _split_top(rest)) if rest.strip() else ()


Item = Checked | Generic | Label | Rejected | Directive | Repeat


@dataclass
class Body:
    items: list[Item] = field(default_factory=list)
    registers: list[Register] = field(default_factory=list)  # every `.reg`, in order
    skipped: int = 0  # a judge's reading (`seen`): instructions outside ptxsmt's families,
    # counted, not kept

    @property
    def checked(self) -> list[Checked]:
        return [i for i in self.items if isinstance(i, Checked)]

    @property
    def generic(self) -> list[Generic]:
        return [i for i in self.items if isinstance(i, Generic)]


# Directives a body may hold that ptxsmt records and otherwise leaves alone; LLVM writes
# `prototype_0 : .callprototype (...) _ (...);` before an indirect call and
# `$L_brx_0: .branchtargets $L__BB0_1, ...;` before a `brx.idx` (a switch's jump table).
BODY_DIRECTIVES = (".loc", ".pragma", ".local", ".shared", ".param", ".const", ".global",
                   ".maxnreg", ".file", ".callprototype", ".branchtargets", ".calltargets")


def read_body(statements: list[Statement], *, module: bool,
              seen: dict | None = None) -> Body:
    """A body from its statements (the function's own braces not included). With `seen`
    (a dict kept across the bodies of one run) an instruction whose text differs from one
    read before only in register names of the same declared types is a `Repeat`
    (nothing if that one was `Generic`), not parsed again, and an instruction outside
    ptxsmt's families is only counted (`Body.skipped`): what a judge of legality needs."""
    body, scope = Body(), Scope()
    typed: dict[str, str] = {}  # a judge's: each name's part in a shape, while scope holds
    for st in statements:
        kind = st.kind
        if kind == "instruction":
            if seen is None:
                body.items.append(_instruction(st, scope, module))
            elif item := _judged(st, scope, seen, typed):
                body.items.append(item)
            else:
                body.skipped += 1
        elif kind == "open":
            scope.open()
            typed.clear()
        elif kind == "close":
            if not scope.depth:
                raise PtxError("'}' closes no '{'", st.line, st.col)
            scope.close()
            typed.clear()
        elif kind == "label":
            body.items.append(Label(st.text, st.line, st.col))
        else:
            _directive(st, body, scope)
            typed.clear()
    if scope.depth:
        raise PtxError("'{' is never closed", *statements[-1].end)
    return body


_BRANCH = re.compile(r"(?:@\s*!?\s*\S+\s+)?br[ax](?:\.\w+)*\s+(?:.*,)?\s*([^,\s]+)", re.S)


def check_labels(statements: list[Statement]) -> None:
    """Refuse what ptxas refuses of a body's labels, naming the line as ptxas does: a label
    defined twice in one `{ }` scope, and a branch (`bra`, `brx.idx`, `.branchtargets`)
    to a label not defined in its scope or an enclosing one (before or after it)."""
    frames: list[tuple[dict[str, Statement], list[tuple[str, Statement]]]] = [({}, [])]
    for st in statements:
        if st.kind == "open":
            frames.append(({}, []))
        elif st.kind == "close" and len(frames) > 1:
            labels, wanted = frames.pop()
            frames[-1][1].extend(w for w in wanted if w[0] not in labels)
        elif st.kind == "label":
            if first := frames[-1][0].get(st.text):
                raise PtxError(f"Duplicate definition of label '{st.text}' (ptxas; first "
                               f"defined on line {first.line})", st.line, st.col)
            frames[-1][0][st.text] = st
        elif st.text[:1] in "@b" and (m := _BRANCH.fullmatch(st.text)):
            frames[-1][1].append((m.group(1), st))
        elif st.kind == "directive" and st.text.startswith(".branchtargets"):
            frames[-1][1].extend((name.strip(), st) for name in st.text[14:].split(","))
    labels, wanted = frames[0]
    missing = [(st.line, st.col, name) for name, st in wanted if name not in labels]
    if missing:
        line, col, name = min(missing)
        raise PtxError(f"Unknown symbol '{name}' (ptxas: no label of that name in scope)",
                       line, col)


def _directive(st: Statement, body: Body, scope: Scope) -> None:
    if st.head == ".reg":
        _require_end(st)
        for reg in parse_reg(st.text, st.line, st.col):
            for r in (reg, *reg.elements) if reg.vector > 1 else (reg,):  # `%v.x` too
                scope.declare(r)
                body.registers.append(r)
    elif st.head in BODY_DIRECTIVES:
        body.items.append(Directive(st.head, st.text, st.line, st.col))
    else:
        raise PtxError(f"unknown directive {quote(st.head)} in a function body", st.line, st.col)


def _require_end(st: Statement) -> None:
    if not st.ended:
        what = "instruction" if st.kind == "instruction" else "declaration"
        raise PtxError(f"missing ';' at the end of the {what}", *st.end)


_GUARD = re.compile(r"@\s*(!?)\s*(\S+)\s+")
_OPCODE = re.compile(r"[A-Za-z0-9_]*")
_LEAD = re.compile(r"(@\s*!?\s*\S+\s+|)([A-Za-z0-9_]*)\S*")  # guard, opcode, the rest of the head
# A name an operand may give: not after a `.` (`%r1.x`, a modifier), a `%`, a word
# character (`0f3F800000`) or `$`.
_OPERAND_NAME = re.compile(r"(?<![\w.$%])%?[A-Za-z_$][\w$]*")


def _judged(st: Statement, scope: Scope, seen: dict, typed: dict[str, str]) -> Item | None:
    """`_instruction` in a module, answered from `seen` when its shape was read before;
    None for an instruction outside ptxsmt's families (only counted)."""
    text = st.text
    lead = _LEAD.match(text)
    at, head = lead.end(1), lead.end()
    if lead.group(2) not in SYNTAX:
        _require_end(st)
        return None

    def part(m: re.Match) -> str:
        name = m.group()
        if (known := typed.get(name)) is None:
            reg = scope.lookup(name.lstrip("%"))
            known = typed[name] = name if reg is None else f"\0{reg.type.name}.v{reg.vector}\0"
        return known

    key = (_OPERAND_NAME.sub(part, text[:at]) + text[at:head]
           + _OPERAND_NAME.sub(part, text[head:]), st.ended)
    known = seen.get(key)
    if known is None:
        item = _instruction(st, scope, True)
        if isinstance(item, Checked):
            seen[key] = item.instruction.variant
        elif isinstance(item, Generic):
            seen[key] = Generic
        return item  # a Rejected one is read again: its message names its own registers
    if known is Generic:
        _require_end(st)
        return None
    return Repeat(known, text, st.line, opcode_col(text, st.col))


def _instruction(st: Statement, scope: Scope, module: bool) -> Item:
    """The one reading of an instruction, in a module or a snippet: what ptxsmt does not
    model is `Generic` in a module (NotModelled raised in a snippet), what ptxas refuses
    is `Rejected` (raised), the rest `Checked`."""
    rest = st.text[m.end():] if (m := _GUARD.match(st.text)) else st.text
    if module and _OPCODE.match(rest).group() not in SYNTAX:
        return _generic(st)
    try:
        ins = parse_statement(st.text, st.line, st.col)
        if module:  # a snippet's variant is judged against a target by its reader
            require_legal(ins)
    except NotModelled:
        if not module:
            raise
        return _generic(st)
    except PtxError as e:
        if not module:
            raise
        return Rejected(st.text, e)
    if module and ins.variant.syntax.partial and any(scope.lookup(r) is None for r in _names(ins)):
        # mov/cvt/add on what is not a register (`mov.u32 %r1, %tid.x`,
        # `mov.u64 %SP, __local_depot0` of a variable's address) are ordinary instructions
        # to ptxsmt: only its own forms on registers are judged
        return _generic(st)
    try:
        _require_end(st)
        declared = _declared(ins, scope, module)
    except PtxError as e:
        if not module:
            raise
        return Rejected(st.text, e)
    return Checked(ins, declared)


def _generic(st: Statement) -> Generic:
    guard = None
    text = st.text
    if m := _GUARD.match(text):
        guard = Guard(m.group(2).lstrip("%"), bool(m.group(1)), m.group(2))
        text = text[m.end():]
    head, operands = (*text.split(None, 1), "")[:2]  # a tab may end the opcode: `bra.uni\tL`
    opcode, *mods = head.split(".")
    if not operands.strip():
        parts = []
    elif "{" in operands or "(" in operands or _COMMA_IN_BRACKETS.search(operands):
        parts = [p.strip() for p in _split_top(operands)]
    else:
        parts = [p.strip() for p in operands.split(",")]
    _require_end(st)
    return Generic(opcode, tuple(mods), tuple(parts), guard, st.line, st.col, st.text)


_COMMA_IN_BRACKETS = re.compile(r"\[[^\]]*,")
_ADDRESS = re.compile(r"\[\s*([^\]+\s]+)\s*(?:\+\s*([-+]?\s*\w+))?\s*\]")


def read_address(operand: str) -> tuple[str, int] | None:
    """A memory operand: `[%rd1+8]` -> ("%rd1", 8), `[p]` -> ("p", 0); None if it is
    not one."""
    m = _ADDRESS.fullmatch(operand.strip())
    if not m:
        return None
    try:
        return m.group(1), int((m.group(2) or "0").replace(" ", ""), 0)
    except ValueError:
        return None


def vector_elements(operand: str) -> list[str]:
    """`{%r1, %r2}` -> its elements; a plain operand -> itself."""
    text = operand.strip()
    if text.startswith("{") and text.endswith("}"):
        return [e.strip() for e in _split_top(text[1:-1])]
    return [text]


def read_call(g: Generic) -> tuple[tuple[str, ...], str, tuple[str, ...], str | None]:
    """`call.uni (r), f, (a, b);` -> (("r",), "f", ("a", "b"), None); a last operand
    names the prototype of an indirect call (`call (r), %rd1, (a), proto;`)."""
    ops = list(g.operands)

    def inner(text: str) -> tuple[str, ...]:
        body = text.strip()[1:-1]
        return tuple(p.strip() for p in _split_top(body)) if body.strip() else ()

    results = inner(ops.pop(0)) if ops and ops[0].startswith("(") else ()
    if not ops:
        raise PtxError(f"{quote(g.text)} names no function", g.line, g.col)
    callee = ops.pop(0).strip()
    arguments = inner(ops.pop(0)) if ops and ops[0].startswith("(") else ()
    return results, callee, arguments, (ops[0].strip() if ops else None)


def _split_top(text: str) -> list[str]:
    """Operands split at commas outside `[...]`, `{...}` and `(...)`."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"[": 1, "{": 1, "(": 1, "]": -1, "}": -1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _declared(ins: Instruction, scope: Scope, module: bool) -> dict[str, Register]:
    """Each register's declaration, checked against the operand it stands for."""
    types = operand_types(ins.variant)
    uses = [(ins.guard.register, PRED, "", ins.col)] if ins.guard else []
    for slot, o in ins.operands.items():
        t = bit_type(types[slot].width // len(o.elements)) if o.kind == "vec" else types[slot]
        uses += [(name, t, slot, o.col) for name in o.registers]
    found: dict[str, Register] = {}
    for name, t, slot, col in uses:
        what = f"operand {slot}" if slot else "the guard"
        reg = scope.lookup(name)
        if reg is None and "." in name and (whole := scope.lookup(name.split(".")[0])):
            raise PtxError(f"{whole.name} is a .v{whole.vector} register (declared on "
                           f"{whole.place}): it has no element {_spelled(ins, name)} (ptxas "
                           "takes it and reads an undefined value)" if whole.vector > 1 else
                           f"{whole.name} is not a vector register (declared on "
                           f"{whole.place}): {_spelled(ins, name)} names no element",
                           ins.line, col)
        if reg is None:
            if module:
                raise PtxError(f"register {_spelled(ins, name)} is not declared", ins.line, col)
            continue
        if reg.vector > 1:
            raise PtxError(f"{reg.name} is a .v{reg.vector} vector register (declared on "
                           f"{reg.place}); {what} needs one .{t.register} register", ins.line, col)
        v = ins.variant
        if not fits(reg.type, t, v.opcode, slot, v.boolop is not None, v):
            raise PtxError(f"{reg.name} is declared .{reg.type} on {reg.place}, but {what} of "
                           f"{ins.variant} needs .{t.register} (or a register of its width that "
                           "ptxas takes for it)", ins.line, col)
        found[name] = reg
    return found


INTEGER = (Kind.SIGNED, Kind.UNSIGNED)


def relaxed_cvt(item: Checked) -> bool:
    """Whether a cvt between integers names a register declared wider than its operand
    (`cvt.s64.s32 %rd2, %rd1`: PTX ISA 6.4.4.1's relaxed type-checking, which ptxsmt's
    families do not model: function/instructions.py's `cvt` does)."""
    ins = item.instruction
    v = ins.variant
    if v.opcode != "cvt" or v.atype.kind not in INTEGER or v.dtype.kind not in INTEGER:
        return False
    types = operand_types(v)
    return any((reg := item.registers.get(name)) is not None and reg.vector <= 1 and
               reg.type.width > types[slot].width > 1
               for slot, o in ins.operands.items() if o.kind != "vec" for name in o.registers)


def as_generic(item: Checked) -> Generic:
    """A family instruction read as an ordinary one: opcode, modifiers, operands."""
    ins = item.instruction
    return _generic(Statement("instruction", ins.text, ins.line, ins.col))


def _names(ins: Instruction) -> list[str]:
    """Every register the instruction names, its guard included."""
    guard = [ins.guard.register] if ins.guard else []
    return guard + [r for o in ins.operands.values() for r in o.registers]


def _spelled(ins: Instruction, name: str) -> str:
    for o in ins.operands.values():
        for reg, spelled in zip(o.registers, o.spelled or o.registers):
            if reg == name:
                return spelled
    return ins.guard.spelled if ins.guard else name


# ---- snippets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Snippet:
    instructions: list[Instruction]
    declared: dict[str, Register]  # registers named by a `.reg`, by their name without `%`


def parse_snippet(text: str) -> Snippet:
    """A snippet: instructions each ended by `;` on its own line, guards, comments,
    labels, `{ }` and `.reg` declarations. Raise `PtxError` naming the first problem."""
    body = read_body(split_statements(text, spans_lines=False), module=False)
    instructions = [c.instruction for c in body.checked]
    if not instructions:
        raise PtxError("no instruction found", 1, 1)
    declared: dict[str, Register] = {}
    for c in body.checked:
        for name, reg in c.registers.items():
            if declared.setdefault(name, reg) is not reg:
                raise PtxError(f"the snippet declares {reg.name} twice (on {reg.place} and "
                               f"{declared[name].place}); ptxsmt snippets name each register "
                               "once", c.instruction.line, c.instruction.col)
    return Snippet(instructions, declared)


def parse(text: str) -> list[Instruction]:
    """Parse a snippet; raise `PtxError` naming the first problem and its place."""
    return parse_snippet(text).instructions


def parse_one(text: str) -> Instruction:
    instructions = parse(text)
    if len(instructions) != 1:
        raise PtxError(f"expected one instruction, found {len(instructions)}",
                       instructions[1].line, instructions[1].col)
    return instructions[0]
