"""Survey which set/setp/selp/slct/vset2/vset4 spellings ``ptxas`` accepts, per header.

Generates the candidate space (the product of the spec's modifier domains plus near
misses), assembles it with :mod:`ptxas_probe` for every ``(.target, .version)`` pair
of a grid, and writes the raw results as JSON::

    python scripts/ptxas_survey.py --out /tmp/ptxas_findings.json [--quick] [--verify 300]

JSON layout (compact: a result is an index into ``errors``, ``-1`` = accepted,
``null`` = not assembled for that header; identical result rows are stored once)::

    {"ptxas": "...", "headers": ["sm_90@9.0", ...], "header_errors": {"sm_90@7.7": "..."},
     "errors": ["Unexpected instruction types specified for 'set'", ...],
     "candidates": [{"family": "setp", "fields": {...}, "line": "setp.lt.f32 ...;",
                     "grid": true}, ...],
     "rows": [[-1, 3, null, ...], ...], "header_row": {"sm_90@9.0": 0, ...},
     "verification": {"checked": 1600, "mismatches": [], "text_differs": [...]}}

so the result of candidate ``i`` under header ``h`` is ``rows[header_row[h]][i]``.
Families marked ``"grid": false`` (selector/mask spellings, operand register types)
are only assembled for the headers in ``DETAIL_HEADERS``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ptxas_probe import REG_TYPES, check_header, probe_detailed, reg  # noqa: E402

CMP = (
    "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
    "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
)  # fmt: skip
BOOL = ("", "and", "or", "xor")
SCALAR = ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64")
HALF = ("f16", "bf16", "f16x2", "bf16x2")
NEAR = ("b8", "u8", "s8", "pred")
TYPES = SCALAR + HALF + NEAR
VTYPES = ("u32", "s32", "b32", "u16", "s16", "f32", "u64", "s64")
VCMP = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "ltu", "num", "nan")
VSEC = ("", "add", "min", "max", "sat", "add.sat", "merge", "or")
LITERALS = ("1", "-1", "0x1", "1.0", "0f3F800000", "0d3FF0000000000000", "0x3c00")

TARGETS = (
    "sm_10", "sm_13", "sm_20", "sm_30", "sm_50", "sm_53", "sm_60", "sm_70",
    "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120",
)  # fmt: skip
VERSIONS = (
    "1.0", "1.4", "1.5", "2.0", "2.1", "2.2", "2.3", "3.0", "4.1", "4.2", "5.0", "6.0",
    "6.3", "6.4", "6.5", "7.0", "7.1", "7.7", "7.8", "8.0", "8.6", "8.7", "8.8", "9.0",
)  # fmt: skip
DETAIL_HEADERS = ("sm_90@9.0", "sm_75@6.3", "sm_53@4.2", "sm_120@9.0")
QUICK_HEADERS = ("sm_90@9.0", "sm_80@9.0", "sm_75@6.3", "sm_53@4.2", "sm_53@6.4", "sm_90@7.8")


@dataclass
class Cand:
    family: str
    fields: dict[str, object]
    line: str
    grid: bool = True
    results: dict[str, int | None] = field(default_factory=dict)


def r(t: str, i: int) -> str:
    """Register for an operand of type *t*; predicates use %pred_3.. so p/q/c stay distinct."""
    if t == "pred":
        return f"%pred_{i + 3}"
    try:
        return reg(t, i)
    except ValueError:  # tf32, e4m3, b128, ...: no register of that type; use a b32
        return reg("b32", i)


def dot(*mods: str) -> str:
    return "".join(f".{m}" for m in mods if m)


def setp_line(cmp: str, bop: str, ftz: bool, t: str, dest: str = "p", c: str = "%pred_2") -> str:
    dst = {"p": "%pred_0", "p|q": "%pred_0|%pred_1", "_": "_", "_|q": "_|%pred_1"}
    dst |= {"p|_": "%pred_0|_", "_|_": "_|_"}
    tail = f", {c}" if bop else ""
    return f"setp{dot(cmp, bop, 'ftz' if ftz else '', t)} {dst[dest]}, {r(t, 0)}, {r(t, 1)}{tail};"


def set_line(cmp: str, bop: str, ftz: bool, d: str, s: str) -> str:
    tail = ", %pred_2" if bop else ""
    return f"set{dot(cmp, bop, 'ftz' if ftz else '', d, s)} {r(d, 0)}, {r(s, 1)}, {r(s, 2)}{tail};"


def gen_setp() -> Iterator[Cand]:
    for cmp, bop, ftz, t, dest in itertools.product(CMP, BOOL, (False, True), TYPES, ("p", "p|q")):
        f = {"cmp": cmp, "bool": bop, "ftz": ftz, "type": t, "dest": dest}
        yield Cand("setp", f, setp_line(cmp, bop, ftz, t, dest))


def gen_setp_operands() -> Iterator[Cand]:
    dests = ("p", "p|q", "_", "_|q", "p|_", "_|_")
    cs = ("%pred_2", "!%pred_2", "0", "1", "!1", "_", "%b32_7")
    for t in SCALAR + HALF:
        for dest in dests:
            f = {"type": t, "dest": dest, "bool": ""}
            yield Cand("setp_operands", f, setp_line("eq", "", False, t, dest))
            for c in cs:
                f = {"type": t, "dest": dest, "bool": "and", "c": c}
                yield Cand("setp_operands", f, setp_line("eq", "and", False, t, dest, c))
        for pos, lit in itertools.product(("a", "b", "ab"), LITERALS):
            a = lit if "a" in pos else r(t, 0)
            b = lit if "b" in pos else r(t, 1)
            f = {"type": t, "imm": pos, "literal": lit}
            yield Cand("setp_operands", f, f"setp.eq.{t} %pred_0, {a}, {b};")
        for rt in REG_TYPES:
            ra = f"%pred_{5}" if rt == "pred" else reg(rt, 0)
            rb = f"%pred_{6}" if rt == "pred" else reg(rt, 1)
            f = {"type": t, "ab_reg": rt}
            yield Cand("setp_operands", f, f"setp.eq.{t} %pred_0, {ra}, {rb};", grid=False)


SET_D = ("u32", "s32", "f32", "f16", "bf16", "u16", "s16", "f16x2", "bf16x2") + (
    "f64",
    "b32",
    "b16",
    "b64",
    "u64",
    "s64",
    "u8",
    "pred",
)
SET_S = SCALAR + HALF + NEAR


def gen_set() -> Iterator[Cand]:
    for cmp, bop, ftz, d, s in itertools.product(CMP, BOOL, (False, True), SET_D, SET_S):
        f = {"cmp": cmp, "bool": bop, "ftz": ftz, "dtype": d, "stype": s}
        yield Cand("set", f, set_line(cmp, bop, ftz, d, s))


def gen_set_operands() -> Iterator[Cand]:
    for d, s in itertools.product(SET_D[:9], SET_S[:15]):
        base = f"set.eq.{d}.{s}"
        for rt in REG_TYPES:
            rr = f"%pred_{5}" if rt == "pred" else reg(rt, 0)
            f = {"dtype": d, "stype": s, "d_reg": rt}
            yield Cand("set_operands", f, f"{base} {rr}, {r(s, 1)}, {r(s, 2)};", grid=False)
            f = {"dtype": d, "stype": s, "ab_reg": rt}
            yield Cand("set_operands", f, f"{base} {r(d, 0)}, {rr}, {rr};", grid=False)
        for lit in ("1", "1.0", "0f3F800000", "0x3c00"):
            f = {"dtype": d, "stype": s, "imm": "b", "literal": lit}
            yield Cand("set_operands", f, f"{base} {r(d, 0)}, {r(s, 1)}, {lit};", grid=False)
        for c in ("!%pred_2", "1"):
            f = {"dtype": d, "stype": s, "bool": "and", "c": c}
            line = f"set.eq.and.{d}.{s} {r(d, 0)}, {r(s, 1)}, {r(s, 2)}, {c};"
            yield Cand("set_operands", f, line, grid=False)


SEL_TYPES = TYPES + ("b128", "tf32", "e4m3")


def gen_selp() -> Iterator[Cand]:
    for t in SEL_TYPES:
        yield Cand("selp", {"type": t}, f"selp.{t} {r(t, 0)}, {r(t, 1)}, {r(t, 2)}, %pred_2;")
    for t in SCALAR:
        for pos, lit in itertools.product(("a", "b", "ab"), LITERALS):
            a = lit if "a" in pos else r(t, 1)
            b = lit if "b" in pos else r(t, 2)
            f = {"type": t, "imm": pos, "literal": lit}
            yield Cand("selp_operands", f, f"selp.{t} {r(t, 0)}, {a}, {b}, %pred_2;")
        for c in ("!%pred_2", "0", "1", "!1", "%b32_7"):
            f = {"type": t, "c": c}
            yield Cand("selp_operands", f, f"selp.{t} {r(t, 0)}, {r(t, 1)}, {r(t, 2)}, {c};")


SLCT_C = ("s32", "f32", "u32", "b32", "s16", "s64", "f16", "f64")


def gen_slct() -> Iterator[Cand]:
    for ftz, d, c in itertools.product((False, True), SEL_TYPES, SLCT_C):
        f = {"ftz": ftz, "dtype": d, "ctype": c}
        ops = f"{r(d, 0)}, {r(d, 1)}, {r(d, 2)}, {r(c, 3)}"
        yield Cand("slct", f, f"slct{dot('ftz' if ftz else '', d, c)} {ops};")
    for d, c in itertools.product(SCALAR, ("s32", "f32")):
        for pos, lit in itertools.product(("a", "b", "c"), ("1", "-1", "1.0", "0f3F800000")):
            ops = [r(d, 0), r(d, 1), r(d, 2), r(c, 3)]
            ops["_abc".index(pos)] = lit
            f = {"dtype": d, "ctype": c, "imm": pos, "literal": lit}
            yield Cand("slct_operands", f, f"slct.{d}.{c} {', '.join(ops)};")
        for rt in REG_TYPES:
            rr = f"%pred_{5}" if rt == "pred" else reg(rt, 3)
            f = {"dtype": d, "ctype": c, "c_reg": rt}
            ops = f"{r(d, 0)}, {r(d, 1)}, {r(d, 2)}, {rr}"
            yield Cand("slct_operands", f, f"slct.{d}.{c} {ops};", grid=False)


def vline(op: str, a: str, b: str, cmp: str, sec: str, sel: tuple[str, ...] = ("",) * 4) -> str:
    regs = [f"%b32_{i}{s}" for i, s in enumerate(sel)]
    return f"{op}{dot(a, b, cmp, sec)} {', '.join(regs)};"


def gen_vset() -> Iterator[Cand]:
    for op, a, b, cmp, sec in itertools.product(("vset2", "vset4"), VTYPES, VTYPES, VCMP, VSEC):
        f = {"op": op, "atype": a, "btype": b, "cmp": cmp, "sec": sec}
        yield Cand("vset", f, vline(op, a, b, cmp, sec))
    # operands: immediates and register types
    for op, pos in itertools.product(("vset2", "vset4"), range(4)):
        ops = ["%b32_0", "%b32_1", "%b32_2", "%b32_3"]
        ops[pos] = "1"
        f = {"op": op, "imm": "dabc"[pos]}
        yield Cand("vset_operands", f, f"{op}.u32.u32.lt {', '.join(ops)};")
    for op, rt in itertools.product(("vset2", "vset4"), REG_TYPES):
        regs = ", ".join((f"%pred_{i + 3}" if rt == "pred" else reg(rt, i)) for i in range(4))
        f = {"op": op, "reg": rt}
        yield Cand("vset_operands", f, f"{op}.u32.u32.lt {regs};", grid=False)


def gen_vset_sel() -> Iterator[Cand]:
    """Every mask / selector spelling: .h + 1..3 digits, .b + 1..4 digits (0..7), on d/a/b/c."""
    for op, pre, maxlen in (("vset2", "h", 3), ("vset4", "b", 4)):
        spellings = [
            "".join(t)
            for n in range(1, maxlen + 1)
            for t in itertools.product("01234567", repeat=n)
        ]
        spellings += ["01234", "32100", "76543"] if op == "vset4" else ["0123"]
        alt = "b" if pre == "h" else "h"
        spellings = [f"{pre}{s}" for s in spellings] + [f"{alt}10", f"{alt}3210", "H10", "B3210"]
        for sel, pos, sec in itertools.product(spellings, range(4), ("", "add")):
            sels = ["", "", "", ""]
            sels[pos] = f".{sel}"
            f = {"op": op, "operand": "dabc"[pos], "sel": sel, "sec": sec}
            yield Cand("vset_sel", f, vline(op, "u32", "u32", "lt", sec, tuple(sels)), grid=False)


def gen_order() -> Iterator[Cand]:
    """Every permutation of the modifiers (types keep their relative order for set/slct/vset)."""
    setp_cases = [("lt", "f32"), ("eq", "b32"), ("lo", "u32"), ("ltu", "f16"), ("gt", "f16x2")]
    setp_cases += [("num", "bf16"), ("ne", "bf16x2"), ("ge", "s32"), ("nan", "f64")]
    for cmp, t in setp_cases:
        for bop, ftz in itertools.product(("", "and"), ("", "ftz")):
            toks = [x for x in (cmp, bop, ftz, t) if x]
            tail = ", %pred_2" if bop else ""
            for perm in itertools.permutations(toks):
                f = {"op": "setp", "order": ".".join(_role(x, cmp, bop, ftz) for x in perm)}
                f |= {"cmp": cmp, "bool": bop, "ftz": bool(ftz), "type": t}
                line = f"setp{dot(*perm)} %pred_0, {r(t, 0)}, {r(t, 1)}{tail};"
                yield Cand("order", f, line)
    set_cases = [("lt", "f16", "f32"), ("ltu", "u32", "f16x2"), ("lo", "s32", "u64")]
    set_cases += [("gt", "f32", "f32"), ("eq", "bf16", "f64")]
    for cmp, d, s in set_cases:
        for bop, ftz in itertools.product(("", "and"), ("", "ftz")):
            toks = [x for x in (cmp, bop, ftz, "D", "S") if x]
            tail = ", %pred_2" if bop else ""
            for perm in itertools.permutations(toks):
                if perm.index("D") > perm.index("S"):
                    continue
                mods = [{"D": d, "S": s}.get(x, x) for x in perm]
                f = {"op": "set", "order": ".".join(_role(x, cmp, bop, ftz) for x in perm)}
                f |= {"cmp": cmp, "bool": bop, "ftz": bool(ftz), "dtype": d, "stype": s}
                line = f"set{dot(*mods)} {r(d, 0)}, {r(s, 1)}, {r(s, 2)}{tail};"
                yield Cand("order", f, line)
    for d, c, ftz in (("u32", "f32", "ftz"), ("f64", "s32", ""), ("b16", "f32", "")):
        toks = [x for x in (ftz, "D", "C") if x]
        for perm in itertools.permutations(toks):
            if perm.index("D") > perm.index("C"):
                continue
            mods = [{"D": d, "C": c}.get(x, x) for x in perm]
            f = {"op": "slct", "order": ".".join("FTZ" if x == "ftz" else x for x in perm)}
            f |= {"dtype": d, "ctype": c, "ftz": bool(ftz)}
            line = f"slct{dot(*mods)} {r(d, 0)}, {r(d, 1)}, {r(d, 2)}, {r(c, 3)};"
            yield Cand("order", f, line)
    for op, (a, b), sec in itertools.product(
        ("vset2", "vset4"), (("u32", "s32"), ("s32", "s32")), ("", "add")
    ):
        toks = [x for x in ("A", "B", "lt", sec) if x]
        for perm in itertools.permutations(toks):
            if perm.index("A") > perm.index("B"):
                continue
            mods = [{"A": a, "B": b}.get(x, x) for x in perm]
            order = ".".join({"lt": "CMP", "add": "ADD"}.get(x, x) for x in perm)
            f = {"op": op, "order": order, "atype": a, "btype": b, "sec": sec}
            yield Cand("order", f, f"{op}{dot(*mods)} %b32_0, %b32_1, %b32_2, %b32_3;")


def _role(x: str, cmp: str, bop: str, ftz: str) -> str:
    if x == cmp:
        return "CMP"
    if x == bop:
        return "BOOL"
    if x == ftz:
        return "FTZ"
    return x if x in ("D", "S") else "TYPE"


def gen_misc() -> Iterator[Cand]:
    """Guards, bare register names, spacing, case, duplicated/missing modifiers."""
    f32 = "%f32_0, %f32_1"
    lines = [
        f"@%pred_3 setp.lt.f32 %pred_0, {f32};",
        f"@!%pred_3 setp.lt.f32 %pred_0, {f32};",
        f"@pred_3 setp.lt.f32 %pred_0, {f32};",
        f"@%f32_2 setp.lt.f32 %pred_0, {f32};",
        "setp.lt.f32 pred_0, f32_0, f32_1;",
        "set.lt.u32.f32 b32_0, f32_0, f32_1;",
        "selp.b32 b32_0, b32_1, b32_2, pred_2;",
        "slct.b32.s32 b32_0, b32_1, b32_2, s32_3;",
        "vset2.u32.u32.lt b32_0, b32_1.h10, b32_2.h32, b32_3;",
        f"setp.lt.f32 %pred_0,{f32};",
        f"setp.lt.f32 %pred_0 | %pred_1, {f32};",
        f"setp.lt.f32 %pred_0|%pred_0, {f32};",
        f"setp.lt.f32 !%pred_0, {f32};",
        "setp.lt.f32 %pred_0, -%f32_0, %f32_1;",
        "setp.lt.f32 %pred_0, !%f32_0, %f32_1;",
        f"setp.lt.lt.f32 %pred_0, {f32};",
        f"setp.lt.gt.f32 %pred_0, {f32};",
        f"setp.lt.and.or.f32 %pred_0, {f32}, %pred_2;",
        f"setp.lt.ftz.ftz.f32 %pred_0, {f32};",
        f"setp.lt.f32.f32 %pred_0, {f32};",
        f"setp.LT.f32 %pred_0, {f32};",
        f"SETP.lt.f32 %pred_0, {f32};",
        f"setp.f32 %pred_0, {f32};",
        f"setp.lt %pred_0, {f32};",
        f"setp.and.f32 %pred_0, {f32}, %pred_2;",
        f"setp.lt.and.f32 %pred_0, {f32};",
        f"setp.lt.f32 %pred_0, {f32}, %pred_2;",
        f"setp.lt.f32 %pred_0, {f32}, %pred_2, %pred_2;",
        "setp.lt.f32 %pred_0, %f32_0, 0F3F800000;",
        "setp.lt.f16 %pred_0, %f16_0, 0h3C00;",
        "set.lt.f32 %f32_0, %f32_1, %f32_2;",
        "set.lt.f32.f32.f32 %f32_0, %f32_1, %f32_2;",
        "set.lt.u32.f32 %pred_0, %f32_1, %f32_2;",
        "set.lt.u32.f32 %b32_0|%b32_1, %f32_1, %f32_2;",
        "selp.b32 %b32_0, %b32_1, %b32_2;",
        "selp.b32.b32 %b32_0, %b32_1, %b32_2, %pred_2;",
        "selp.ftz.f32 %f32_0, %f32_1, %f32_2, %pred_2;",
        "slct.b32 %b32_0, %b32_1, %b32_2, %s32_3;",
        "slct.ftz.ftz.b32.f32 %b32_0, %b32_1, %b32_2, %f32_3;",
        "vset2.u32.u32.lt.add.add %b32_0, %b32_1, %b32_2, %b32_3;",
        "vset2.u32.u32.lt %b32_0, %b32_1, %b32_2;",
        "vset2.u32.u32.lt %b32_0.h0.h1, %b32_1, %b32_2, %b32_3;",
        "vset2.u32.u32.lt %b32_0, %b32_1 .h10, %b32_2, %b32_3;",
        "vset2.u32.u32.lt %b32_0, -%b32_1, %b32_2, %b32_3;",
        "vset4.u32.u32.ne.max %b32_0, %b32_1, %b32_2, %b32_3;",
        "vset4.s32.u32.lt %b32_0, %b32_1, %b32_2, %b32_3;",
        "vset2.s32.u32.lt %b32_0, %b32_1, %b32_2, %b32_3;",
    ]
    for line in lines:
        yield Cand("misc", {"what": line}, line)


def generate(detail: bool) -> list[Cand]:
    gens = [gen_setp, gen_setp_operands, gen_set, gen_selp, gen_slct, gen_vset, gen_order]
    gens.append(gen_misc)
    if detail:
        gens += [gen_set_operands, gen_vset_sel]
    return [c for g in gens for c in g()]


def headers(quick: bool, only: str | None = None) -> list[tuple[str, str]]:
    if only:
        return [tuple(h.split("@")) for h in only.split(",")]  # type: ignore[misc]
    if quick:
        return [tuple(h.split("@")) for h in QUICK_HEADERS]  # type: ignore[misc]
    return list(itertools.product(TARGETS, VERSIONS))


def pack(results: dict[str, list[int | None]]) -> dict[str, object]:
    """Store each distinct result row once: ``{"rows": [...], "header_row": {header: i}}``."""
    rows: list[list[int | None]] = []
    seen: dict[tuple[int | None, ...], int] = {}
    header_row = {}
    for key, row in results.items():
        header_row[key] = seen.setdefault(tuple(row), len(rows))
        if header_row[key] == len(rows):
            rows.append(row)
    return {"rows": rows, "header_row": header_row}


def unpack(doc: dict) -> dict[str, list[int | None]]:
    """Header -> result row, from a findings document."""
    return {k: doc["rows"][i] for k, i in doc["header_row"].items()}


def _rank(key: str) -> tuple[int, tuple[int, int]]:
    target, version = key.split("@")
    major, minor = version.split(".")
    return TARGETS.index(target), (int(major), int(minor))


def _form(family: str, f: dict[str, object]) -> str | None:
    keys = {
        "setp": ("type",),
        "set": ("dtype", "stype"),
        "selp": ("type",),
        "slct": ("dtype", "ctype"),
        "vset": ("op",),
    }.get(family)
    if keys is None:
        return None
    return f"{family}." + ".".join(str(f[k]) for k in keys) + (".ftz" if f.get("ftz") else "")


def report(doc: dict) -> str:
    """Markdown summary: header limits, accepted counts per header, version/target rules."""
    cands, results = doc["candidates"], unpack(doc)
    grid_keys = [k for k in doc["headers"]]
    out = ["## Headers ptxas accepts (minimum `.version` per `.target`)", ""]
    for t in TARGETS:
        vs = sorted(_rank(k)[1] for k in grid_keys if k.startswith(f"{t}@"))
        if vs:
            out.append(f"- `{t}`: {vs[0][0]}.{vs[0][1]} .. {vs[-1][0]}.{vs[-1][1]}")
    fams = ("setp", "set", "selp", "slct", "vset")
    out += ["", "## Accepted candidates per header (" + " / ".join(fams) + ")", ""]
    versions = sorted({k.split("@")[1] for k in grid_keys}, key=lambda v: _rank(f"sm_10@{v}")[1])
    out.append("| target | " + " | ".join(versions) + " |")
    out.append("|---|" + "---|" * len(versions))
    fam_idx = {f: [i for i, c in enumerate(cands) if c["family"] == f] for f in fams}
    for t in TARGETS:
        cells = []
        for v in versions:
            row = results.get(f"{t}@{v}")
            if row is None:
                cells.append("")
                continue
            cells.append("/".join(str(sum(row[i] == -1 for i in fam_idx[f])) for f in fams))
        out.append(f"| {t} | " + " | ".join(cells) + " |")
    # rules: accepted iff target >= T and version >= V (over the grid headers)
    rules: dict[str, dict[str, int]] = {}
    irregular: list[str] = []
    for i, c in enumerate(cands):
        form = _form(c["family"], c["fields"])
        if form is None:
            continue
        acc = [k for k in grid_keys if results[k][i] == -1]
        if not acc:
            continue
        tmin = min(_rank(k)[0] for k in acc)
        vmin = min(_rank(k)[1] for k in acc)
        expect = [k for k in grid_keys if _rank(k)[0] >= tmin and _rank(k)[1] >= vmin]
        if expect != acc:
            irregular.append(c["line"])
            continue
        rule = f"{TARGETS[tmin]}+, PTX {vmin[0]}.{vmin[1]}+"
        rules.setdefault(form, {}).setdefault(rule, 0)
        rules[form][rule] += 1
    out += ["", "## Requirement per form (accepted iff target >= T and version >= V)", ""]
    by_rule: dict[str, list[str]] = {}
    for form, rs in rules.items():
        key = (
            "; ".join(f"{r} ({n})" for r, n in sorted(rs.items()))
            if len(rs) > 1
            else next(iter(rs))
        )
        by_rule.setdefault(key, []).append(form)
    for key, forms in sorted(by_rule.items()):
        out.append(f"- **{key}**: " + ", ".join(f"`{f}`" for f in forms))
    out += ["", f"Irregular (not an upward-closed rectangle): {len(irregular)}"]
    out += [f"- `{line}`" for line in irregular[:50]]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="/tmp/ptxas_findings.json")
    ap.add_argument("--report", metavar="JSON", help="print a markdown summary of a findings file")
    ap.add_argument("--ptxas", default="ptxas")
    ap.add_argument("--quick", action="store_true", help="a handful of headers only")
    ap.add_argument("--headers", help="comma-separated target@version list to run instead")
    ap.add_argument("--merge", metavar="JSON", help="add the new headers to this findings file")
    ap.add_argument("--verify", type=int, default=300, help="re-check N random lines one by one")
    ap.add_argument("--jobs", type=int, default=2)
    ns = ap.parse_args(argv)

    if ns.report:
        print(report(json.loads(Path(ns.report).read_text())), end="")
        return 0
    cands = generate(detail=True)
    errors: list[str] = []
    header_errors: dict[str, str] = {}
    results: dict[str, list[int | None]] = {}
    base = json.loads(Path(ns.merge).read_text()) if ns.merge else None
    if base is not None:
        if [c["line"] for c in base["candidates"]] != [c.line for c in cands]:
            raise SystemExit(f"{ns.merge} was made from a different candidate list")
        errors, header_errors, results = base["errors"], base["header_errors"], unpack(base)
    err_idx = {e: i for i, e in enumerate(errors)}
    t0 = time.time()
    new_keys = []
    for target, version in headers(ns.quick, ns.headers):
        key = f"{target}@{version}"
        herr = check_header(target, version, ns.ptxas)
        if herr is not None:
            header_errors[key] = herr
            continue
        idx = [i for i, c in enumerate(cands) if c.grid or key in DETAIL_HEADERS]
        res = probe_detailed([cands[i].line for i in idx], target, version, ns.ptxas, jobs=ns.jobs)
        row: list[int | None] = [None] * len(cands)
        for i, (ok, msgs) in zip(idx, res, strict=True):
            if ok:
                row[i] = -1
            else:
                msg = "; ".join(msgs)
                row[i] = err_idx.setdefault(msg, len(errors))
                if row[i] == len(errors):
                    errors.append(msg)
        results[key] = row
        new_keys.append(key)
        acc = sum(1 for v in row if v == -1)
        print(
            f"{key:12s} {len(idx):6d} lines {acc:6d} accepted  {time.time() - t0:6.1f}s",
            file=sys.stderr,
        )

    preferred = [k for k in ("sm_90@9.0", "sm_80@9.0", "sm_53@6.4", "sm_75@6.3") if k in new_keys]
    sample_keys = preferred or new_keys[:: max(1, len(new_keys) // 4)][:4]
    verified = verify(cands, results, errors, ns.verify, ns.ptxas, sample_keys)
    if base is not None:
        verified["checked"] += base["verification"]["checked"]
        for k in ("mismatches", "text_differs"):
            verified[k] = base["verification"].get(k, []) + verified[k]  # type: ignore[operator]
    results = dict(sorted(results.items(), key=lambda kv: _rank(kv[0])))
    version_text = subprocess.run([ns.ptxas, "--version"], capture_output=True, text=True).stdout
    doc = {
        "ptxas": version_text.strip().splitlines()[-1] if version_text else "?",
        "headers": list(results),
        "header_errors": header_errors,
        "errors": errors,
        "verification": verified,
        "candidates": [
            {"family": c.family, "fields": c.fields, "line": c.line, "grid": c.grid} for c in cands
        ],
        **pack(results),
    }
    Path(ns.out).write_text(json.dumps(doc, separators=(",", ":")))
    print(f"wrote {ns.out}: {len(cands)} candidates x {len(results)} headers", file=sys.stderr)
    return 0


def verify(
    cands: list[Cand],
    results: dict[str, list[int | None]],
    errors: list[str],
    n: int,
    ptxas: str,
    keys: list[str],
) -> dict[str, object]:
    """Re-assemble *n* random lines per header in *keys*, one line per ptxas call."""
    rng = random.Random(13)
    mismatches: list[dict[str, object]] = []
    text_differs: list[dict[str, object]] = []
    checked = 0
    for key in keys:
        target, version = key.split("@")
        row = results[key]
        pool = [i for i, v in enumerate(row) if v is not None]
        # bias the sample toward accepted lines, which are the rarer class
        accepted = [i for i in pool if row[i] == -1]
        sample = rng.sample(accepted, min(len(accepted), n // 2))
        sample += rng.sample(pool, min(len(pool), n - len(sample)))
        for i in sample:
            ok, msgs = probe_detailed([cands[i].line], target, version, ptxas, chunk=1, jobs=1)[0]
            checked += 1
            rec = {"header": key, "line": cands[i].line, "alone": msgs}
            if ok != (row[i] == -1):
                mismatches.append(rec)
            elif not ok and "; ".join(msgs) != errors[row[i]]:  # type: ignore[index]
                # e.g. "Unknown symbol" is reported once per symbol, not once per line
                text_differs.append(rec)
    return {"checked": checked, "mismatches": mismatches, "text_differs": text_differs}


if __name__ == "__main__":
    sys.exit(main())
