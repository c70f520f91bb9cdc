"""`ptxsmt cache`: show or clear the on-disk cache of compiled programs."""

from __future__ import annotations

import click

from .. import report
from ..batch import cache
from ..report.cache import cache_text
from .common import CONTEXT


@click.command("cache", context_settings=CONTEXT)
@click.option("--clear", is_flag=True, help="Remove every cache file.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def cache_cmd(clear, as_json) -> None:
    """Show where compiled programs are kept, or clear them.

    \b
    `eval` and `sweep` keep the programs they compile from the Z3 terms in one
    SQLite file per build of ptxsmt (its name fingerprints ptxsmt's source and
    the installed Z3), under $PTXSMT_CACHE_DIR, else $XDG_CACHE_HOME/ptxsmt,
    else ~/.cache/ptxsmt. A warm run compiles nothing and imports no solver.
    synth keeps its proofs and `equiv --batch` its verdicts beside them. Every
    record is checked before it is used (a verdict's counterexample replayed);
    one that fails is dropped with a warning and made afresh. --clear removes
    them all; --no-cache (or PTXSMT_NO_CACHE=1) turns them off for one run.
    \b
    Examples:
      ptxsmt cache
      ptxsmt cache --clear
    """
    removed = cache.clear() if clear else None
    info = cache.info() if not clear else {"directory": str(cache.directory())}
    if as_json:
        report.out(report.dumps({**info, "removed": removed} if clear else info))
    else:
        report.out(cache_text(info, removed))
