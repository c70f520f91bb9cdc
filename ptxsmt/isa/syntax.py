"""One grammar, both ways: PTX text <-> `Instruction`s.

This is the grammar of one statement of ptxsmt's families: optional guard `@p` /
`@!p`, opcode with modifiers, operands. Statements come from `statements.py`; snippets
and modules are read in `body.py` and `module.py`. Every error names its place as
`line L, col C`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from .errors import NotModelled, PtxError, quote
from .literals import LiteralError, parse_immediate
from .modifiers import BoolOp, CmpOp, LaneSpec, parse_lane_spec
from .opcodes import FLAG_MODIFIERS, ROUNDINGS, SHIFT_DIRECTIONS, SYNTAX
from .types import PRED, TYPES, Kind, PtxType
from .unmodelled import unmodelled
from .variants import Variant, operand_slots, operand_types, requirement

# ---- the parsed form --------------------------------------------------------------------


@dataclass(frozen=True)
class Operand:
    kind: str  # "reg", "imm", "sink" or "vec" (mov's `{lo, hi}`)
    text: str  # register name without '%', or the literal as written
    negated: bool = False  # `!c`
    lane_spec: LaneSpec | None = None  # vset `.h10` / `.b3210`
    col: int = 1
    elements: tuple[str, ...] = ()  # "vec": register names, lane 0 first
    spelled: tuple[str, ...] = field(default=(), compare=False)  # the names as written
    offset: str = ""  # `%r1+1`: the integer added to the register, as written (see OFFSET)

    @property
    def registers(self) -> tuple[str, ...]:
        return self.elements if self.kind == "vec" else (self.text,) if self.kind == "reg" else ()

    def __str__(self) -> str:
        if self.kind == "sink":
            return "_"
        if self.kind == "vec":
            return "{" + ", ".join(self.elements) + "}"
        lane = self.lane_spec.spelling if self.lane_spec else ""
        offset = f"+{self.offset}" if self.offset else ""
        return ("!" if self.negated else "") + self.text + lane + offset


@dataclass(frozen=True)
class Guard:
    register: str
    negated: bool = False
    spelled: str = field(default="", compare=False)  # as written, e.g. "%p1"

    def __str__(self) -> str:
        return f"@{'!' if self.negated else ''}{self.register}"


@dataclass(frozen=True)
class Instruction:
    variant: Variant
    operands: dict[str, Operand]  # by slot name: d/p/q/a/b/c/e (e: bfi's length)
    guard: Guard | None = None
    line: int = 1
    col: int = 1
    text: str = field(default="", compare=False)

    @property
    def destinations(self) -> dict[str, Operand]:
        return {k: o for k, o in self.operands.items()
                if k in ("d", "p", "q") and o.kind in ("reg", "vec")}

    @property
    def sources(self) -> dict[str, Operand]:
        return {k: o for k, o in self.operands.items() if k not in ("d", "p", "q")}

    def lane_spec(self, slot: str) -> LaneSpec:
        """The vset mask (slot 'd') or selector ('a'/'b'), with the ISA's defaults."""
        op = self.operands.get(slot)
        if op is not None and op.lane_spec is not None:
            return op.lane_spec
        key = {"d": "mask", "a": "asel", "b": "bsel"}[slot]
        return parse_lane_spec(self.variant.syntax.lane_defaults[key])

    def __str__(self) -> str:
        return format_instruction(self)


# ---- printing ---------------------------------------------------------------------------


def format_variant(v: Variant) -> str:
    """`setp.lt.ftz.f32`: modifiers in the order of the opcode's syntax line (SYNTAX), as
    the variant spells itself."""
    return str(v)


def format_instruction(ins: Instruction) -> str:
    ops = dict(ins.operands)
    dest = "|".join(str(ops.pop(k)) for k in ("p", "q") if k in ops) or str(ops.pop("d"))
    srcs = [str(ops[k]) for k in ("a", "b", "c", "e") if k in ops]
    guard = f"{ins.guard} " if ins.guard else ""
    return f"{guard}{format_variant(ins.variant)} {', '.join([dest, *srcs])};"


def rename_registers(ins: Instruction, names: Mapping[str, str]) -> Instruction:
    """The instruction with every register (guard included) renamed through `names`."""
    ops = {}
    for slot, o in ins.operands.items():
        if o.kind == "reg":
            o = replace(o, text=names[o.text])
        elif o.kind == "vec":
            elements = tuple(names[e] for e in o.elements)
            o = replace(o, elements=elements, text="{" + ", ".join(elements) + "}")
        ops[slot] = o
    guard = Guard(names[ins.guard.register], ins.guard.negated) if ins.guard else None
    return replace(ins, operands=ops, guard=guard)

# ---- parsing ----------------------------------------------------------------------------

# A register: `%r1`, `r1`, or an inline-asm operand placeholder `%0` (typed by its use).
_IDENT = r"%?[A-Za-z_$][A-Za-z0-9_$]*|%[0-9]+"
_REG = re.compile(rf"({_IDENT})(?:\s*(\.[A-Za-z0-9_]+)|\s*\+\s*(-?\s*[0-9][0-9A-Za-z]*))?")
_GUARD = re.compile(rf"@\s*(!?)\s*({_IDENT})\s+")
_ELEMENT = re.compile(rf"({_IDENT})(?:\s*\.([xyzwrgba]))?")  # `%r1` or `%v.x` in `{...}`
_OPCODE = re.compile(r"[A-Za-z][A-Za-z0-9]*((?:\.[A-Za-z0-9_]+)*)")


def parse_variant(spelling: str) -> Variant:
    """`setp.lt.ftz.f32` -> Variant (modifiers in any order, as ptxas allows)."""
    head = spelling.strip()
    if not _OPCODE.fullmatch(head):
        raise PtxError(f"{quote(head)} is not an instruction spelling like setp.lt.f32", 1, 1)
    opcode, *mods = head.split(".")
    if opcode not in SYNTAX:
        raise PtxError(f"unknown instruction {quote(opcode)}", 1, 1)
    return _parse_modifiers(opcode, mods, 1, 1)


def parse_statement(stmt: str, line: int, col: int) -> Instruction:
    """One statement (without its `;`) whose first character is at `line`, `col`."""
    text = stmt
    guard = None
    if m := _GUARD.match(stmt):
        guard = Guard(m.group(2).lstrip("%"), bool(m.group(1)), m.group(2))
        stmt, col = stmt[m.end():], col + m.end()
    m = _OPCODE.match(stmt)
    if not m:
        found = (stmt.split() or [stmt])[0]
        raise PtxError(f"expected an instruction, found {quote(found)}", line, col)
    head = m.group(0)
    opcode = head.split(".")[0]
    if opcode not in SYNTAX:
        raise NotModelled(f"unknown instruction {quote(opcode)} (ptxsmt knows "
                          f"{', '.join(SYNTAX)})", line, col)
    rest, partial = stmt[m.end():], SYNTAX[opcode].partial
    # Of an opcode ptxsmt models in part, it judges the modifiers and the operand count
    # (ptxas refuses all it does not know, `unmodelled.py`); an unknown modifier (`.cc`,
    # `.xorsign`) or operand spelling (`mov.b32 %r1, {0, %rs1}`) may be a form ptxas takes.
    try:
        variant = _parse_modifiers(opcode, head.split(".")[1:], line, col)
    except PtxError as e:
        raise NotModelled(e.message, e.line, e.col) if partial else e from None
    count = len(_split_operands(rest, 1)) if rest.strip() else 0
    if partial and (row := unmodelled(variant, count)):
        raise NotModelled(f"ptxsmt does not model {format_variant(variant)}: {row.form}",
                          line, col)
    if partial:  # ptxas refuses the variant whatever its operands (`mul.wide.u64`)
        _require_catalogued(variant, line, col)
    _check_count(variant, count, line, col + m.end())
    try:
        operands = _parse_operands(variant, rest, line, col + m.end())
    except PtxError as e:
        raise NotModelled(e.message, e.line, e.col) if partial else e from None
    _check_byte_immediates(variant, operands, line)
    return Instruction(variant, operands, guard, line, col, text)


def _check_byte_immediates(v: Variant, operands: Mapping[str, Operand], line: int) -> None:
    """ptxas refuses an immediate outside [0..255] in these slots (`Syntax.byte_immediates`),
    a refusal measured, so judged in a family ptxsmt models in part too."""
    for slot in v.syntax.byte_immediates:
        op = operands[slot]
        if op.kind == "imm" and not 0 <= parse_immediate(op.text, TYPES["u32"]) <= 255:
            raise PtxError(f"operand {slot}: {quote(op.text)} is out of range: ptxas takes "
                           "0 to 255 here", line, op.col)


def opcode_col(stmt: str, col: int) -> int:
    """The column of the opcode of a statement that starts at `col` (after its guard),
    as `parse_statement` places the instruction."""
    return col + m.end() if (m := _GUARD.match(stmt)) else col


def _parse_modifiers(opcode: str, mods: list[str], line: int, col: int) -> Variant:
    syntax = SYNTAX[opcode]
    found: dict[str, object] = {}
    types: list[PtxType] = []
    offset = col + len(opcode)
    for mod in mods:
        kind, value = _classify(mod, syntax)
        where = (line, offset + 1)
        offset += len(mod) + 1
        if kind is None:
            raise PtxError(f"unknown modifier {quote('.' + mod)} for {opcode}", *where)
        if kind == "type":
            types.append(value)
        elif kind not in syntax.modifiers:
            raise PtxError(f"{opcode} does not take {_KIND_NAMES[kind]} '.{mod}'", *where)
        elif kind in found:
            raise PtxError(f"repeated {_KIND_NAMES[kind]} '.{mod}'", *where)
        else:
            found[kind] = value
    want = len(syntax.type_roles)
    if len(types) != want:
        raise PtxError(f"{opcode} needs {'one type' if want == 1 else f'{want} types'}, "
                       f"found {len(types)}", line, col)
    if "cmp" in syntax.modifiers and "cmp" not in found:
        raise PtxError(f"{opcode} needs a comparison operator (.eq, .lt, ...)", line, col)
    return Variant(opcode, tuple(types), **found)


_KIND_NAMES = {"cmp": "comparison", "boolop": "boolean operator", "mode": "mode",
               "rnd": "rounding modifier", "dir": "direction",
               "type": "type", **dict.fromkeys(FLAG_MODIFIERS.values(), "modifier")}


def _classify(mod: str, syntax) -> tuple[str | None, object]:
    if "mode" in syntax.modifiers and mod in syntax.modes:  # mul.lo: a mode, not the CmpOp
        return "mode", mod
    if mod in ROUNDINGS:
        return "rnd", mod
    if mod in SHIFT_DIRECTIONS:
        return "dir", mod
    if mod in TYPES:
        return "type", TYPES[mod]
    if mod in CmpOp._value2member_map_:
        return "cmp", CmpOp(mod)
    if mod in BoolOp._value2member_map_:
        return "boolop", BoolOp(mod)
    if mod in FLAG_MODIFIERS:
        return FLAG_MODIFIERS[mod], True
    return None, None


def _split_operands(text: str, col: int) -> list[tuple[str, int]]:
    parts, start, depth = [], 0, 0
    for i, ch in enumerate(text + ","):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            raw = text[start:i]
            parts.append((raw.strip(), col + start + len(raw) - len(raw.lstrip())))
            start = i + 1
    return parts


def _check_count(v: Variant, count: int, line: int, col: int) -> None:
    slots = operand_slots(v)
    if count != len(slots):
        why = " (a BoolOp needs operand c)" if v.syntax.optional_c else ""
        raise PtxError(f"{v.opcode} takes {len(slots)} operands ({', '.join(slots)}), "
                       f"found {count}{why}", line, col)


def _parse_operands(v: Variant, text: str, line: int, col: int) -> dict[str, Operand]:
    syntax = v.syntax
    parts = _split_operands(text, col) if text.strip() else []
    slots = operand_slots(v)
    types = operand_types(v)
    out: dict[str, Operand] = {}
    for slot, (raw, c) in zip(slots, parts):
        if not raw:
            raise PtxError(f"missing operand {slot}", line, c)
        if slot == "p" and syntax.pair_dest:
            names = [p.strip() for p in raw.split("|")]
            if len(names) > 2:
                raise PtxError(f"{v.opcode} writes at most two predicates p|q", line, c)
            for name, key in zip(names, ("p", "q")):
                out[key] = _operand(v, key, name, types[key], line, c)
            if names == ["_", "_"]:
                raise PtxError("the sink '_' may replace only one of p|q", line, c)
            compared = v.compared_type
            if "q" in out and out["q"].kind == "reg" and not compared.predicate_pair:
                raise PtxError(f"{v.opcode}.{compared} writes only p, not p|q", line, c)
            continue
        out[slot] = _operand(v, slot, raw, types[slot], line, c)
    return out


# Operand rules measured on ptxas 13.0 (docs/ptxas-legality.md, sections 3 to 8).
UNPARSABLE_SELECTORS = ("b1024",)  # a valid selector that ptxas lexes as a type token


def _operand(v: Variant, slot: str, raw: str, t: PtxType, line: int, col: int) -> Operand:
    syntax = v.syntax
    is_dest = slot in ("d", "p", "q")
    if raw == "_":
        if not (syntax.pair_dest and is_dest):
            raise PtxError(f"the sink '_' is not allowed as operand {slot}", line, col)
        return Operand("sink", "_", col=col)
    if raw.startswith("{"):
        return _vector(v, slot, raw, t, line, col)
    negated = raw.startswith("!")
    body = raw[1:].lstrip() if negated else raw
    if negated and not (slot == "c" and t is PRED):
        raise PtxError(f"'!' is only allowed on the predicate operand c, not {slot}", line, col)
    if m := _REG.fullmatch(body):
        name, suffix, offset = m.group(1).lstrip("%"), m.group(2), m.group(3)
        if offset is not None:
            return _with_offset(v, slot, t, name, offset, m.group(1), line, col)
        lane = None
        if suffix and not syntax.lane_prefix and suffix[1:] in COMPONENTS:
            element = f"{name}.{COMPONENTS[suffix[1:]]}"
            return Operand("reg", element, negated, None, col, spelled=(m.group(1) + suffix,))
        if suffix:
            lane = parse_lane_spec(suffix)
            if not syntax.lane_prefix or lane is None or slot == "c":
                raise PtxError(f"unexpected operand modifier {quote(suffix)} on {slot}",
                               line, col)
            _check_lane_spec(v, slot, lane, line, col)
        return Operand("reg", name, negated, lane, col, spelled=(m.group(1),))
    if is_dest:
        raise PtxError(f"destination {slot} must be a register, found {quote(raw)}", line, col)
    if syntax.lane_prefix:
        raise PtxError(f"{v.opcode} operands must be registers, found {quote(raw)}", line, col)
    if t is PRED:
        truth = predicate_immediate(v, slot, body, negated)
        if truth is None or not all(x.predicate_literal for x in v.types):
            raise PtxError(f"operand {slot} must be a predicate register or an integer, "
                           f"found {quote(raw)}", line, col)
        return Operand("imm", "1" if truth else "0", col=col, spelled=(raw,))
    if not t.literal:
        raise PtxError(f"operand {slot}: PTX has no .{t.name} literal, use a register",
                       line, col)
    try:
        parse_immediate(body, t)
    except LiteralError as e:
        raise PtxError(f"operand {slot}: {e}", line, col) from None
    return Operand("imm", body, negated, col=col)


# A vector register's element as a scalar operand: `%v.x` of a `.reg .v2 .b32 %v` is a
# .b32 register (`.r .g .b .a` name the same four); ptxas 13.0 takes one wherever a
# register of the element's type fits (docs/ptxas-legality.md, "Operand spellings"), but
# not in the vset families, whose `.x`-like suffixes are lane selectors.
COMPONENTS = {"x": "x", "y": "y", "z": "z", "w": "w", "r": "x", "g": "y", "b": "z", "a": "w"}


def predicate_immediate(v: Variant, slot: str, text: str, negated: bool) -> bool | None:
    """The truth of an integer immediate given for a predicate operand (None: not an
    integer), as ptxas 13.0 folds it (docs/ptxas-legality.md, "Operand spellings"):
    `!k` is first 1 if k is 0, else 0; then set/setp's c is true when the low 32 bits
    are not all zero, and every other predicate operand (selp's c, mov/and/or/xor/not
    .pred) when the 64-bit value is not zero."""
    value = offset_value(text, TYPES["b64"]) if text else None
    if value is None:
        return None
    if negated:
        value = int(value == 0)
    if slot == "c" and v.syntax.optional_c:  # the BoolOp operand of set/setp
        value &= 0xFFFFFFFF
    return value != 0


# `%r1+1`, `%r2+-1`: ptxas 13.0 reads a source register plus an integer as the sum,
# wrapping at the operand's width (it compiles `setp.lt.s32 p, %r1+-1, %r2` to
# `VIADD R5, R0, 0xffffffff; ISETP`). It refuses one on a destination ("Result register
# required"), and crashes (SIGSEGV) on one in a vset or float operand, a guard or after
# `!`; ptxsmt takes it on integer and bit operands a and b (docs/ptx-files.md).
OFFSET_SLOTS = ("a", "b")


def _with_offset(v: Variant, slot: str, t: PtxType, name: str, offset: str, spelled: str,
                 line: int, col: int) -> Operand:
    if slot not in OFFSET_SLOTS or v.syntax.lane_prefix or t.kind not in OFFSET_KINDS:
        raise PtxError(f"a register plus an offset is only taken on integer or bit operands "
                       f"a and b, not {slot} of {v.opcode}", line, col)
    text = offset.replace(" ", "")
    if offset_value(text, t) is None:
        raise PtxError(f"offset {quote(offset)} is not an integer", line, col)
    return Operand("reg", name, col=col, spelled=(spelled,), offset=text)


OFFSET_KINDS = (Kind.BIT, Kind.UNSIGNED, Kind.SIGNED)


def offset_value(text: str, t: PtxType) -> int | None:
    """The offset as an addend of `t`'s width (ptxas wraps; a 64-bit literal at most)."""
    for wide in ("s64", "u64"):
        try:
            return parse_immediate(text, TYPES[wide]) % (1 << t.width)
        except LiteralError:
            pass
    return None


def _vector(v: Variant, slot: str, raw: str, t: PtxType, line: int, col: int) -> Operand:
    """mov's packing operand `{lo, hi}`: lane 0 first, each lane a bit register."""
    spelled = [n.strip() for n in raw.strip("{}").split(",")]
    found = [_ELEMENT.fullmatch(n) for n in spelled]
    ok = raw.endswith("}") and all(found)
    names = [m.group(1).lstrip("%") + (f".{COMPONENTS[m.group(2)]}" if m.group(2) else "")
             for m in found] if ok else []
    if not v.syntax.vector_operands or not ok or len(names) < 2 or t.width % len(names) \
            or t is PRED:
        raise PtxError(f"unexpected vector operand {quote(raw)}", line, col)
    return Operand("vec", raw, col=col, elements=tuple(names), spelled=tuple(spelled))


def _check_lane_spec(v: Variant, slot: str, lane: LaneSpec, line: int, col: int) -> None:
    prefix, lanes = v.syntax.lane_prefix, v.syntax.lanes
    if lane.prefix != prefix:
        raise PtxError(f"{v.opcode} lane modifiers start with '.{prefix}', found {quote(lane)}",
                       line, col)
    if slot == "d":
        ok = (0 < len(lane.digits) <= lanes and all(x < lanes for x in lane.digits)
              and list(lane.digits) == sorted(set(lane.digits), reverse=True))
        what = "mask"
    else:
        ok = len(lane.digits) == lanes and all(x < 2 * lanes for x in lane.digits)
        what = "selector"
    if not ok:
        raise PtxError(f"invalid {v.opcode} {what} {quote(lane)}", line, col)
    if lane.spelling[1:] in UNPARSABLE_SELECTORS:
        raise PtxError(f"ptxas cannot parse the selector '{lane}' (it reads it as a type)",
                       line, col)


def require_legal(ins: Instruction) -> None:
    """Raise unless the variant is in the catalogue (ignoring target/version)."""
    _require_catalogued(ins.variant, ins.line, ins.col)


def _require_catalogued(v: Variant, line: int, col: int) -> None:
    if requirement(v) is None:
        raise PtxError(f"'{format_variant(v)}' is not a legal variant", line, col)
