"""Compare `ptxsmt check` with the installed ptxas over the survey's candidate space.

    python scripts/ptxas_agreement.py [--headers sm_90@9.0,sm_80@7.0] [--sample N]

Prints one row per header: candidates, accepted by ptxas, agreement, and the
first disagreements. Exit 1 on any disagreement. Candidates that only vary a
register's declared type are left out: an instruction line has no declarations.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ptxas_probe  # noqa: E402
import ptxas_survey  # noqa: E402

from ptxsmt.check import check_line  # noqa: E402
from ptxsmt.isa.targets import parse_target, parse_version  # noqa: E402

GENERATORS = (ptxas_survey.gen_setp, ptxas_survey.gen_set, ptxas_survey.gen_setp_operands,
              ptxas_survey.gen_set_operands, ptxas_survey.gen_selp, ptxas_survey.gen_slct,
              ptxas_survey.gen_vset, ptxas_survey.gen_vset_sel, ptxas_survey.gen_order)
REGISTER_TYPE_FIELDS = {"c_reg", "reg", "d_reg", "ab_reg"}


def candidates() -> list[str]:
    return [c.line for gen in GENERATORS for c in gen()
            if not REGISTER_TYPE_FIELDS & set(c.fields) and c.fields.get("c") != "%b32_7"]


def compare(lines: list[str], header: str) -> tuple[int, list[tuple[str, str | None, str | None]]]:
    target, version = header.split("@")
    tgt, ver = parse_target(target), parse_version(version)
    verdicts = ptxas_probe.probe(lines, target, version)
    wrong = []
    accepted = 0
    for line, err in zip(lines, verdicts):
        ours = check_line(line, tgt, ver)
        accepted += err is None
        if (err is None) != (ours is None):
            wrong.append((line, err, ours))
    return accepted, wrong


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--headers", default="sm_90@9.0,sm_80@7.0,sm_75@6.3,sm_53@6.4,sm_120@8.7")
    ap.add_argument("--sample", type=int, default=0, help="Random sample size (0: all).")
    args = ap.parse_args()
    lines = candidates()
    if args.sample:
        lines = random.Random(0).sample(lines, args.sample)
    print(f"{'header':<12} {'candidates':>10} {'ptxas ok':>9} {'agree':>8} {'seconds':>8}")
    status = 0
    for header in args.headers.split(","):
        start = time.perf_counter()
        accepted, wrong = compare(lines, header)
        agree = 100.0 * (len(lines) - len(wrong)) / len(lines)
        print(f"{header:<12} {len(lines):>10} {accepted:>9} {agree:>7.3f}% "
              f"{time.perf_counter() - start:>8.1f}")
        for line, theirs, ours in wrong[:5]:
            print(f"   {line}\n     ptxas: {theirs or 'ok'}\n     ptxsmt: {ours or 'ok'}")
        status |= bool(wrong)
    return status


if __name__ == "__main__":
    sys.exit(main())
