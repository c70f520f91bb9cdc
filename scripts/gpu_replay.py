"""Replay vector files on a real GPU: write a self-contained CUDA C++ program.

Every vector's PTX runs through inline ``asm volatile`` on silicon and the
program compares what the hardware wrote with the vector's ``"outputs"``.

On a GPU machine (with ptxsmt installed, ``pip install -e .``), from the
repository root::

    mkdir -p models/hw
    python scripts/gpu_replay.py models/*.jsonl --out replay.cu && \
        nvcc -arch=sm_90 -o replay replay.cu && ./replay models/hw/results.jsonl

(use the ``-arch`` the generator prints on stderr if the vectors need more).

The program prints ``MISMATCH line N: ptx ... inputs ... expected ... got ...
[FILE]`` for each vector whose hardware outputs differ, then ``N passed, M
failed`` (and ``, K unchecked`` for vectors without ``"outputs"``), and exits 1
on any mismatch, 2 on a CUDA or usage error. With a path as its first argument
it writes one JSONL line per vector, in input order: the vector as read plus
``"hw_outputs"`` (same format as ``"outputs"``: hex of the register's width,
booleans for predicates, every register the snippet writes) and ``"gpu"`` (the
device name); such files are meant to be checked in under ``models/hw/``.

Options: ``--out FILE.cu`` (default stdout), ``--arch sm_XX`` (default: the
highest ``sm_`` any vector's variant needs, at least sm_90; vectors needing more
than an explicit ``--arch`` are left out), ``--limit N`` (the first N
replayable vectors, in file order), ``--no-ptxas``. The generator says on
stderr which vectors it left out and why, and the ``nvcc`` line to use.

Left out: lines that are not JSON vectors; PTX that ptxsmt cannot parse or type;
inputs that do not fit their register; expected outputs that name a register the
PTX does not write or do not fit it; variants needing more than an explicit
``--arch``; and, when ``ptxas`` is on PATH, PTX texts that ptxas refuses or
crashes on (checked in one module before the program is written). A vector's
``"options"`` say which reading of the ISA its outputs follow: a vector read as
sm_1x (``"target": "sm_13"``) is left out, since no GPU this program can target
flushes like sm_1x; a vector with ``"vset_merge": "b"`` is replayed like any other, and
the results file keeps its options, so silicon decides between the two readings
(Spec notes 1). Bad ``"options"`` leave the line out with the reason.

How a vector becomes hardware work:

* one ``__global__`` kernel per distinct PTX text, one thread per vector;
* register types come from ``ptxsmt.Program``; every register is declared
  inside the asm block's ``{ }`` scope as ``.b8/.b16/.b32/.b64`` (ptxas accepts
  a bit type of the right width for every operand) or ``.pred``, named
  ``r_<name>`` (the parsed instructions are printed again with their registers
  renamed, so bare names such as ``a`` or ``p`` and ``%``-names both work);
* inputs (registers read before written, ``Program.encode().inputs``; an input
  named like a destination is its prior value, which matters under a false
  guard) are loaded from device memory, never immediates, so ptxas cannot fold
  the instruction away; predicates travel as a 32-bit int through
  ``setp.ne.u32``/``selp.u32``; 8-bit registers (mov's ``{a, b, c, d}``
  lanes) through a 16-bit int with ``cvt``;
* a missing input is replayed as 0 (with a warning: the vector's outputs
  should not depend on it).

The program's CUDA text is ``templates/replay.cu`` (the host side and runtime) and
``templates/replay_kernel.cu`` (one kernel, its launcher and its vectors' tables);
this script only fills in the values.

Without a GPU, ``PTXSMT_REPLAY_FAKE=echo ./replay out.jsonl`` runs only the host
side (the "hardware" outputs are the expected ones); ``PTXSMT_REPLAY_FAKE=flip``
also flips bit 0 of the first vector's first checked output, to exercise the
mismatch report. The tests use this; it says nothing about silicon.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

from ptxsmt import Program, PtxError
from ptxsmt.eval.values import convert_inputs
from ptxsmt.isa.body import parse
from ptxsmt.isa.literals import LiteralError, parse_value
from ptxsmt.isa.syntax import format_instruction, format_variant, rename_registers
from ptxsmt.isa.targets import parse_target
from ptxsmt.isa.types import PRED, PtxType, bit_type
from ptxsmt.isa.variants import catalogue
from ptxsmt.ptxasdiff.sift import Attempt, sift
from ptxsmt.ptxasdiff.tools import run_ptxas
from ptxsmt.sem.options import Options

DEFAULT_SM = 90
RESULT_KEYS = ("hw_outputs", "gpu")  # dropped from a vector read back from a results file


@dataclass
class Vector:
    file: str
    line: int
    obj: dict
    inputs: dict[str, int | bool] = field(default_factory=dict)
    expected: dict[str, int | bool] = field(default_factory=dict)
    has_outputs: bool = False


@dataclass
class Kernel:
    ptx: str
    program: Program
    inputs: list[str]  # registers read before written, in read order
    outputs: list[str]  # registers written
    sm: int
    vectors: list[Vector] = field(default_factory=list)


@dataclass
class Skipped:
    file: str
    line: int
    ptx: str
    why: str


# ---- reading vectors --------------------------------------------------------------------


def read_vectors(paths: list[str]) -> list[tuple[str, int, dict | str]]:
    """(file, line number, object) per non-blank line; a string in place of the object
    says why the line is not a vector."""
    out: list[tuple[str, int, dict | str]] = []
    for path in paths:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                out.append((path, n, f"not JSON: {e}"))
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("ptx"), str):
                out.append((path, n, 'not an object with a "ptx" string'))
                continue
            out.append((path, n, obj))
    return out


def _kernel_for(ptx: str) -> Kernel:
    program = Program.parse(ptx)
    enc = program.encode()
    sm = max(catalogue().requirement(ins.variant).sm for ins in program.instructions)
    return Kernel(ptx, program, list(enc.inputs), program.written, sm)


def plan(paths: list[str], arch: int | None = None, limit: int | None = None,
         warn=None) -> tuple[list[Kernel], list[Skipped], int]:
    """Group replayable vectors by PTX text. Returns (kernels, skipped, sm to compile for)."""
    warn = warn or (lambda msg: None)
    kernels: dict[str, Kernel] = {}
    failed: dict[str, str] = {}
    skipped: list[Skipped] = []
    taken = 0
    for file, line, obj in read_vectors(paths):
        if isinstance(obj, str):
            skipped.append(Skipped(file, line, "", obj))
            continue
        if limit is not None and taken >= limit:
            break
        ptx = obj["ptx"]
        if ptx not in kernels and ptx not in failed:
            try:
                kernels[ptx] = _kernel_for(ptx)
            except PtxError as e:
                failed[ptx] = f"ptxsmt cannot type this PTX: {e}"
        if ptx in failed:
            skipped.append(Skipped(file, line, ptx, failed[ptx]))
            continue
        k = kernels[ptx]
        if arch is not None and k.sm > arch:
            names = ", ".join(format_variant(i.variant) for i in k.program.instructions)
            skipped.append(Skipped(file, line, ptx, f"{names} needs sm_{k.sm}; --arch is "
                                                    f"sm_{arch}"))
            continue
        why = _fill(Vector(file, line, {x: v for x, v in obj.items() if x not in RESULT_KEYS}),
                    k, warn)
        if isinstance(why, str):
            skipped.append(Skipped(file, line, ptx, why))
            continue
        k.vectors.append(why)
        taken += 1
    used = [k for k in kernels.values() if k.vectors]
    sm = arch if arch is not None else max([DEFAULT_SM, *(k.sm for k in used)])
    return used, skipped, sm


def _fill(vec: Vector, k: Kernel, warn) -> Vector | str:
    types = k.program.types
    try:
        opts = Options.from_json(vec.obj.get("options", {}))
    except PtxError as e:
        return f"bad options: {e}"
    if opts.sm_1x:
        return f"outputs follow the sm_{opts.target} reading (options), which no GPU replays"
    raw_in = vec.obj.get("inputs", {})
    raw_out = vec.obj.get("outputs")
    if not isinstance(raw_in, dict) or not (raw_out is None or isinstance(raw_out, dict)):
        return '"inputs" and "outputs" must be objects'
    try:
        values = convert_inputs(raw_in, types, k.inputs)
    except PtxError as e:
        return str(e)
    vec.inputs = {name: values[name] for name in k.inputs if name in values}
    missing = [name for name in k.inputs if name not in values]
    if missing:
        warn(f"{vec.file}:{vec.line}: no value for {', '.join(missing)}; replayed as 0")
    if raw_out is not None:
        unknown = [name for name in raw_out if name.lstrip("%") not in k.outputs]
        if unknown:
            return f"expected output {', '.join(unknown)} is not a register the PTX writes"
        for name, value in raw_out.items():
            t = types[name.lstrip("%")]
            try:
                if (t is PRED) != isinstance(value, bool) and not isinstance(value, str):
                    raise LiteralError(f"{json.dumps(value)} is not a .{t.name} value")
                vec.expected[name.lstrip("%")] = (
                    value if isinstance(value, bool) else parse_value(str(value), t))
            except LiteralError as e:
                return f"expected output {name}: {e}"
        vec.has_outputs = True
    return vec


# ---- PTX text inside the asm block ----------------------------------------------------


def reg_name(name: str) -> str:
    return "r_" + name


def declare(name: str, t: PtxType) -> str:
    """The snippet's register as the asm block declares it: a bit type of its width (ptxas
    takes one for every operand), or a predicate."""
    return f".reg .{'pred' if t is PRED else bit_type(t.width).name} {reg_name(name)};"


def rename(ptx: str, registers) -> list[str]:
    """The snippet's statements, printed in ptxsmt's grammar, with every register renamed
    to `r_<name>`."""
    names = {name: reg_name(name) for name in registers}
    return [format_instruction(rename_registers(ins, names)) for ins in parse(ptx)]


# ---- what ptxas accepts -------------------------------------------------------------


def ptxas_rejects(kernels: list[Kernel], sm: int, ptxas: str = "ptxas") -> dict[str, str]:
    """PTX texts that ptxas refuses for sm_`sm` (text -> its message): each kernel's
    renamed statements in an `.entry` of one module (ptxsmt.ptxasdiff.sift)."""

    def attempt(some: Sequence[Kernel], _: str) -> Attempt[None, str]:
        text, owner = _check_module(some, sm)
        run = run_ptxas(text, ptxas, f"sm_{sm}")
        if run.status == 0:
            return Attempt(accepted=[None] * len(some))
        blamed: dict[int, str] = {}
        for m in run.errors:
            if m.line in owner:
                blamed.setdefault(owner[m.line], f"ptxas: {m.text}")
        if not blamed and run.errors:
            raise RuntimeError(f"ptxas failed on no line of a vector:\n{run.output}")
        return Attempt(blamed=blamed, failure=run.failure)

    sifted = sift(kernels, attempt)
    return {kernels[k].ptx: why for k, why in sifted.rejected.items()}


def _check_module(kernels: Sequence[Kernel], sm: int) -> tuple[str, dict[int, int]]:
    """A module with one `.entry` per kernel, and which kernel owns each source line."""
    lines = [".version 9.0", f".target sm_{sm}", ".address_size 64"]
    owner: dict[int, int] = {}
    for i, k in enumerate(kernels):
        lines.append(f".visible .entry e{i}() {{")
        statements = [declare(name, t) for name, t in k.program.types.items()]
        statements += rename(k.ptx, k.program.types)
        for stmt in statements:
            owner[len(lines) + 1] = i
            lines.append(stmt)
        lines += ["ret;", "}"]
    return "\n".join(lines) + "\n", owner


# ---- code generation ----------------------------------------------------------------


def _ctype(width: int) -> tuple[str, str]:
    """(C type, asm constraint) carrying a register of this width (1 = predicate)."""
    if width == 1 or width == 32:
        return "unsigned int", "r"
    if width <= 16:
        return "unsigned short", "h"
    if width == 64:
        return "unsigned long long", "l"
    raise ValueError(f"no inline-asm constraint for a {width}-bit register")


def _load(name: str, width: int, op: int) -> str:
    r = reg_name(name)
    if width == 1:
        return f"setp.ne.u32 {r}, %{op}, 0;"
    if width == 8:
        return f"cvt.u8.u16 {r}, %{op};"
    return f"mov.b{width} {r}, %{op};"


def _store(name: str, width: int, op: int) -> str:
    r = reg_name(name)
    if width == 1:
        return f"selp.u32 %{op}, 1, 0, {r};"
    if width == 8:
        return f"cvt.u16.u8 %{op}, {r};"
    return f"mov.b{width} %{op}, {r};"


def c_string(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "?":
            out.append("\\?")  # no trigraphs
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.append("".join(f"\\x{b:02x}\"\"" for b in ch.encode()))
    return '"' + "".join(out) + '"'


def _kernel(i: int, k: Kernel, index: dict[int, int]) -> str:
    """Kernel `i`: the `__global__` function running the snippet, its launcher and the
    vectors' tables (templates/replay_kernel.cu)."""
    return KERNEL.substitute(i=i, **_function(k), **_tables(k, index))


def _function(k: Kernel) -> dict[str, str]:
    """The kernel function's and its launcher's values: parameters, asm block, operands."""
    types = k.program.types
    widths = {name: types[name].width for name in types}
    outs, ins = k.outputs, k.inputs
    params = ["int n"]
    params += [f"const {_ctype(widths[x])[0]}* __restrict__ in_{j}" for j, x in enumerate(ins)]
    params += [f"{_ctype(widths[x])[0]}* __restrict__ out_{j}" for j, x in enumerate(outs)]
    body = ["{", *(declare(name, t) for name, t in types.items())]
    body += [_load(x, widths[x], len(outs) + j) for j, x in enumerate(ins)]
    body += rename(k.ptx, types)
    body += [_store(x, widths[x], j) for j, x in enumerate(outs)]
    body.append("}")
    arguments = ["n"]
    arguments += [f"(const {_ctype(widths[x])[0]}*)din[{j}]" for j, x in enumerate(ins)]
    arguments += [f"({_ctype(widths[x])[0]}*)dout[{j}]" for j, x in enumerate(outs)]
    return {
        "comment": " ".join(k.ptx.split()).replace("\\", "/"),
        "params": ", ".join(params),
        "declarations": "".join(f"    {_ctype(widths[x])[0]} o{j};\n"
                                for j, x in enumerate(outs)),
        "asm": "\n".join(f"        {c_string(line + chr(10) + chr(9))}" for line in body),
        "asm_outputs": ", ".join(f'"={_ctype(widths[x])[1]}"(o{j})' for j, x in enumerate(outs)),
        "asm_inputs": ", ".join(f'"{_ctype(widths[x])[1]}"(in_{j}[i])'
                                for j, x in enumerate(ins)),
        "stores": "".join(f"    out_{j}[i] = o{j};\n" for j in range(len(outs))),
        "arguments": ", ".join(arguments),
    }


def _tables(k: Kernel, index: dict[int, int]) -> dict[str, object]:
    """The vectors' tables: registers, input and expected values, where each came from."""
    widths = {name: t.width for name, t in k.program.types.items()}
    in_vals, exp_vals, exp_mask, infos = [], [], [], []
    for v in k.vectors:
        in_vals += [_u64(v.inputs.get(x, 0)) for x in k.inputs]
        exp_vals += [_u64(v.expected.get(x, 0)) for x in k.outputs]
        exp_mask += ["1" if x in v.expected else "0" for x in k.outputs]
        obj = json.dumps(v.obj)
        infos.append(
            f"    {{{c_string(v.file)}, {v.line}, {index[id(v)]}, {int(v.has_outputs)}, "
            f"{c_string(obj[:-1])}, {c_string(json.dumps(v.obj.get('inputs', {})))}}}")
    blank = ["0"]  # C++ has no empty arrays
    return {
        "inputs": ", ".join(_reg_entry(x, widths[x]) for x in k.inputs) or "{0, 0}",
        "outputs": ", ".join(_reg_entry(x, widths[x]) for x in k.outputs),
        "input_values": ", ".join(in_vals or blank),
        "expected_values": ", ".join(exp_vals),
        "expected_mask": ", ".join(exp_mask),
        "vectors": ",\n".join(infos),
        "input_count": len(k.inputs),
        "output_count": len(k.outputs),
        "vector_count": len(k.vectors),
    }


def _reg_entry(name: str, width: int) -> str:
    return f"{{{c_string(name)}, {width}}}"


def _u64(v: int | bool) -> str:
    return f"0x{int(v):x}ull"


def _group(i: int, k: Kernel) -> str:
    return (f"    {{{c_string(k.ptx)}, {len(k.vectors)}, {len(k.inputs)}, {len(k.outputs)}, "
            f"k{i}_in, k{i}_out, k{i}_in_vals, k{i}_exp_vals, k{i}_exp_mask, k{i}_info, "
            f"launch{i}}}")


TEMPLATES = Path(__file__).resolve().parent / "templates"
PROGRAM = Template((TEMPLATES / "replay.cu").read_text())
KERNEL = Template((TEMPLATES / "replay_kernel.cu").read_text())


def generate(kernels: list[Kernel], sm: int, sources: list[str]) -> str:
    """The CUDA C++ program replaying `kernels`' vectors on an sm_`sm` device or newer
    (templates/replay.cu)."""
    rank = {f: n for n, f in enumerate(dict.fromkeys(sources))}
    order = sorted((v for k in kernels for v in k.vectors),
                   key=lambda v: (rank.get(v.file, len(rank)), v.line))
    index = {id(v): n for n, v in enumerate(order)}
    if kernels:
        rows = ",\n".join(_group(i, k) for i, k in enumerate(kernels))
        groups = f"static const Group GROUPS[] = {{\n{rows}\n}};\n"
    else:  # keep the program valid (and trivially passing) when nothing is replayable
        groups = "static std::vector<Group> GROUPS;\n"
    return PROGRAM.substitute(
        sources=" ".join(sources), count=max(len(order), 1), kernel_count=len(kernels), sm=sm,
        kernels="".join(_kernel(i, k, index) for i, k in enumerate(kernels)), groups=groups)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="vector JSONL files ('-' for stdin)")
    ap.add_argument("--out", help="the .cu file to write (default: stdout)")
    ap.add_argument("--arch", help="sm_XX to compile for (default: what the vectors need, "
                                   f"at least sm_{DEFAULT_SM})")
    ap.add_argument("--limit", type=int, help="replay only the first N usable vectors")
    ap.add_argument("--no-ptxas", action="store_true",
                    help="do not leave out the PTX texts ptxas refuses (checked when ptxas is "
                         "on PATH)")
    args = ap.parse_args(argv)
    try:
        arch = parse_target(args.arch).sm if args.arch else None
    except PtxError as e:
        print(f"gpu_replay: {e}", file=sys.stderr)
        return 2

    def warn(msg: str) -> None:
        print(f"gpu_replay: {msg}", file=sys.stderr)

    try:
        kernels, skipped, sm = plan(args.files, arch, args.limit, warn)
    except OSError as e:
        print(f"gpu_replay: {e}", file=sys.stderr)
        return 2
    ptxas = None if args.no_ptxas else shutil.which("ptxas")
    if ptxas and kernels:
        try:
            refused = ptxas_rejects(kernels, sm, ptxas)
        except RuntimeError as e:
            warn(str(e))
            return 2
        for k in kernels:
            if k.ptx in refused:
                skipped += [Skipped(v.file, v.line, k.ptx, refused[k.ptx]) for v in k.vectors]
        kernels = [k for k in kernels if k.ptx not in refused]
    for s in skipped:
        what = f" {' '.join(s.ptx.split())!r}" if s.ptx else ""
        warn(f"{s.file}:{s.line}: left out{what}: {s.why}")
    source = generate(kernels, sm, args.files)
    if args.out:
        Path(args.out).write_text(source)
    else:
        sys.stdout.write(source)
    count = sum(len(k.vectors) for k in kernels)
    out = args.out or "replay.cu"
    warn(f"{count} vectors in {len(kernels)} kernels, {len(skipped)} left out; build with: "
         f"nvcc -arch=sm_{sm} -o replay {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
