"""Vector cases, and kernels that compute them on constant operands."""

from __future__ import annotations

import hashlib
import struct
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..eval.evaluate import evaluate
from ..eval.values import to_json
from ..isa.literals import hex_bits
from ..isa.syntax import Instruction, format_instruction, rename_registers
from ..isa.types import PRED, PtxType, ptx_type
from ..program import Program
from ..sem.options import DEFAULT, Options
from .constants import GUARD_EVERY, PTX_VERSION, SLOT
from .tools import DiffError

# ---- cases ------------------------------------------------------------------------------


@dataclass
class Case:
    """One vector: the PTX, its operand bits and ptxsmt's outputs."""

    ptx: str
    inputs: dict[str, str | bool]  # JSON form, as ptxsmt eval --json writes them
    family: str
    instructions: list[Instruction]
    types: dict[str, PtxType]
    values: dict[str, int | bool]  # input bits
    expected: dict[str, int | bool]  # ptxsmt's outputs (bits)
    options: Options = DEFAULT  # the reading the line asked for ("options" in the JSONL)

    def json_outputs(self, values: Mapping[str, int | bool]) -> dict[str, str | bool]:
        return {k: to_json(v, self.types[k]) for k, v in values.items()}


def make_case(obj: Mapping, opts: Options = DEFAULT) -> Case:
    """A Case from a batch-format object; raises PtxError/DiffError on bad input."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("ptx"), str):
        raise DiffError('expected {"ptx": "...", "inputs": {...}}')
    inputs = obj.get("inputs", {})
    if not isinstance(inputs, Mapping):
        raise DiffError('"inputs" must be an object')
    if "options" in obj:
        opts = Options.from_json(obj["options"], base=opts)
    program = Program.parse(obj["ptx"])
    ev = evaluate(obj["ptx"], inputs, opts)
    missing = [n for n in _read_registers(program) if n not in ev.inputs]
    if missing:
        raise DiffError(f"no value for input {', '.join(missing)}")
    main = [i for i in program.instructions if i.variant.family != "glue"]
    family = (main or program.instructions)[0].variant.family
    return Case(obj["ptx"], {k: to_json(v, ev.types[k]) for k, v in ev.inputs.items()},
                family, program.instructions, program.types, dict(ev.inputs),
                dict(ev.outputs), opts)


def _read_registers(program: Program) -> list[str]:
    """Registers read before they are written (what the kernel must initialise)."""
    written: set[str] = set()
    read: list[str] = []
    for ins in program.instructions:
        names = [ins.guard.register] if ins.guard else []
        names += [r for o in ins.sources.values() for r in o.registers]
        read += [n for n in names if n not in written and n not in read]
        written |= {r for o in ins.destinations.values() for r in o.registers}
    return read


# ---- kernels ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Slot:
    case: int  # position in the kernel's case list; -1 for a guard
    name: str  # output register (guards: a label)
    offset: int
    size: int  # bytes stored
    pred: bool
    known: int | None = None  # a guard's value
    optional: bool = False  # a guard that only has to be right when it folded


@dataclass
class Kernel:
    text: str
    slots: list[Slot]
    lines: dict[int, int]  # source line (1-based) -> case position
    target: str = "sm_90"


class _Builder:
    def __init__(self, name: str, target: str, version: str = PTX_VERSION) -> None:
        self.name, self.target, self.version = name, target, version
        self.body: list[tuple[str, int]] = []  # (statement, case position or -1)
        self.counts: Counter[str] = Counter()
        self.slots: list[Slot] = []
        self.offset = 0

    def reg(self, t: PtxType | str) -> str:
        name = t if isinstance(t, str) else t.register
        n = self.counts[name]
        self.counts[name] += 1
        return f"%{name}_{n}"

    def emit(self, stmt: str, case: int) -> None:
        self.body.append((stmt, case))

    def load(self, reg: str, value: int | bool, t: PtxType, case: int) -> None:
        if t is PRED:
            self.emit(f"setp.ne.u32 {reg}, {int(bool(value))}, 0;", case)
        else:
            self.emit(f"mov.b{t.width} {reg}, {hex_bits(int(value), t.width)};", case)

    def store(self, reg: str, t: PtxType, case: int, name: str, known: int | None = None,
              optional: bool = False) -> None:
        addr = f"[%out+{self.offset}]"
        if t is PRED:
            tmp = self.reg("b32")
            self.emit(f"selp.u32 {tmp}, 1, 0, {reg};", case)
            self.emit(f"st.global.u32 {addr}, {tmp};", case)
            size = 4
        else:
            self.emit(f"st.global.b{t.width} {addr}, {reg};", case)
            size = t.width // 8
        self.slots.append(Slot(case, name, self.offset, size, t is PRED, known, optional))
        self.offset += SLOT

    def guard(self, seed: str) -> None:
        """Known constants, stored like the cases' outputs."""
        digest = hashlib.sha256(f"{self.name}/{seed}".encode()).digest()
        words = struct.unpack("<4I", digest[:16])
        values = [
            ("b16", words[0] & 0xFFFF),
            ("b32", words[1]),
            ("b64", words[2] << 32 | words[3]),
            ("b32", _finite_halves(words[0] ^ words[3])),  # a pair of halves (HFMA2.MMA-ish)
            ("f16", _finite_halves(words[1]) & 0xFFFF),
            ("b32", 0),
            ("b16", 1),
        ]
        for tname, value in values:
            t = ptx_type(tname)
            reg = self.reg(t)
            self.load(reg, value, t, -1)
            self.store(reg, t, -1, f"guard {seed} .{tname}", known=value)
        for value in (True, False):
            reg = self.reg(PRED)
            self.load(reg, value, PRED, -1)
            self.store(reg, PRED, -1, f"guard {seed} .pred", known=int(value), optional=True)

    def case(self, case: Case, pos: int) -> None:
        names: dict[str, str] = {}
        for name, value in case.values.items():
            names[name] = self.reg(case.types[name])
            self.load(names[name], value, case.types[name], pos)
        for name, t in case.types.items():
            if name not in names:
                names[name] = self.reg(t)
        for ins in case.instructions:
            self.emit(format_instruction(rename_registers(ins, names)), pos)
        for name in case.expected:
            self.store(names[name], case.types[name], pos, name)

    def kernel(self) -> Kernel:
        head = [f".version {self.version}", f".target {self.target}", ".address_size 64",
                f".visible .entry {self.name}(.param .u64 out)", "{", ".reg .b64 %out;"]
        head += [f".reg .{t} %{t}_<{n}>;" for t, n in sorted(self.counts.items())]
        head += ["ld.param.u64 %out, [out];", "cvta.to.global.u64 %out, %out;"]
        lines: dict[int, int] = {}
        for i, (_, case) in enumerate(self.body):
            if case >= 0:
                lines[len(head) + 1 + i] = case
        text = "\n".join([*head, *(s for s, _ in self.body), "ret;", "}", ""])
        return Kernel(text, self.slots, lines, self.target)


def _finite_halves(bits: int) -> int:
    """Clear one exponent bit of each half so neither is inf/NaN."""
    return bits & ~0x40004000 & 0xFFFFFFFF


def emit_kernel(cases: Sequence[Case], name: str = "ptxsmt_diff", target: str = "sm_90",
                guards: bool = True, version: str = PTX_VERSION) -> Kernel:
    """A kernel computing every case on constant operands and storing every output."""
    b = _Builder(name, target, version)
    for pos, case in enumerate(cases):
        if guards and pos % GUARD_EVERY == 0:
            b.guard(str(pos))
        b.case(case, pos)
    if guards:
        b.guard("end")
    return b.kernel()
