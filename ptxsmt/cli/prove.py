"""`ptxsmt prove identities`: run the identity library against its expected verdicts."""

from __future__ import annotations

import sys
import time

import click

from .. import proofs, report
from ..isa.errors import PtxError, quote
from ..report import identities as rendering
from ..report.progress import Progress
from ..resources import library_dir
from .common import (
    CONTEXT,
    fail,
    given,
    jobs_option,
    max_input_option,
    timeout_option,
    warn_unused,
    writable_dir,
)


@click.group("prove", context_settings=CONTEXT)
def prove() -> None:
    """Prove libraries of identities."""


@prove.command(context_settings=CONTEXT)
@click.option("-k", "pattern", help="Only identities whose name[instance] contains this.")
@jobs_option(1)
@timeout_option("Seconds per instance.")
@click.option("--library", "--dir", "directory", default=None, metavar="DIR",
              type=click.Path(file_okay=False),
              help="A folder of identity files (*.toml) [default: the library ptxsmt ships].")
@click.option("--emit-smt2", "smt2_dir", type=click.Path(file_okay=False), metavar="DIR",
              callback=writable_dir, help="Also write each instance's query as SMT-LIB 2.")
@click.option("-v", "--verbose", is_flag=True, help="List every instance, not only mismatches.")
@click.option("--json", "as_json", is_flag=True)
@max_input_option
def identities(pattern, jobs, timeout, directory, smt2_dir, verbose, as_json) -> None:
    """Run the identity library; exit 0 only if every verdict is the expected one.

    \b
    Examples:
      ptxsmt prove identities
      ptxsmt prove identities -k ftz --verbose
      ptxsmt prove identities --jobs 2 --json > results.json
    """
    if as_json:
        warn_unused(given("verbose"), "with --json: it lists every instance already")
    try:
        instances = proofs.select(proofs.load(directory or library_dir()), pattern)
        if smt2_dir:
            proofs.emit_smt2(instances, smt2_dir)
    except PtxError as e:
        fail(str(e))
    except UnicodeDecodeError as e:
        fail(f"the identity library holds a file that is not UTF-8 text ({e.reason})")
    except OSError as e:  # an unreadable library, a failed write
        fail(f"{quote(str(e.filename or 'identity library'))}: {e.strerror or e}")
    if not instances:
        fail(f"no identity matches {quote(pattern)}")
    start = time.perf_counter()
    with Progress("proving", total=len(instances), unit="instances") as bar:
        results = proofs.run(instances, jobs, timeout, progress=lambda r: bar.update())
    wall = time.perf_counter() - start
    if as_json:
        report.out(report.dumps(rendering.results_json(results, wall), indent=1))
    else:
        report.out(rendering.results_text(results, wall, verbose))
    sys.exit(0 if all(r.ok for r in results) else 1)
