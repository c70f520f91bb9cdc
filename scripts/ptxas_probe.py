"""Ask ``ptxas`` which PTX instruction lines it accepts, many lines per invocation.

Library use (``scripts/`` on ``sys.path``)::

    from ptxas_probe import probe, reg
    probe([f"setp.lt.f32 {reg('pred')}, {reg('f32')}, {reg('f32', 1)};"])   # -> [None]

Command line (one instruction per input line, ``-`` for stdin, ``//`` lines skipped)::

    python scripts/ptxas_probe.py --target sm_90 --version 9.0 lines.txt [--json]
    python scripts/ptxas_probe.py --header --target sm_90 --version 7.7

How it works
------------
Every candidate line is placed, one per source line, in the body of a single
``.entry`` kernel whose preamble declares registers of every type (see
:func:`reg`).  ``ptxas`` reports ``ptxas FILE, line N; error : ...`` for each
offending line; the line number maps the message back to its candidate.

Observed ``ptxas`` 13.0 behaviour that shapes the algorithm:

* Semantic errors (bad type/modifier combination, "requires .target sm_90",
  "requires PTX ISA .version 7.8", operand type mismatch) are reported for
  *every* offending line; there is no cap (2000 errors in one file were all
  reported), and one line may get several.
* A *syntax* error (``fatal : Parsing error near ...``) aborts parsing at that
  line: nothing after it is checked.
* A header problem (``PTX .version 7.7 does not support .target sm_90``) is
  reported against the ``.target`` line, alongside instruction errors.
* A few checks run in a later pass that only happens when the first pass found
  no error, and that stops at its first error: ``vset2``/``vset4`` with
  ``lo/ls/hi/hs`` ("Mismatch between instruction type and comparison
  qualifier", once per lane) is the one seen here.  A line that got no message
  from a failing run is therefore *undecided*, not accepted.

So a line is only declared *accepted* when it was part of a run that exited
with status 0, and *rejected* when ``ptxas`` names its line number.  After a
failing run the rejected lines are dropped and the undecided rest is assembled
again, until every line is decided.  Messages that carry no usable line number
make the batch split in halves down to single lines.  (``ptxsmt.ptxasdiff.sift``
does this, for ``ptxsmt ptxas-diff`` and ``scripts/gpu_replay.py`` too.)  Each
candidate must be exactly one ``;``-terminated statement without braces or
comments, so an error on line N cannot be caused by a neighbour.

Targets older than ``sm_75`` (which ``ptxas`` 13 cannot emit code for) are
assembled with ``-arch sm_75``: ``ptxas`` accepts ``.target sm_XY`` for any
``-arch sm_MN`` with MN >= XY and still enforces the ``.target``'s own limits.

Operand register types
----------------------
Registers are declared for every declarable scalar type: ``%pred_i``,
``%b8_i`` ... ``%b64_i``, ``%u8_i`` ..., ``%s8_i`` ..., ``%f16_i``,
``%f16x2_i``, ``%f32_i``, ``%f64_i`` (``i`` in 0..7), plus the same names
without ``%`` (``f32_0``) to test bare identifiers.  ``ptxas`` refuses
``.reg .bf16`` and ``.reg .bf16x2`` (syntax error), so :func:`reg_type` maps
``bf16 -> b16`` and ``bf16x2 -> b32``; every other type maps to itself.
(``.f16x2`` registers need PTX 4.2; below that they are simply not declared.)

The survey (``scripts/ptxas_survey.py``) gives each operand the register type
of the instruction type that describes it: ``setp.T p, a, b`` uses ``a, b:
reg(T)``; ``set.D.S d, a, b`` uses ``d: reg(D)``, ``a, b: reg(S)`` (so
``set.f16.f32`` has ``d: %f16``, ``a, b: %f32``; ``set.u32.bf16x2`` has
``d: %u32``, ``a, b: %b32``); ``selp.T`` uses ``reg(T)`` for d, a, b;
``slct.D.C`` uses ``reg(D)`` for d, a, b and ``reg(C)`` for c; ``c`` of
``set``/``setp``/``selp`` is ``%pred``; ``vset2``/``vset4`` use ``%b32`` for
all four operands (``%u32``/``%s32`` registers are also accepted).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from ptxsmt.isa.types import TYPES
from ptxsmt.ptxasdiff.sift import Attempt, sift
from ptxsmt.ptxasdiff.tools import Message, PtxasRun, run_ptxas

__all__ = [
    "REG_TYPES",
    "check_header",
    "default_arch",
    "probe",
    "probe_detailed",
    "reg",
    "reg_type",
    "source",
]

#: Register types ``ptxas`` 13.0 lets a kernel declare (``.bf16``/``.bf16x2`` it does not).
REG_TYPES: tuple[str, ...] = (
    "pred",
    "b8", "b16", "b32", "b64",
    "u8", "u16", "u32", "u64",
    "s8", "s16", "s32", "s64",
    "f16", "f16x2", "f32", "f64",
)  # fmt: skip
REGS_PER_TYPE = 8

Result = tuple[bool, list[str]]  # (accepted, errors if rejected / warnings if accepted)


def reg_type(instr_type: str) -> str:
    """Register type to declare for an operand of PTX type *instr_type* (``bf16`` -> ``b16``)."""
    t = instr_type.lstrip(".")
    return TYPES[t].register if t in TYPES else t  # b128 and others ptxsmt does not model


def reg(instr_type: str, index: int = 0, percent: bool = True) -> str:
    """Name of a pre-declared register suited to an operand of type *instr_type*."""
    if not 0 <= index < REGS_PER_TYPE:
        raise ValueError(f"register index {index} out of range 0..{REGS_PER_TYPE - 1}")
    t = reg_type(instr_type)
    if t not in REG_TYPES:
        raise ValueError(f"no register declared for type .{t}")
    return f"{'%' if percent else ''}{t}_{index}"


def default_arch(target: str) -> str:
    """``ptxas -arch`` used for a ``.target``: itself, or ``sm_75`` for older targets."""
    base = target.split(",")[0].strip()
    m = re.fullmatch(r"sm_(\d+)[a-z]?", base)
    return "sm_75" if m and int(m[1]) < 75 else base


def _version_tuple(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)


def _module(
    lines: Sequence[str], target: str, version: str, reg_types: Sequence[str]
) -> tuple[str, int]:
    """PTX text and the source line number of ``lines[0]``."""
    head = [f".version {version}", f".target {target}"]
    if _version_tuple(version) >= (2, 3):
        head.append(".address_size 64")
    head += [".visible .entry ptxas_probe()", "{"]
    for t in reg_types:
        head.append(f".reg .{t} %{t}_<{REGS_PER_TYPE}>;")
        head.append(f".reg .{t} {t}_<{REGS_PER_TYPE}>;")
    return "\n".join([*head, *lines, "ret;", "}"]) + "\n", len(head) + 1


def source(lines: Sequence[str], target: str = "sm_90", version: str = "9.0") -> str:
    """The PTX module that :func:`probe` assembles for *lines* (one candidate per line)."""
    return _module(lines, target, version, REG_TYPES)[0]


def _run(text: str, target: str, ptxas: str, arch: str | None) -> PtxasRun:
    return run_ptxas(text, ptxas, arch or default_arch(target))


def check_header(
    target: str = "sm_90", version: str = "9.0", ptxas: str = "ptxas", arch: str | None = None
) -> str | None:
    """``None`` if an empty kernel assembles with this ``.version``/``.target``, else the error."""
    run = _run(_module([], target, version, ())[0], target, ptxas, arch)
    if run.status == 0:
        return None
    msgs = [m.text for m in sorted(run.errors, key=lambda m: m.line)]
    return "; ".join(msgs + run.loose) or f"ptxas exit status {run.status}"


def _by_line(run: PtxasRun) -> dict[int, list[Message]]:
    """The run's messages by source line, lines in the order first named."""
    by_line: dict[int, list[Message]] = {}
    for m in run.messages:
        by_line.setdefault(m.line, []).append(m)
    return by_line


@functools.cache
def _usable_reg_types(target: str, version: str, ptxas: str, arch: str | None) -> tuple[str, ...]:
    """REG_TYPES minus those whose declaration this header refuses (``.f16x2`` before PTX 4.2)."""
    text, first = _module([], target, version, REG_TYPES)
    run = _run(text, target, ptxas, arch)
    if run.status == 0:
        return REG_TYPES
    decl0 = first - 2 * len(REG_TYPES)
    bad = {REG_TYPES[(m.line - decl0) // 2] for m in run.messages if decl0 <= m.line < first}
    types = tuple(t for t in REG_TYPES if t not in bad)
    run = _run(_module([], target, version, types)[0], target, ptxas, arch)
    if run.status != 0:
        raise RuntimeError(f"register declarations refused for {target} {version}: "
                           f"{run.output.strip()}")
    return types


def _decide(
    lines: Sequence[str], target: str, version: str, ptxas: str, arch: str | None
) -> list[Result]:
    types = _usable_reg_types(target, version, ptxas, arch)

    def attempt(part: Sequence[str], _: str) -> Attempt[list[str], list[str]]:
        text, first = _module(part, target, version, types)
        run = _run(text, target, ptxas, arch)
        by_line = _by_line(run)
        said = [by_line.get(first + k, []) for k in range(len(part))]
        if run.status == 0:
            return Attempt(accepted=[[m.text for m in ms] for ms in said])
        errors = {k: [m.text for m in ms if m.severity != "warning"] for k, ms in enumerate(said)}
        # Nothing after a fatal (syntax) error was checked.
        fatal = [k for k, ms in enumerate(said) if any(m.severity == "fatal" for m in ms)]
        cut = min(fatal, default=len(part))
        # why a lone line that ptxas did not name failed: what it said of the other lines
        stray = [f"line {n}: {m.text}" for n, ms in by_line.items() for m in ms
                 if m.severity != "warning"]
        return Attempt(blamed={k: e for k, e in errors.items() if e and k <= cut},
                       failure=run.loose + stray or [f"ptxas exit status {run.status}"])

    sifted = sift(lines, attempt)
    return [(True, sifted.accepted[k]) if k in sifted.accepted else (False, sifted.rejected[k])
            for k in range(len(lines))]


def _check_candidate(s: str) -> None:
    body = s.strip()
    if any(c in body for c in "\n\r{}") or "//" in body or "/*" in body:
        raise ValueError(f"candidate must be one plain line: {s!r}")
    if not body.endswith(";") or body.count(";") != 1:
        raise ValueError(f"candidate must be exactly one ';'-terminated statement: {s!r}")


def _chunks(n: int, size: int) -> Iterable[range]:
    for lo in range(0, n, size):
        yield range(lo, min(n, lo + size))


def probe_detailed(
    lines: Sequence[str],
    target: str = "sm_90",
    version: str = "9.0",
    ptxas: str = "ptxas",
    *,
    arch: str | None = None,
    chunk: int = 500,
    jobs: int = 2,
) -> list[Result]:
    """Per line ``(accepted, messages)``: the errors, or any warnings when accepted.

    If the ``.version``/``.target`` header itself is refused, every line is rejected with
    ``"header: <error>"``.
    """
    cands = list(lines)
    for s in cands:
        _check_candidate(s)
    header = check_header(target, version, ptxas, arch)
    if header is not None:
        return [(False, [f"header: {header}"]) for _ in cands]
    parts = list(_chunks(len(cands), chunk))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        subs = pool.map(
            lambda r: _decide([cands[i] for i in r], target, version, ptxas, arch), parts
        )
        return [res for sub in subs for res in sub]


def probe(
    lines: list[str], target: str = "sm_90", version: str = "9.0", ptxas: str = "ptxas"
) -> list[str | None]:
    """Per line: ``None`` if ``ptxas`` accepts it, else its error text (``"; "``-joined)."""
    res = probe_detailed(lines, target, version, ptxas)
    return [None if ok else "; ".join(msgs) for ok, msgs in res]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Which PTX lines does ptxas accept?")
    ap.add_argument("file", nargs="?", default="-", help="candidate lines ('-' = stdin)")
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--version", default="9.0")
    ap.add_argument("--ptxas", default="ptxas")
    ap.add_argument("--arch", default=None, help="ptxas -arch (default: see default_arch)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    ap.add_argument("--header", action="store_true", help="only check the .version/.target pair")
    ap.add_argument("--source", action="store_true", help="print the PTX module, do not assemble")
    ns = ap.parse_args(argv)

    if ns.header:
        err = check_header(ns.target, ns.version, ns.ptxas, ns.arch)
        print("ok" if err is None else f"rejected: {err}")
        return 0 if err is None else 1
    fh = sys.stdin if ns.file == "-" else open(ns.file)  # noqa: SIM115
    with fh:
        cands = [s.strip() for s in fh if s.strip() and not s.lstrip().startswith("//")]
    if ns.source:
        print(source(cands, ns.target, ns.version), end="")
        return 0
    res = probe_detailed(cands, ns.target, ns.version, ns.ptxas, arch=ns.arch, jobs=ns.jobs)
    for line, (ok, msgs) in zip(cands, res, strict=True):
        if ns.json:
            rec: dict[str, object] = {"line": line, "target": ns.target, "version": ns.version}
            rec["accepted"] = ok
            rec["warnings" if ok else "error"] = msgs if ok else "; ".join(msgs)
            print(json.dumps(rec))
        else:
            print(f"{'OK ' if ok else 'ERR'} {line}" + ("" if ok else f"    # {'; '.join(msgs)}"))
    return 0 if all(ok for ok, _ in res) else 1


if __name__ == "__main__":
    sys.exit(main())
