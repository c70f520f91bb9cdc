"""`ptxsmt synth`: find, prove and minimise the rewrites between small snippets."""

from __future__ import annotations

from pathlib import Path

import click

from .. import report
from ..isa.errors import PtxError, quote
from ..report import synth as rendering
from ..report.progress import Progress
from ..synth import search
from ..synth.executor import EXECUTORS, executor
from ..synth.grammar import (
    DEFAULT_FAMILIES,
    DEFAULT_TYPES,
    FAMILIES,
    parse_families,
    parse_types,
)
from ..synth.inversions import table
from .common import (
    CONTEXT,
    cache_option,
    fail,
    given,
    jobs_option,
    refuse,
    timeout_option,
    writable_dir,
)

MAX_SIZE = 2  # the grammar has no step that needs a third


@click.command("synth", context_settings=CONTEXT)
@click.option("--types", "types", default=",".join(DEFAULT_TYPES), show_default=True,
              help="Types to search, comma-separated: each a setp type, or i16/i32/i64 "
                   "(the N-bit integers as the sN, uN and bN compares read them, on the "
                   "same operands: lt.s32 vs lo.u32; vset on i32).")
@click.option("--size", type=click.IntRange(1, MAX_SIZE), default=2, show_default=True,
              help="Most grammar steps in a snippet (a compare; a glue op, selp or chained "
                   "compare on its result).")
@click.option("--families", default=None, metavar="LIST",
              help=f"Grammar families, comma-separated, of {', '.join(FAMILIES)} "
                   f"[default: {','.join(DEFAULT_FAMILIES)}].")
@jobs_option(1)
@click.option("--executor", "executor_kind", type=click.Choice(EXECUTORS), default="processes",
              show_default=True, help="Where proofs run: local processes, or a dask cluster "
                                      "(the optional extra ptxsmt[dask]).")
@click.option("--scheduler", metavar="ADDRESS",
              help="With --executor dask: a running scheduler (default: a local cluster).")
@timeout_option("Seconds per proof.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the random characteristic operands.")
@click.option("--near-misses", "near_misses", type=click.IntRange(0), default=40,
              show_default=True, help="Most near misses reported per pool.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), metavar="DIR",
              callback=writable_dir,
              help="Write rules.toml, near-misses.md/.json and inversions.md/.json here.")
@click.option("--json", "as_json", is_flag=True)
@cache_option
def synth(types, size, families, jobs, executor_kind, scheduler, timeout, seed, near_misses,
          out_dir, as_json) -> None:
    """Enumerate small compare/select snippets, group them by their outputs on special
    operands, prove each group's members equal, keep the rules no other rule implies,
    and report near misses (rewrites that break only on a few operand classes).

    \b
    Exit 0 when done; a rule is only ever reported proved. Progress goes to stderr.
    \b
    Examples:
      ptxsmt synth --types s32 --size 1
      ptxsmt synth --types i32 --size 1 --families setp,vset
      ptxsmt synth --types f32,f16x2,s32 --size 2 --jobs 2 --out synth-out
      ptxsmt synth --types f32 --families setp,glue --json > f32.json
      ptxsmt synth --types f32 --executor dask --scheduler tcp://10.0.0.1:8786
    """
    if executor_kind != "dask":
        refuse(given("scheduler"), "without --executor dask")
    try:
        config = search.Config(parse_types(types), size, parse_families(families), timeout,
                               seed, near_misses)
        runner = executor(executor_kind, jobs, scheduler)
    except PtxError as e:
        fail(str(e))
    bars = _Bars()
    try:
        result = search.synthesize(config, runner, bars.update)
        inversions = None
        if out_dir:
            prover = search.Prover(runner, search.Stats(), timeout)
            inversions = table(config.types, prover, seed)
    finally:
        bars.close()
        runner.close()
    if out_dir:
        write(out_dir, result, inversions)
    if as_json:
        report.out(report.dumps(rendering.synthesis_json(result, inversions), indent=1))
    else:
        report.out(rendering.results_text(result))
    report.err(rendering.summary_text(result))


class _Bars:
    """One progress bar per pool, on stderr."""

    def __init__(self):
        self.stage, self.bar = None, None

    def update(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.close()
            self.stage, self.bar = stage, Progress(f"synth {stage}", unit="steps")
        self.bar.total = total or None  # known per pool: the bar shows a share and a time left
        self.bar.update(done - self.bar.done)

    def close(self) -> None:
        if self.bar:
            self.bar.close()
        self.bar = None


def write(directory: str, result: search.Synthesis, inversions) -> None:
    files = {
        "rules.toml": rendering.rules_toml(result.rules, "Rules synthesized by ptxsmt synth"),
        "near-misses.md": rendering.near_misses_md(result.near_misses),
        "near-misses.json": report.dumps([rendering.near_miss_json(n)
                                          for n in result.near_misses], indent=1),
        "inversions.md": rendering.inversions_md(inversions),
        "inversions.json": report.dumps([rendering.inversion_json(r) for r in inversions],
                                        indent=1),
    }
    for name, text in files.items():
        target = Path(directory) / name
        try:
            target.write_text(text + "\n")
        except OSError as e:
            fail(f"cannot write {quote(str(target))}: {e.strerror or e}")
