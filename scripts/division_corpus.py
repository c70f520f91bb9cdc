"""Functions that divide by constants (udiv, sdiv, urem, srem; i32 and i64; divisors 3,
7, 10, 28, 2^k, -5), compiled as `scale_functions.compile_pair` compiles (`llc-14 -O0`
against `opt-14 -O2 | llc-14 -O2`, sm_80): llc writes each division as a multiply-high
and shifts at both levels, and opt reassociates the arithmetic around them
(`smt/sweeping/division.py` reads them back; tests/test_division.py).

    python scripts/division_corpus.py [--out tests/ptx/division]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scale_functions import available, compile_pair

# name -> the body of `define iN @f(iN %a, iN %b, iN %c, iN %d)`, N the name's width
FUNCTIONS = {
    "mix32": """
  %s = mul i32 %a, %b
  %t = add i32 %s, %c
  %q1 = udiv i32 %t, 7
  %r1 = urem i32 %t, 28
  %u = sub i32 %a, %d
  %q2 = sdiv i32 %u, -5
  %v = xor i32 %b, %c
  %r2 = srem i32 %v, 3
  %q3 = sdiv i32 %d, 8
  %r3 = urem i32 %a, 16
  %w = add i32 %a, %b
  %q4 = udiv i32 %w, 10
  %r4 = urem i32 %w, 10
  %x1 = mul i32 %r1, 3
  %x2 = add i32 %q1, %x1
  %x3 = xor i32 %x2, %q2
  %x4 = add i32 %x3, %r2
  %x5 = sub i32 %x4, %q3
  %x6 = add i32 %x5, %r3
  %x7 = mul i32 %q4, 13
  %x8 = add i32 %x6, %x7
  %x9 = xor i32 %x8, %r4
  %y1 = sdiv i32 %x9, 7
  %y2 = add i32 %y1, %t
  ret i32 %y2""",
    "mix64": """
  %s = mul i64 %a, %b
  %t = add i64 %s, %c
  %q1 = udiv i64 %t, 7
  %r1 = urem i64 %t, 10
  %u = sub i64 %a, %d
  %q2 = sdiv i64 %u, 3
  %r2 = srem i64 %u, 3
  %q3 = sdiv i64 %d, 16
  %x1 = mul i64 %r1, 5
  %x2 = add i64 %q1, %x1
  %x3 = xor i64 %x2, %q2
  %x4 = add i64 %x3, %r2
  %x5 = sub i64 %x4, %q3
  %x6 = mul i64 %x5, %a
  %x7 = add i64 %x6, %q1
  ret i64 %x7""",
}


# one division a function, `define iN @NAME(iN %x)`: the sequences llc writes for them
SINGLE = {"udiv32_7": ("i32", "udiv", 7), "sdiv32_7": ("i32", "sdiv", 7),
          "sdiv32_m5": ("i32", "sdiv", -5), "urem32_10": ("i32", "urem", 10),
          "srem32_3": ("i32", "srem", 3), "sdiv32_8": ("i32", "sdiv", 8),
          "udiv64_7": ("i64", "udiv", 7), "sdiv64_3": ("i64", "sdiv", 3),
          "urem64_10": ("i64", "urem", 10), "udiv32_54": ("i32", "udiv", 54)}


def single() -> str:
    return "".join(f"define {t} @{name}({t} %x) {{\n  %r = {op} {t} %x, {c}\n  ret {t} %r\n}}\n"
                   for name, (t, op, c) in SINGLE.items())


def source(name: str) -> str:
    t = "i64" if name.endswith("64") else "i32"
    params = ", ".join(f"{t} %{v}" for v in "abcd")
    return f"define {t} @f({params}) {{\nentry:{FUNCTIONS[name]}\n}}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("tests/ptx/division"))
    args = ap.parse_args()
    if not available():
        sys.exit("needs llc-14 and opt-14")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, ir in [("single", single()), *((n, source(n)) for n in FUNCTIONS)]:
        (args.out / f"{name}.ll").write_text(ir)
        for path in compile_pair(ir, args.out / name):
            print(path)


if __name__ == "__main__":
    main()
