"""Reading stored constants back from SASS (exact data movement only)."""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .kernels import Kernel, Slot
from .tools import ReadbackError

# ---- reading SASS back ------------------------------------------------------------------


@dataclass(frozen=True)
class Computed:
    """A value computed at run time; `ops` are the SASS opcodes it came through."""

    ops: frozenset[str]


@dataclass(frozen=True)
class PtrLo:
    offset: int  # the output pointer's low word plus `offset`


@dataclass(frozen=True)
class PtrHi:
    offset: int = 0  # the high word of the output pointer plus `offset`


@dataclass(frozen=True)
class Carry:
    base: int  # the carry out of PtrLo(base) + k = PtrLo(offset)
    offset: int


Byte = int | Computed
Word = tuple[Byte, Byte, Byte, Byte]  # a 32-bit register, byte 0 first
Value = Word | PtrLo | PtrHi | Carry


def _int(w: Word) -> int:
    return sum(int(b) << (8 * i) for i, b in enumerate(w))


_SASS_LINE = re.compile(
    r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(.*?)\s*;\s*(?:/\*\s*(0x[0-9a-fA-F]+)\s*\*/)?")
_REGISTER = re.compile(r"^(U?R\d+|U?RZ|U?P\d|U?PT|SRZ)(?:\.[A-Z0-9_]+)*$")
_IMM = re.compile(r"^-?0x[0-9a-fA-F]+$")
_CONST_BANK = re.compile(r"^c\[0x0\]\s*\[(?:(R\d+|RZ)\s*\+\s*)?(0x[0-9a-fA-F]+)\]$")
_ADDRESS = re.compile(r"^(?:desc\[[^\]]*\])?\[(U?R\d+)(?:\.64)?(?:\+(-?0x[0-9a-fA-F]+))?\]$")
_FP64_OPS = {"DADD", "DMUL", "DFMA", "DMNMX", "DSEL"}
_COMPARES = re.compile(r"SETP|SET\d?$|^VSET|^PSET|MNMX|^FCHK")
_NO_WRITE = {"EXIT", "BRA", "NOP", "RET", "BAR", "DEPBAR", "MEMBAR", "ERRBAR", "CCTL", "WARPSYNC"}


def param_offset(target: str) -> int:
    """Where the first kernel parameter lives in constant bank 0 (as ptxas 13.0 lays it out):
    0x160 before sm_90, 0x210 on sm_90, 0x380 from sm_100."""
    m = re.fullmatch(r"sm_(\d+)[a-z]?", target.strip())
    sm = int(m.group(1)) if m else 90
    return 0x160 if sm < 90 else 0x210 if sm < 100 else 0x380


def _word(bits: int) -> Word:
    bits &= 0xFFFFFFFF
    return tuple((bits >> (8 * i)) & 255 for i in range(4))  # type: ignore[return-value]


def _computed(ops: Iterable[str]) -> Word:
    c = Computed(frozenset(ops))
    return (c, c, c, c)


class _Reader:
    """Replays straight-line SASS over register states; stores fill a byte image.

    Only exact data movement is modelled (moves of immediates and registers, PRMT byte
    permutes, HFMA2.MMA -RZ*RZ+imm, SEL on PT); anything else writes Computed values."""

    def __init__(self, param: int = 0x210) -> None:
        self.param = param
        self.regs: dict[str, Value] = {}
        self.memory: dict[int, Byte] = {}
        self.stores = 0

    def get(self, name: str) -> Value:
        name = name.split(".")[0]
        if name in ("RZ", "URZ", "SRZ"):
            return _word(0)
        return self.regs.get(name, _computed({"<undefined " + name + ">"}))

    def set(self, name: str, value: Value) -> None:
        if name not in ("RZ", "URZ", "PT", "UPT", "SRZ"):
            self.regs[name] = value

    def word(self, text: str) -> Word | None:
        """An operand as data: an immediate or a register's bytes; None if not plain."""
        if _IMM.fullmatch(text):
            return _word(int(text, 16))
        if re.fullmatch(r"U?R(\d+|Z)", text):
            v = self.get(text)
            return v if isinstance(v, tuple) else _computed({"<address>"})
        return None

    def step(self, text: str, encoding: int | None) -> None:
        guard = None
        if text.startswith("@"):
            guard, text = text.split(None, 1)
            if guard in ("@!PT", "@!UPT"):
                return
            if guard in ("@PT", "@UPT"):
                guard = None
        opcode, _, rest = text.partition(" ")
        ops = [o.strip().replace(".reuse", "") for o in _split(rest)] if rest.strip() else []
        base = opcode.split(".")[0]
        if base in _NO_WRITE:
            if base == "BRA" and self.stores == 0:
                raise ReadbackError("a branch before any store: not straight-line code")
            return
        if base.startswith(("ST", "RED", "ATOM")):
            if guard is not None:
                raise ReadbackError(f"predicated store {text!r}")
            self.store(opcode, ops, text)
            return
        writes = self.known(opcode, ops, encoding)
        if writes is None:
            writes = self.unknown(opcode, ops)
        if guard is not None:
            g = Computed(frozenset({base, "@" + guard.lstrip("@!")}))
            writes = {r: _merge(v, self.get(r), g) for r, v in writes.items()}
        for r, v in writes.items():
            self.set(r, v)

    def known(self, opcode: str, ops: list[str], encoding: int | None) -> dict | None:
        """The writes of a data-movement instruction whose result is exact, else None."""
        if opcode in ("MOV", "MOV32I", "UMOV", "R2UR") and len(ops) in (2, 3):
            if len(ops) == 3 and ops[2] != "0xf":
                return None
            v = self.get(ops[1]) if re.fullmatch(r"U?R\d+", ops[1]) else self.word(ops[1])
            if v is not None:
                return {ops[0]: v}
        if opcode in ("MOV.64", "UMOV.64") and len(ops) == 2:
            prefix, n = ("UR" if opcode[0] == "U" else "R"), _regnum(ops[0])
            if _IMM.fullmatch(ops[1]):
                bits = int(ops[1], 16) & (2**64 - 1)
                return {ops[0]: _word(bits), f"{prefix}{n + 1}": _word(bits >> 32)}
            if re.fullmatch(r"U?R\d+", ops[1]):
                src = f"{ops[1][:-len(str(_regnum(ops[1])))]}{_regnum(ops[1]) + 1}"
                return {ops[0]: self.get(ops[1]), f"{prefix}{n + 1}": self.get(src)}
        if opcode == "IADD.64" and len(ops) == 3 and (ops[2] == "RZ" or _IMM.fullmatch(ops[2])):
            lo, hi = self.get(ops[1]), self.get(f"R{_regnum(ops[1]) + 1}")
            if isinstance(lo, PtrLo) and isinstance(hi, PtrHi) and lo.offset == hi.offset:
                k = lo.offset + (0 if ops[2] == "RZ" else int(ops[2], 16))
                return {ops[0]: PtrLo(k), f"R{_regnum(ops[0]) + 1}": PtrHi(k)}
        if opcode in ("IMAD.MOV.U32", "IMAD.MOV", "IMAD.U32", "IMAD") and len(ops) == 4 \
                and ops[1] == "RZ" and ops[2] == "RZ":
            v = self.get(ops[3]) if re.fullmatch(r"U?R\d+", ops[3]) else self.word(ops[3])
            if v is not None:
                return {ops[0]: v}
        if opcode in ("CS2R", "CS2R.32") and len(ops) == 2 and ops[1] == "SRZ":
            n = _regnum(ops[0])
            return {ops[0]: _word(0)} if opcode == "CS2R.32" else \
                {ops[0]: _word(0), f"R{n + 1}": _word(0)}
        if opcode in ("HFMA2.MMA", "HFMA2") and len(ops) == 5 and ops[1:3] == ["-RZ", "RZ"]:
            return {ops[0]: _half_pair(ops[3], ops[4], encoding)}
        if opcode in ("SEL", "USEL") and len(ops) == 4 and ops[3] in ("PT", "!PT", "UPT", "!UPT"):
            v = self.word(ops[1] if not ops[3].startswith("!") else ops[2])
            return None if v is None else {ops[0]: v}
        if opcode in ("PRMT", "UPRMT") and len(ops) == 4:
            a, sel, b = self.word(ops[1]), self.word(ops[2]), self.word(ops[3])
            if a is None or sel is None or b is None or any(
                    isinstance(x, Computed) for x in sel[:2]):
                return None
            return {ops[0]: _prmt(a, sel[0] | sel[1] << 8, b)}
        loads = {"LDC": 1, "ULDC": 1, "LDCU": 1, "LDC.64": 2, "ULDC.64": 2, "LDCU.64": 2,
                 "MOV": 1, "IMAD.MOV.U32": 1}
        if opcode in loads and len(ops) in (2, 4) and (m := _CONST_BANK.fullmatch(ops[-1])) \
                and (len(ops) == 2 or ops[1:3] == ["RZ", "RZ"]):
            # the output pointer from the parameter bank; other words are run-time data
            index = _word(0) if m.group(1) is None else self.get(m.group(1))
            base = int(m.group(2), 16)
            prefix, n = ("UR" if ops[0].startswith("U") else "R"), _regnum(ops[0])
            out = {}
            for k in range(loads[opcode]):
                where = base + 4 * k - self.param if index == _word(0) else None
                out[f"{prefix}{n + k}"] = PtrLo(0) if where == 0 else PtrHi(0) if where == 4 \
                    else _computed({"c[0x0]"})
            return out
        if opcode in ("IADD3", "IADD3.X"):
            return self.pointer_add(opcode, ops)
        return None

    def pointer_add(self, opcode: str, ops: list[str]) -> dict | None:
        """The output pointer plus a constant, as -O0 code addresses each store:
        `IADD3 lo', P, [P|PT,] lo, k, RZ` then `IADD3.X hi', [PT, PT,] hi, RZ, RZ, P, !PT`."""
        n = 1
        while n < len(ops) and n <= 2 and re.fullmatch(r"P\d|PT", ops[n]):
            n += 1
        carries, srcs, rest = ops[1:n], ops[n:n + 3], ops[n + 3:]
        vals = [self.get(o) if re.fullmatch(r"U?R\d+", o) else self.word(o) for o in srcs]
        if len(vals) != 3 or any(v is None for v in vals):
            return None
        if opcode == "IADD3" and not rest:
            ptrs = [v for v in vals if isinstance(v, PtrLo)]
            others = [v for v in vals if not isinstance(v, PtrLo)]
            if len(ptrs) != 1 or not all(
                    isinstance(v, tuple) and not any(isinstance(b, Computed) for b in v)
                    for v in others):
                return None
            k = ptrs[0].offset + sum(_int(v) for v in others)
            k = (k + 2**31) % 2**32 - 2**31
            out: dict[str, Value] = {ops[0]: PtrLo(k)}
            if carries and carries[0] != "PT":
                out[carries[0]] = Carry(ptrs[0].offset, k)
            for c in carries[1:]:
                if c != "PT":
                    out[c] = _computed({"IADD3"})
            return out
        if opcode == "IADD3.X" and all(c == "PT" for c in carries) and len(rest) == 2 \
                and rest[1] == "!PT" and isinstance(hi := vals[0], PtrHi) \
                and vals[1:] == [_word(0), _word(0)] \
                and isinstance(c := self.get(rest[0]), Carry) and c.base == hi.offset:
            return {ops[0]: PtrHi(c.offset)}
        return None

    def unknown(self, opcode: str, ops: list[str]) -> dict:
        """Whatever an unmodelled instruction writes is computed at run time. The
        destinations are the leading operands: a register and up to two predicates after
        it (IADD3's carries), or two predicates (ISETP's P, Q); over-approximating the
        destinations only loses folds, it never invents a constant."""
        if not ops or not _REGISTER.fullmatch(ops[0]):
            return {}
        dests = [ops[0]]
        more = 1 if re.fullmatch(r"U?P(\d|T)", ops[0]) else 2  # P, Q / R, carry, carry
        for o in ops[1:1 + more]:
            if not re.fullmatch(r"U?P(\d|T)", o):
                break
            dests.append(o)
        ops_in = {opcode.split(".")[0]}
        for o in ops[len(dests):]:
            for m in re.findall(r"\bU?R\d+\b|\bU?P\d\b", o):
                v = self.get(m)
                if isinstance(v, tuple):
                    ops_in |= {x for b in v if isinstance(b, Computed) for x in b.ops}
        value = _computed(ops_in)
        out: dict[str, Value] = {}
        for d in dests:
            name = d.split(".")[0]
            out[name] = value
            if re.fullmatch(r"U?R\d+", name):
                prefix = "UR" if name.startswith("UR") else "R"
                n = int(name[len(prefix):])
                for k in range(1, _dest_regs(opcode)):
                    out[f"{prefix}{n + k}"] = value
        return out

    def store(self, opcode: str, ops: list[str], text: str) -> None:
        if not opcode.startswith("STG") or len(ops) != 2:
            raise ReadbackError(f"unexpected store {text!r}")
        m = _ADDRESS.fullmatch(ops[0].replace(" ", ""))
        if not m:
            raise ReadbackError(f"cannot read the address of {text!r}")
        reg = m.group(1)
        lo, hi = self.get(reg), self.get(f"{reg[:-len(str(_regnum(reg)))]}{_regnum(reg) + 1}")
        if not (isinstance(lo, PtrLo) and isinstance(hi, PtrHi) and lo.offset == hi.offset):
            raise ReadbackError(f"{text!r} does not store through the output pointer")
        address = lo.offset + (int(m.group(2), 16) if m.group(2) else 0)
        sizes = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}
        parts = opcode.split(".")[1:]
        nbytes = next((sizes[s] for s in parts if s in sizes), 4)
        if any(s in ("S8", "S16") for s in parts):
            raise ReadbackError(f"unexpected sign-extending store {text!r}")
        value = ops[1]
        data: list[Byte] = []
        for k in range(max(1, nbytes // 4)):
            v = _word(0) if value == "RZ" else self.get(f"R{_regnum(value) + k}")
            data += v if isinstance(v, tuple) else _computed({"<address>"})
        for i in range(nbytes):
            self.memory[address + i] = data[i]
        self.stores += 1


def _merge(new: Value, old: Value, guard: Computed) -> Value:
    """A predicated write: bytes that differ depend on the guard."""
    if new == old:
        return new
    if isinstance(new, tuple) and isinstance(old, tuple):
        return tuple(n if n == o else Computed(guard.ops | _ops(n) | _ops(o))
                     for n, o in zip(new, old))  # type: ignore[return-value]
    return _computed(guard.ops)


def _ops(b: Byte) -> frozenset[str]:
    return b.ops if isinstance(b, Computed) else frozenset()


def _prmt(a: Word, sel: int, b: Word) -> Word:
    """PRMT's default mode (PTX prmt.b32): byte i of the result is byte sel[i] of {b, a};
    with bit 3 of the nibble set, that byte's sign bit replicated."""
    pool = [*a, *b]
    out: list[Byte] = []
    for i in range(4):
        nib = (sel >> (4 * i)) & 0xF
        src = pool[nib & 7]
        if nib & 8:
            src = src if isinstance(src, Computed) else (0xFF if src & 0x80 else 0)
        out.append(src)
    return tuple(out)  # type: ignore[return-value]


def _dest_regs(opcode: str) -> int:
    parts = opcode.split(".")
    if "128" in parts:
        return 4
    if "64" in parts or "WIDE" in parts or parts[0] in _FP64_OPS:
        return 2
    if parts[0] in ("F2F", "I2F", "F2I", "F2IP") and len(parts) > 1 \
            and parts[1] in ("F64", "S64", "U64"):
        return 2
    return 1


def _regnum(name: str) -> int:
    m = re.fullmatch(r"U?R(\d+)(?:\.\w+)*", name)
    if not m:
        raise ReadbackError(f"expected a register, found {name!r}")
    return int(m.group(1))


def _split(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def _half_pair(hi: str, lo: str, encoding: int | None) -> Word:
    """HFMA2.MMA Rd, -RZ, RZ, hi, lo is -0*0 + (hi, lo): exactly (hi, lo) for non-NaN halves.
    A NaN half comes out quieted or as the canonical NaN 0x7fff, so only 0x7fff (both at
    once; ptxas uses it so) is exact; other NaNs are not read. The immediate's bits are the
    upper word of the encoding, and the printed halves must agree with them."""
    if encoding is None:
        return _computed({"HFMA2.MMA (no encoding)"})
    bits = encoding >> 32
    for text, half in ((hi, bits >> 16), (lo, bits & 0xFFFF)):
        word = text.strip().upper()
        if (half >> 10) & 0x1F == 0x1F and half & 0x3FF:
            if "NAN" not in word:
                raise ReadbackError(f"HFMA2.MMA immediate {text} does not match its encoding "
                                    f"{half:#06x}")
            if half != 0x7FFF:
                return _computed({"HFMA2.MMA (NaN immediate)"})
            continue
        try:
            printed = {"+INF": math.inf, "-INF": -math.inf, "INF": math.inf}.get(word) \
                or float(text)
        except ValueError:
            printed = math.nan
        decoded = struct.unpack("<e", struct.pack("<H", half))[0]
        if decoded != printed or math.copysign(1, decoded) != math.copysign(1, printed):
            raise ReadbackError(f"HFMA2.MMA immediate {text} does not match its encoding "
                                f"{half:#06x}")
    return _word(bits)


def parse_sass(sass: str) -> list[tuple[str, int | None]]:
    """(instruction text, low 64 bits of its encoding) for each SASS instruction."""
    out = []
    for line in sass.splitlines():
        if m := _SASS_LINE.match(line):
            out.append((m.group(2), int(m.group(3), 16) if m.group(3) else None))
    return out


def read_stores(sass: str, target: str = "sm_90") -> dict[int, Byte]:
    """The output buffer's image after the kernel: byte offset -> byte value or Computed."""
    reader = _Reader(param_offset(target))
    instructions = parse_sass(sass)
    if not instructions:
        raise ReadbackError("no SASS instructions in the disassembly")
    for text, encoding in instructions:
        reader.step(text, encoding)
    return reader.memory


def read_slot(memory: Mapping[int, Byte], slot: Slot) -> int | Computed:
    data = [memory.get(slot.offset + i) for i in range(slot.size)]
    if any(b is None for b in data):
        raise ReadbackError(f"no store covers the slot at offset {slot.offset:#x} ({slot.name})")
    computed = [b for b in data if isinstance(b, Computed)]
    if computed:
        return Computed(frozenset().union(*(b.ops for b in computed)))
    return sum(b << (8 * i) for i, b in enumerate(data))


def read_kernel(kernel: Kernel, sass: str) -> list[dict[str, int | bool | Computed]]:
    """Per case position: output name -> value (bits, bool) or Computed. Guards are checked."""
    memory = read_stores(sass, kernel.target)
    out: list[dict[str, int | bool | Computed]] = [
        {} for _ in range(1 + max((s.case for s in kernel.slots), default=-1))]
    for slot in kernel.slots:
        value = read_slot(memory, slot)
        if slot.pred and not isinstance(value, Computed) and value not in (0, 1):
            raise ReadbackError(f"a selp 1/0 read back as {value:#x} ({slot.name})")
        if slot.case < 0:
            if isinstance(value, Computed):
                if not slot.optional:
                    raise ReadbackError(f"{slot.name} at {slot.offset:#x} did not read back as a "
                                        f"constant (via {', '.join(sorted(value.ops))})")
            elif value != slot.known:
                raise ReadbackError(f"{slot.name} at {slot.offset:#x} read back as {value:#x}, "
                                    f"stored {slot.known:#x}")
            continue
        out[slot.case][slot.name] = value if isinstance(value, Computed) or not slot.pred \
            else bool(value)
    return out
