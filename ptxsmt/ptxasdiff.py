"""Differential testing of ptxas's constant folder against ptxsmt's semantics.

Kernels. Each vector case (`{"ptx", "inputs"}`, the batch JSONL format) becomes a
few lines of a kernel that computes the instruction on *constant* operands:
every input register first gets its bits with `mov.b16/b32/b64` (PTX has no
f16/bf16 literal, so halves are moved as bits; a predicate comes from
`setp.ne.u32 %p, 1, 0`), the instruction runs on fresh registers, and every
output is stored to its own 8-byte slot of the output buffer (a predicate via
`selp.u32 r, 1, 0, p`). Hundreds of cases share one kernel (`ptxas -O3`, run
`jobs` at a time); a case ptxas refuses is named by its line and dropped.

Read-back. `read_stores` replays the SASS (nvdisasm -hex, or cuobjdump -sass)
as straight-line code over register states kept per byte. Only exact data
movement is modelled: moves of immediates and registers (MOV, MOV32I,
MOV.64, UMOV, R2UR, IMAD.MOV.U32 RZ, RZ, x, CS2R SRZ, SEL on PT), PRMT byte
permutes, HFMA2.MMA -RZ, RZ, imm (its immediate taken from the encoding and
checked against the printed halves), and the output pointer (LDC/ULDC of the
parameter, plus constants as -O0 code adds them). Every other instruction
writes "computed at run time", carrying the opcodes it came through, so a
compare ptxas left to run time (FSETP, HSETP2, ISETP, ...) is never guessed:
the output counts as not folded for its family. A store's bytes land in an
image of the buffer, and each slot is read from the image.

Guards. Every kernel also stores known constants (16/32/64-bit `mov`s,
pairs of halves) every few cases; if one does not read back exactly, the
kernel is refused with `ReadbackError`, so a read-back error cannot pass for a
mismatch. Each mismatch is assembled again alone (the minimal reproducer) at
-O3, to confirm it, and at -O0.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from .check import parse_target, parse_version, requirement_error
from .isa.literals import hex_bits
from .isa.syntax import Guard, Instruction, PtxError, format_instruction, format_variant
from .isa.types import PRED, PtxType, ptx_type
from .isa.variants import FAMILIES, catalogue
from .program import Program
from .sem.options import DEFAULT, Options
from .smt.evaluate import evaluate, to_json

PTX_VERSION = "9.0"  # what ptxas 13.0 reads; older ptxas gets the newest it names
CASES_PER_KERNEL = 500
GUARD_EVERY = 25  # cases between two guard blocks
SLOT = 8  # bytes per output slot (every store is at most 8 bytes, 8-aligned)


class DiffError(Exception):
    """Bad input or a missing tool: the whole run cannot go on."""


class ReadbackError(DiffError):
    """The SASS could not be read back unambiguously (a guard failed, a store is missing)."""

    kernel: str | None = None  # the PTX and SASS it happened in, when known
    sass: str | None = None


# ---- tools ------------------------------------------------------------------------------


def find_tool(name: str) -> str | None:
    """An NVIDIA tool on PATH, else in the `nvidia-*` pip packages (nvidia/cu*/bin), else
    under $CUDA_HOME / /usr/local/cuda."""
    found = shutil.which(name)
    if found:
        return found
    dirs: list[Path] = []
    try:
        import nvidia  # namespace package of the nvidia-cuda-* wheels

        for root in nvidia.__path__:
            dirs += sorted(Path(root).glob("*/bin"), reverse=True)
    except ImportError:
        pass
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            dirs.append(Path(os.environ[env]) / "bin")
    dirs.append(Path("/usr/local/cuda/bin"))
    for d in dirs:
        p = d / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def resolve_ptxas(ptxas: str = "ptxas") -> str:
    path = shutil.which(ptxas) if os.sep not in ptxas else (ptxas if os.access(ptxas, os.X_OK)
                                                           else None)
    if path is None and ptxas == "ptxas":
        path = find_tool("ptxas")
    if path is None:
        raise DiffError(f"ptxas not found ({ptxas!r}); install the CUDA toolkit or "
                        "pip install nvidia-cuda-nvcc, or pass --ptxas PATH")
    return path


def resolve_disassembler() -> list[str]:
    """The command that prints SASS with instruction encodings for a cubin."""
    if nvd := find_tool("nvdisasm"):
        return [nvd, "-c", "-hex"]
    if cob := find_tool("cuobjdump"):
        return [cob, "-sass"]
    raise DiffError("neither nvdisasm nor cuobjdump found; "
                    "pip install nvidia-cuda-nvdisasm (or nvidia-cuda-cuobjdump)")


def ptxas_version(ptxas: str) -> str:
    try:
        out = subprocess.run([ptxas, "--version"], capture_output=True, text=True,
                             check=False, timeout=60).stdout
    except OSError as e:
        raise DiffError(f"cannot run {ptxas}: {e}") from None
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("Cuda compilation tools"):
            return line
    if not lines:
        raise DiffError(f"{ptxas} --version printed nothing; is it ptxas?")
    return lines[-1]


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

    def json_outputs(self, values: Mapping[str, int | bool]) -> dict[str, str | bool]:
        return {k: to_json(v, self.types[k]) for k, v in values.items()}


def make_case(obj: Mapping, opts: Options = DEFAULT) -> Case:
    """A Case from a batch-format object; raises PtxError/DiffError on bad input."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("ptx"), str):
        raise DiffError('expected {"ptx": "...", "inputs": {...}}')
    inputs = obj.get("inputs", {})
    if not isinstance(inputs, Mapping):
        raise DiffError('"inputs" must be an object')
    program = Program.parse(obj["ptx"])
    ev = evaluate(obj["ptx"], inputs, opts)
    missing = [n for n in _read_registers(program) if n not in ev.inputs]
    if missing:
        raise DiffError(f"no value for input {', '.join(missing)}")
    main = [i for i in program.instructions if i.variant.family != "glue"]
    family = (main or program.instructions)[0].variant.family
    return Case(obj["ptx"], {k: to_json(v, ev.types[k]) for k, v in ev.inputs.items()},
                family, program.instructions, program.types, dict(ev.inputs),
                dict(ev.outputs))


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

# ptxas cannot declare .bf16/.bf16x2 registers; bit registers of the width serve.
_REG_TYPE = {"bf16": "b16", "bf16x2": "b32"}


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
        name = t if isinstance(t, str) else _REG_TYPE.get(t.name, t.name)
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
            self.emit(format_instruction(_rename(ins, names)), pos)
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


def _rename(ins: Instruction, names: Mapping[str, str]) -> Instruction:
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


# ---- assembling -------------------------------------------------------------------------

_MSG = re.compile(r"^ptxas .*?, line (\d+); (error|fatal)\s*: (.*)$")


@dataclass
class Assembled:
    sass: str | None  # None when ptxas refused the kernel
    errors: dict[int, str]  # source line -> message
    loose: str = ""  # messages without a line number


def assemble(text: str, ptxas: str, disasm: Sequence[str], arch: str, opt: int = 3) -> Assembled:
    with tempfile.TemporaryDirectory(prefix="ptxsmt_diff_") as tmp:
        src, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(text)
        try:
            proc = subprocess.run([ptxas, f"-O{opt}", "-arch", arch, str(src), "-o", str(cubin)],
                                  capture_output=True, text=True, check=False, timeout=900)
        except subprocess.TimeoutExpired:
            raise DiffError("ptxas took over 900 s on one kernel") from None
        if proc.returncode != 0:
            errors: dict[int, str] = {}
            loose = []
            for line in (proc.stdout + proc.stderr).splitlines():
                if m := _MSG.match(line.strip()):
                    errors.setdefault(int(m.group(1)), m.group(3).strip())
                elif line.strip() and "aborted due to errors" not in line:
                    loose.append(line.strip())
            if proc.returncode < 0:
                loose.insert(0, f"ptxas crashed (signal {-proc.returncode})")
            return Assembled(None, errors, "; ".join(loose) or f"exit status {proc.returncode}")
        dis = subprocess.run([*disasm, str(cubin)], capture_output=True, text=True, check=False)
        if dis.returncode != 0:
            raise DiffError(f"{Path(disasm[0]).name} failed: {dis.stderr.strip()[:300]}")
        return Assembled(dis.stdout, {})


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


# ---- running ----------------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    values: dict[str, int | bool | Computed] | None = None  # -O3 read-back
    error: str | None = None  # ptxas refused the case
    skipped: str | None = None  # the catalogue says the target lacks the instruction

    @property
    def folded(self) -> bool:
        return self.values is not None and not any(isinstance(v, Computed)
                                                   for v in self.values.values())

    @property
    def differing(self) -> list[str]:
        if self.values is None:
            return []
        return [k for k, v in self.values.items()
                if not isinstance(v, Computed) and v != self.case.expected[k]]


def _family_order(family: str) -> int:
    return FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)


@dataclass
class DiffReport:
    ptxas: str
    target: str
    outcomes: list[Outcome]
    mismatches: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    def families(self) -> dict[str, dict[str, int]]:
        rows: dict[str, dict[str, int]] = {}
        for o in sorted(self.outcomes, key=lambda o: _family_order(o.case.family)):
            r = rows.setdefault(o.case.family, {"cases": 0, "folded": 0, "not_folded": 0,
                                                "mismatches": 0, "rejected": 0, "skipped": 0})
            r["cases"] += 1
            if o.skipped is not None:
                r["skipped"] += 1
            elif o.error is not None:
                r["rejected"] += 1
            elif o.folded:
                r["folded"] += 1
            else:
                r["not_folded"] += 1
            r["mismatches"] += bool(o.differing)
        return rows

    def not_folded(self) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for o in sorted(self.outcomes, key=lambda o: _family_order(o.case.family)):
            if o.values is None or o.folded:
                continue
            entry = out.setdefault(o.case.family, {"cases": 0, "sass": Counter()})
            entry["cases"] += 1
            ops: set[str] = set()
            for v in o.values.values():
                if isinstance(v, Computed):
                    ops |= v.ops
            compares = {op for op in ops if _COMPARES.search(op)}
            entry["sass"].update(compares or ops)
        for entry in out.values():
            ops = entry.pop("sass")
            entry["reason"] = ("computed at run time by " +
                               ", ".join(f"{op} ({n})" for op, n in ops.most_common(6)))
        return out

    def rejected(self) -> list[dict]:
        return [{"ptx": o.case.ptx, "inputs": o.case.inputs, "error": o.error}
                for o in self.outcomes if o.error is not None]

    def to_json(self) -> dict:
        return {
            "ptxas": self.ptxas,
            "target": self.target,
            "cases": len(self.outcomes),
            "folded": sum(o.folded for o in self.outcomes),
            "families": self.families(),
            "mismatches": self.mismatches,
            "not_folded": self.not_folded(),
            "rejected": self.rejected(),
            "skipped": sum(o.skipped is not None for o in self.outcomes),
            "seconds": round(self.seconds, 2),
        }


def _read(kernel: Kernel, sass: str, name: str) -> list[dict[str, int | bool | Computed]]:
    """read_kernel; on failure, with $PTXSMT_DIFF_KEEP set to a folder, the kernel's PTX and
    SASS are kept there."""
    try:
        return read_kernel(kernel, sass)
    except ReadbackError as e:
        e.kernel, e.sass = kernel.text, sass
        if folder := os.environ.get("PTXSMT_DIFF_KEEP"):
            Path(folder).mkdir(parents=True, exist_ok=True)
            (Path(folder) / f"{name}.ptx").write_text(kernel.text)
            (Path(folder) / f"{name}.sass").write_text(sass)
        raise


class _Runner:
    def __init__(self, ptxas: str, target: str, disasm: Sequence[str]) -> None:
        self.ptxas, self.target, self.disasm = ptxas, target, disasm
        self.version = PTX_VERSION

    def emit(self, cases: Sequence[Case], name: str, guards: bool = True) -> Kernel:
        return emit_kernel(cases, name, self.target, guards, self.version)

    def check_target(self) -> None:
        """Assemble a kernel of guards alone: the target works and the read-back is sane.
        An older ptxas that names the newest PTX ISA it reads gets that version."""
        kernel = self.emit([], "diff_check")
        result = assemble(kernel.text, self.ptxas, self.disasm, self.target)
        why = " ".join(result.errors.values()) + result.loose
        if result.sass is None and (m := re.search(r"current version is '(\d+\.\d+)'", why)):
            self.version = m.group(1)
            kernel = self.emit([], "diff_check")
            result = assemble(kernel.text, self.ptxas, self.disasm, self.target)
        if result.sass is None:
            why = "; ".join(result.errors.values()) or result.loose
            raise DiffError(f"ptxas cannot assemble for {self.target}: {why}")
        _read(kernel, result.sass, f"diff_check_{self.target}")

    def batch(self, cases: Sequence[Case], tag: str, opt: int = 3) -> list[Outcome]:
        """Assemble the cases in one kernel; a case ptxas refuses is dropped with its error."""
        outcomes = [Outcome(c) for c in cases]
        self._assemble(outcomes, list(range(len(cases))), tag, opt)
        return outcomes

    def _assemble(self, outcomes: list[Outcome], pending: list[int], tag: str, opt: int) -> None:
        while pending:
            kernel = self.emit([outcomes[i].case for i in pending], f"diff_{tag}")
            result = assemble(kernel.text, self.ptxas, self.disasm, self.target, opt)
            if result.sass is not None:
                values = _read(kernel, result.sass, f"diff_{tag}_O{opt}")
                for i, v in zip(pending, values):
                    outcomes[i].values = v
                return
            if any(n not in kernel.lines for n in result.errors):
                raise DiffError(f"ptxas refused the kernel's own lines: {result.errors}")
            bad = {kernel.lines[n]: msg for n, msg in result.errors.items()}
            if not bad and len(pending) == 1:
                bad = {0: result.loose}
            if not bad:  # no line to blame: halve
                half = len(pending) // 2
                self._assemble(outcomes, pending[:half], tag + "a", opt)
                self._assemble(outcomes, pending[half:], tag + "b", opt)
                return
            for pos, msg in bad.items():
                outcomes[pending[pos]].error = msg
            pending = [i for k, i in enumerate(pending) if k not in bad]


def run_diff(cases: Iterable[Mapping | Case], ptxas: str = "ptxas", jobs: int = 2,
             target: str = "sm_90", opts: Options | None = None,
             batch: int = CASES_PER_KERNEL,
             progress: Callable[[int, int], None] | None = None) -> DiffReport:
    """Assemble every case with ptxas -O3, read the folded outputs back from the SASS and
    compare them with ptxsmt's; each mismatch is re-assembled alone at -O3 and -O0."""
    start = time.monotonic()
    tool = resolve_ptxas(ptxas)
    disasm = resolve_disassembler()
    version = ptxas_version(tool)
    if opts is None:
        opts = Options(target=parse_target(target).sm)
    prepared = [c if isinstance(c, Case) else make_case(c, opts) for c in cases]
    runner = _Runner(tool, target, disasm)
    runner.check_target()
    outcomes = [Outcome(c, skipped=target_error(c, target, runner.version)) for c in prepared]
    todo = [k for k, o in enumerate(outcomes) if o.skipped is None]
    chunks = [todo[i:i + batch] for i in range(0, len(todo), batch)]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(runner.batch, [prepared[k] for k in chunk], str(n))
                   for n, chunk in enumerate(chunks)]
        try:
            for done, (chunk, fut) in enumerate(zip(chunks, futures), 1):
                for k, outcome in zip(chunk, fut.result()):
                    outcomes[k] = outcome
                if progress:
                    progress(done, len(chunks))
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    report = DiffReport(version, target, outcomes)
    report.mismatches = [{"case": k, **reproduce(o, runner)}
                         for k, o in enumerate(outcomes) if o.differing]
    report.seconds = time.monotonic() - start
    return report


def target_error(case: Case, target: str, version: str = PTX_VERSION) -> str | None:
    """Why the target and PTX ISA version lack one of the case's instructions (catalogue)."""
    tgt, version = parse_target(target), parse_version(version)
    for ins in case.instructions:
        req = catalogue().requirement(ins.variant)
        if req is not None and (err := requirement_error(req, tgt, version)):
            return f"'{format_variant(ins.variant)}' {err}"
    return None


def reproduce(outcome: Outcome, runner: _Runner) -> dict:
    """The minimal reproducer: the case alone, at -O3 (confirming) and at -O0."""
    case = outcome.case
    solo = runner.batch([case], "solo")[0]
    try:
        o0 = runner.batch([case], "solo_O0", opt=0)[0]
    except ReadbackError as e:
        o0 = Outcome(case, error=f"the -O0 SASS could not be read back: {e}")
    names = outcome.differing
    entry = {
        "ptx": case.ptx,
        "family": case.family,
        "inputs": case.inputs,
        "ptxsmt": case.json_outputs(case.expected),
        "ptxas": {k: None if isinstance(v, Computed) else case.json_outputs({k: v})[k]
                  for k, v in outcome.values.items()},
        "differ": names,
        "confirmed_alone": solo.values is not None
        and all(solo.values.get(k) == outcome.values[k] for k in names),
        "kernel": runner.emit([case], "repro", guards=False).text,
    }
    if o0.values is not None:
        folded0 = {k: v for k, v in o0.values.items()
                   if k in names and not isinstance(v, Computed)}
        if any(folded0[k] != outcome.values[k] for k in folded0):
            entry["O0"] = case.json_outputs(folded0)
        unfolded = sorted({op for k in names if isinstance(o0.values.get(k), Computed)
                           for op in o0.values[k].ops if _COMPARES.search(op)})
        if unfolded:
            entry["O0_note"] = f"not folded at -O0 (computed by {', '.join(unfolded)})"
    elif o0.error:
        entry["O0_note"] = o0.error
    return entry


def load_jsonl(paths: Iterable[Path | str], opts: Options = DEFAULT,
               limit: int | None = None) -> list[Case]:
    """Cases from JSONL files; bad lines raise DiffError naming the file and line."""
    import json

    cases: list[Case] = []
    for path in paths:
        with open(path) as fh:
            for number, line in enumerate(fh, 1):
                if limit is not None and len(cases) >= limit:
                    return cases
                if not line.strip():
                    continue
                try:
                    cases.append(make_case(json.loads(line), opts))
                except (ValueError, PtxError, DiffError) as e:
                    msg = e.msg if isinstance(e, json.JSONDecodeError) else str(e)
                    raise DiffError(f"{path}:{number}: {msg}") from None
    return cases
