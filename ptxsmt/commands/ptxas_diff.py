"""`ptxsmt ptxas-diff`: compare ptxas's constant folding with ptxsmt's semantics."""

from __future__ import annotations

import shlex
import sys
from collections import Counter
from pathlib import Path

import click

from .. import report
from ..isa.literals import describe
from ..isa.syntax import PtxError
from ..isa.targets import parse_target
from ..ptxasdiff import DiffError, DiffReport, ReadbackError, load_jsonl, run_diff
from ..report.progress import Progress
from ..resources import model_files
from ..sem.options import Options
from ..solver import MAX_JOBS

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.command("ptxas-diff", context_settings=CONTEXT)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False), metavar="[FILE]...")
@click.option("--ptxas", "ptxas", default="ptxas", show_default=True, metavar="PATH",
              help="The ptxas to test.")
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="Only the first N cases.")
@click.option("--jobs", type=click.IntRange(1, MAX_JOBS), default=2, show_default=True,
              help="ptxas processes at once.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--target", default="sm_90", show_default=True, help="ptxas -arch and .target.")
def ptxas_diff(files, ptxas, limit, jobs, as_json, target) -> None:
    """Differential test: ptxas -O3's constant folding against ptxsmt.

    \b
    Each vector ({"ptx", "inputs"} JSONL, as `ptxsmt eval --json` writes) is
    compiled on constant operands; the outputs ptxas folds are read back from
    the SASS (nvdisasm or cuobjdump) and compared with ptxsmt's. Outputs ptxas
    leaves to run time are counted per family as not folded, never guessed.
    Each mismatch is assembled again alone at -O3 and -O0 and printed with its
    kernel. FILE defaults to the vectors ptxsmt ships (models/*.jsonl). Exit 0
    when every folded output agrees, 1 on a mismatch or a case ptxas refuses,
    2 on bad input or a missing tool.
    \b
    Examples:
      ptxsmt ptxas-diff models/golden.jsonl
      ptxsmt ptxas-diff --limit 2000 --jobs 4 --json vectors.jsonl
    """
    try:
        opts = Options(target=parse_target(target).sm)
        paths = [Path(f) for f in files] or model_files()
        if not paths:
            raise DiffError("no FILE given and no models/*.jsonl found")
        for p in paths:
            _check_readable(p)
        cases = load_jsonl(paths, opts, limit)
        if not cases:
            raise DiffError("no cases in " + ", ".join(map(str, paths)))
        with Progress("assembling", unit="kernels") as bar:
            result = run_diff(cases, ptxas=ptxas, jobs=jobs, target=target, opts=opts,
                              progress=lambda done, total: _advance(bar, done, total))
    except ReadbackError as e:
        _fail(f"cannot read the SASS back: {e} (set PTXSMT_DIFF_KEEP=DIR to keep the kernel)")
    except (DiffError, PtxError, OSError) as e:
        _fail(str(e))
    if as_json:
        click.echo(report.dumps(result.to_json()))
    else:
        click.echo(text(result))
    sys.exit(1 if result.mismatches or result.rejected() else 0)


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def _check_readable(path: Path) -> None:
    """A FILE must be a file of UTF-8 text; say which line is not."""
    if not path.is_file():
        raise DiffError(f"{path}: no such file")
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DiffError(f"{path}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x})") from None


def _advance(bar: Progress, done: int, total: int) -> None:
    bar.total = total
    bar.update(done - bar.done)


def text(r: DiffReport) -> str:
    out = [f"ptxas: {r.ptxas} (-O3, {r.target})", ""]
    rows = r.families()
    head = ("family", "cases", "folded", "not folded", "mismatches", "rejected", "skipped")
    width = max([len(head[0]), *map(len, rows)])
    out.append(f"{head[0]:<{width}}  " + "  ".join(f"{h:>10}" for h in head[1:]))
    total = dict.fromkeys(head[1:], 0)
    for fam, row in rows.items():
        values = (row["cases"], row["folded"], row["not_folded"], row["mismatches"],
                  row["rejected"], row["skipped"])
        out.append(f"{fam:<{width}}  " + "  ".join(f"{v:>10}" for v in values))
        for h, v in zip(head[1:], values):
            total[h] += v
    out.append(f"{'total':<{width}}  " + "  ".join(f"{v:>10}" for v in total.values()))
    if total["skipped"]:
        why = Counter(o.skipped for o in r.outcomes if o.skipped is not None)
        out.append("skipped: " + "; ".join(f"{n} x {msg}" for msg, n in why.most_common(3))
                   + ("; ..." if len(why) > 3 else ""))
    not_folded = r.not_folded()
    if not_folded:
        out += ["", "not folded (ptxas leaves these to run time; nothing to compare):"]
        out += [f"  {fam:<{width}}  {e['cases']} cases, {e['reason']}"
                for fam, e in not_folded.items()]
    rejected = r.rejected()
    if rejected:
        why = Counter(x["error"] for x in rejected)
        out += ["", f"rejected by ptxas: {len(rejected)} ("
                + "; ".join(f"{n} x {msg}" for msg, n in why.most_common(3)) + ")"]
        out += [f"  {x['ptx']}  -- {x['error']}" for x in rejected[:10]]
        if len(rejected) > 10:
            out.append(f"  ... and {len(rejected) - 10} more (--json lists all)")
    out.append("")
    if not r.mismatches:
        out.append(f"mismatches: none ({sum(o.folded for o in r.outcomes)} folded cases agree, "
                   f"{r.seconds:.1f} s)")
    else:
        out.append(f"mismatches: {len(r.mismatches)}")
    for m in r.mismatches:
        out.append("")
        out += mismatch_text(m, r)
    return "\n".join(out)


def _show(value: str | bool, t) -> str:
    """A JSON output value for people: hex and decoded value."""
    return describe(value if isinstance(value, bool) else int(value, 16), t)


def mismatch_text(m: dict, r: DiffReport) -> list[str]:
    case = r.outcomes[m["case"]].case
    lines = [f"MISMATCH  {m['ptx']}  ({m['family']}, case {m['case']})"]
    for k, v in case.values.items():
        lines.append(f"  in     {k} = {describe(v, case.types[k])}")
    for k in m["ptxsmt"]:
        got = "not folded" if m["ptxas"][k] is None else _show(m["ptxas"][k], case.types[k])
        mark = ""
        if k in m["differ"]:
            mark = "  <-- differs" + ("" if m["confirmed_alone"] else " (not reproduced alone)")
        lines.append(f"  ptxsmt         {k} = {_show(m['ptxsmt'][k], case.types[k])}")
        lines.append(f"  ptxas -O3      {k} = {got}{mark}")
        if "O0" in m and k in m["O0"]:
            lines.append(f"  ptxas -O0      {k} = {_show(m['O0'][k], case.types[k])}")
    if "O0_note" in m:
        lines.append(f"  ptxas -O0      {m['O0_note']}")
    args = " ".join(f"{k}={str(v).lower()}" for k, v in m["inputs"].items())
    lines.append(f"  reproduce: ptxsmt eval {shlex.quote(m['ptx'])} {args}")
    lines.append("  kernel (ptxas -O3 -arch " + r.target + "):")
    lines += ["    " + line for line in m["kernel"].splitlines()]
    return lines
