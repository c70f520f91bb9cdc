"""What ptxas lowers an instruction to: a modifier the PTX states must reach the SASS.

Constant folding (`run_diff`) sees only what ptxas computes at compile time. Two findings of
docs/ptxas-diff.md live in the lowering, where the operands come from memory: `.bf16`
operands unpacked as f16 (`HADD2.F32` without `.BF16`), and a directed rounding or `.ftz`
that never reaches the machine instruction. Each rule names the variants it covers and the
SASS it demands of a kernel that computes the variant at run time; a kernel whose SASS
breaks it is a finding, with its kernel as the reproducer.

What these rules cannot see needs values, so a GPU (`scripts/gpu_replay.py`): a lowering
that keeps every modifier but computes the wrong thing, such as `neg.s16` then
`setp.lt.s16` compared in 32 bits (finding 8).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..isa.variants import Variant, catalogue, operand_slots, operand_types
from .tools import assemble, resolve_disassembler, resolve_ptxas

_ROUNDING = {"rz": ".RZ", "rm": ".RM", "rp": ".RP"}  # PTX's directed roundings, as SASS spells them
_ARITH = re.compile(r"^(?:F|D|H)(?:ADD|MUL|FMA)2?\b|^F2F\b|^F2FP\b|^HFMA2\b|^HADD2\b|^HMUL2\b")
_F16_UNPACK = re.compile(r"^HADD2\.F32\b(?!.*BF16)")  # a half widened to f32 as an f16


@dataclass(frozen=True)
class Rule:
    name: str
    finding: str  # where docs/ptxas-diff.md describes what breaking it does
    applies: Callable[[Variant], bool]
    broken_by: Callable[[Variant, list[str]], str | None]  # SASS -> the offending line


def _bf16(v: Variant) -> bool:
    return any(t.lane.name == "bf16" for t in v.types)


def _unpacked_as_f16(v: Variant, sass: list[str]) -> str | None:
    return next((line for line in sass if _F16_UNPACK.match(line)), None)


def _rounding_dropped(v: Variant, sass: list[str]) -> str | None:
    arith = [line for line in sass if _ARITH.match(line)]
    if not arith or any(_ROUNDING[v.rnd] in line.split()[0] for line in arith):
        return None
    return arith[-1]


def _ftz_dropped(v: Variant, sass: list[str]) -> str | None:
    convert = [line for line in sass if line.startswith(("F2F.", "F2FP."))]
    if not convert or any(".FTZ" in line.split()[0] for line in convert):
        return None
    return convert[-1]


RULES = (
    Rule("bf16 operands are read as bf16, never unpacked as f16", "finding 4",
         lambda v: v.family == "float-arith" and _bf16(v), _unpacked_as_f16),
    Rule("a directed rounding reaches the instruction that rounds", "finding 4",
         lambda v: v.family == "float-arith" and v.rnd in _ROUNDING, _rounding_dropped),
    Rule(".ftz reaches a cvt.f16.f32 that rounds toward an infinity", "finding 5",
         lambda v: v.opcode == "cvt" and v.ftz and v.rnd in ("rm", "rp")
         and v.dtype.name == "f16" and v.atype.name == "f32", _ftz_dropped),
)


@dataclass(frozen=True)
class Broken:
    variant: Variant
    rule: Rule
    line: str  # the SASS instruction that shows it
    kernel: str  # a standalone reproducer


def kernel(v: Variant, target: str = "sm_90") -> str:
    """A kernel computing `v` on operands loaded from memory, so that ptxas cannot fold."""
    slots = operand_slots(v)
    types = operand_types(v)
    outputs = slots[:1]  # every opcode the rules cover writes its first operand alone
    body = [".reg .b64 %in, %out;", "ld.param.u64 %in, [in];", "ld.param.u64 %out, [out];",
            "cvta.to.global.u64 %in, %in;", "cvta.to.global.u64 %out, %out;"]
    for k, s in enumerate(slots):
        body.append(f".reg .b{types[s].width} %{s};")
        if s not in outputs:
            body.append(f"ld.global.b{types[s].width} %{s}, [%in+{8 * k}];")
    body.append(f"{v} {', '.join('%' + s for s in slots)};")
    body += [f"st.global.b{types[s].width} [%out+{8 * k}], %{s};" for k, s in enumerate(outputs)]
    return "\n".join([".version 9.0", f".target {target}", ".address_size 64",
                      ".visible .entry repro(.param .u64 out, .param .u64 in)", "{",
                      *body, "ret;", "}", ""])


def sass_instructions(sass: str) -> list[str]:
    """`/*0070*/  HADD2.F32 R0, -RZ, R0.H0_H0 ;` -> `HADD2.F32 R0, -RZ, R0.H0_H0`."""
    found = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][^;]*);", sass)
    return [line.strip() for line in found]


def audited() -> list[tuple[Variant, list[Rule]]]:
    """Each catalogue variant some rule covers, with those rules."""
    pairs = ((v, [r for r in RULES if r.applies(v)]) for v in catalogue()
             if all(operand_types(v)[s].width > 1 for s in operand_slots(v)))
    return [(v, rules) for v, rules in pairs if rules]


def audit(variants: Iterable[tuple[Variant, list[Rule]]] | None = None, ptxas: str = "ptxas",
          target: str = "sm_90", jobs: int = 2) -> list[Broken]:
    """Assemble each variant at -O3 and check its SASS against its rules."""
    ptxas, disasm = resolve_ptxas(ptxas), resolve_disassembler()
    todo = list(audited() if variants is None else variants)

    def one(item: tuple[Variant, list[Rule]]) -> list[Broken]:
        v, rules = item
        text = kernel(v, target)
        done = assemble(text, ptxas, disasm, target)
        if done.sass is None:
            return []  # a kernel ptxas refuses is the legality catalogue's business
        sass = sass_instructions(done.sass)
        return [Broken(v, r, line, text) for r in rules if (line := r.broken_by(v, sass))]

    with ThreadPoolExecutor(jobs) as pool:
        return [b for found in pool.map(one, todo) for b in found]
