"""An independent plain-Python interpreter for the handful of PTX instructions the
functions of tests/ptx/func.cu compile to (ld, st, cvta, mov, add, sub, mul.lo, mad.lo,
mul.wide, shl, cvt between integers, setp, selp, not, min, max, bra, ret).

Test-only: it must not import z3 or `ptxsmt`. It reads the PTX text itself, runs one
path with concrete values, and keeps memory as a dict of bytes (little-endian, 0 where
nothing was given), as the hardware does for one thread.
"""

from __future__ import annotations

import re

_FUNCTION = r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?{name}\s*\((.*?)\)\s*\{{(.*?)\n\}}"
_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


_ARITH = {"add": lambda a, b, c, w: a + b, "sub": lambda a, b, c, w: a - b,
          "mul": lambda a, b, c, w: a * b, "mad": lambda a, b, c, w: a * b + c,
          "shl": lambda a, b, c, w: a << b if b < w else 0}


def _signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) & 1 else v


def _width(type_: str) -> int:
    return 1 if type_ == "pred" else int(type_[1:])


def statements(text: str, name: str) -> list[str]:
    body = re.search(_FUNCTION.format(name=re.escape(name)), text, re.S).group(2)
    body = re.sub(r"//[^\n]*", "", body)
    out = []
    for part in re.split(r";|\n", body):
        part = part.strip()
        while m := re.match(r"(\$?[\w$]+):\s*", part):  # labels
            out.append(m.group(1) + ":")
            part = part[m.end():]
        if part and not part.startswith((".", "{", "}")):
            out.append(part)
    return out


def run(text: str, name: str, params: dict[str, int], specials: dict[str, int],
        memory: dict[int, int], registers: dict | None = None) -> tuple[dict[str, int],
                                                                        dict[int, int]]:
    """(return parameters, final memory bytes) of one run of function `name`; the final
    registers go into `registers` when given."""
    regs: dict[str, int] = {}
    mem = dict(memory)
    returns: dict[str, int] = {}
    code = statements(text, name)
    labels = {s[:-1]: i for i, s in enumerate(code) if s.endswith(":")}

    def val(op: str, w: int) -> int:
        op = op.strip()
        if op.startswith("%") and op[1:] in specials:
            return specials[op[1:]]
        if op in regs:
            return regs[op]
        return int(op, 0) & ((1 << w) - 1) if w > 1 else int(op)

    def address(op: str) -> int:
        base, _, off = op.strip("[] ").partition("+")
        return (val(base, 64) + int(off or "0", 0)) & ((1 << 64) - 1)

    pc = 0
    while pc < len(code):
        s = code[pc]
        pc += 1
        if s.endswith(":"):
            continue
        if m := re.match(r"@(!?)(%\w+)\s+(.*)", s):
            if bool(regs[m.group(2)]) == (m.group(1) == "!"):
                continue
            s = m.group(3)
        head, _, rest = s.partition(" ")
        ops = [o.strip() for o in re.split(r",(?![^\[]*\])", rest)] if rest.strip() else []
        op, *mods = head.split(".")
        t = mods[-1] if mods else ""
        w = _width(t) if re.fullmatch(r"[bsu]\d+|pred", t) else 0
        mask = (1 << w) - 1 if w > 1 else 1
        if op == "ret":
            break
        if op == "bra":
            pc = labels[ops[0]]
            continue
        if op == "ld":
            if "param" in mods:
                base, _, off = ops[1].strip("[]").partition("+")
                regs[ops[0]] = params[base + (f"+{off}" if off and off != "0" else "")]
            else:
                at = address(ops[1])
                regs[ops[0]] = sum(mem.get(at + k, 0) << 8 * k for k in range(w // 8))
        elif op == "st":
            if "param" in mods:
                returns[ops[0].strip("[]").partition("+")[0]] = val(ops[1], w)
            else:
                at, v = address(ops[0]), val(ops[1], w)
                for k in range(w // 8):
                    mem[at + k] = (v >> 8 * k) & 0xFF
        elif op in ("cvta", "mov"):
            regs[ops[0]] = val(ops[1], w)
        elif op == "not":
            regs[ops[0]] = not regs[ops[1]] if t == "pred" else ~val(ops[1], w) & mask
        elif op == "cvt":
            src = mods[-1]
            v = val(ops[1], _width(src))
            regs[ops[0]] = (_signed(v, _width(src)) if src[0] == "s" else v) & \
                ((1 << _width(mods[-2])) - 1)
        elif op == "setp":
            a, b = val(ops[1], w), val(ops[2], w)
            if t[0] == "s":
                a, b = _signed(a, w), _signed(b, w)
            regs[ops[0]] = _CMP[mods[0]](a, b)
        elif op == "selp":
            regs[ops[0]] = val(ops[1], w) if regs[ops[3]] else val(ops[2], w)
        elif op in ("min", "max"):
            a, b = val(ops[1], w), val(ops[2], w)
            order = (_signed(a, w), _signed(b, w)) if t[0] == "s" else (a, b)
            regs[ops[0]] = a if (order[0] <= order[1]) == (op == "min") else b
        elif op == "mul" and "wide" in mods:
            a, b = val(ops[1], w), val(ops[2], w)
            if t[0] == "s":
                a, b = _signed(a, w), _signed(b, w)
            regs[ops[0]] = (a * b) & ((1 << 2 * w) - 1)
        else:
            a, b = val(ops[1], w), val(ops[2], w)
            c = val(ops[3], w) if op == "mad" else 0
            regs[ops[0]] = _ARITH[op](a, b, c, w) & mask
    if registers is not None:
        registers.update(regs)
    return returns, mem
