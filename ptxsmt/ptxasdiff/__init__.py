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

import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..check import requirement_error
from ..isa.syntax import PtxError, format_variant
from ..isa.targets import parse_target, parse_version
from ..isa.variants import FAMILIES, requirement
from ..sem.options import DEFAULT, Options
from .constants import CASES_PER_KERNEL, PTX_VERSION
from .kernels import Case, Kernel, emit_kernel, make_case
from .sass import _COMPARES, Computed, read_kernel, read_stores
from .sift import Attempt, sift
from .tools import (
    DiffError,
    ReadbackError,
    assemble,
    find_tool,
    ptxas_version,
    resolve_disassembler,
    resolve_ptxas,
)

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
        sifted = sift(cases, lambda some, part: self._attempt(some, tag + part, opt))
        return [Outcome(c, values=sifted.accepted.get(k), error=sifted.rejected.get(k))
                for k, c in enumerate(cases)]

    def _attempt(self, cases: Sequence[Case], tag: str, opt: int) -> Attempt:
        """One kernel of the cases: their read-back values, or the cases ptxas blamed."""
        kernel = self.emit(cases, f"diff_{tag}")
        result = assemble(kernel.text, self.ptxas, self.disasm, self.target, opt)
        if result.sass is not None:
            values = _read(kernel, result.sass, f"diff_{tag}_O{opt}")
            # read_kernel's list ends at the last case with an output: any after it (a
            # setp writing only `_`) has no output, as it would have mid-kernel
            return Attempt(accepted=values + [{}] * (len(cases) - len(values)))
        if any(n not in kernel.lines for n in result.errors):
            raise DiffError(f"ptxas refused the kernel's own lines: {result.errors}")
        return Attempt(blamed={kernel.lines[n]: msg for n, msg in result.errors.items()},
                       failure=result.loose)


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
    """Why the target and PTX ISA version lack one of the case's instructions (catalogue),
    or why the line's own reading cannot be compiled for the target."""
    tgt, version = parse_target(target), parse_version(version)
    if case.options.sm_1x and tgt.sm >= 20:
        return (f"the line reads the ISA as sm_{case.options.target} (its options), which "
                f"code built for {tgt} does not model")
    for ins in case.instructions:
        req = requirement(ins.variant)
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
                except (ValueError, RecursionError, PtxError, DiffError) as e:
                    msg = e.msg if isinstance(e, json.JSONDecodeError) else str(e)
                    raise DiffError(f"{path}:{number}: {msg}") from None
    return cases


__all__ = [
    "Computed", "DiffError", "DiffReport", "ReadbackError", "assemble", "emit_kernel",
    "find_tool", "load_jsonl", "make_case", "ptxas_version", "read_kernel", "read_stores",
    "resolve_disassembler", "run_diff",
]
