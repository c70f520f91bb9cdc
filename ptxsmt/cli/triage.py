"""`ptxsmt triage`: referee claimed miscompiles, one claim file or folders of them."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import report
from ..isa.errors import quote
from .common import CONTEXT, fail, max_input_option, timeout_option

CLAIM_SUFFIXES = (".toml", ".json")
# a batch's exit code: the worst that happened to any claim
EXIT_DECIDED, EXIT_BAD_CLAIM, EXIT_UNKNOWN, EXIT_BUG = 0, 2, 3, 4
SEVERITY = (EXIT_DECIDED, EXIT_UNKNOWN, EXIT_BAD_CLAIM, EXIT_BUG)


@click.command("triage", context_settings=CONTEXT)
@click.argument("claims", nargs=-1, metavar="CLAIM...")
@click.option("--markdown", is_flag=True, help="Markdown to paste into an issue tracker.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object a line, per claim.")
@timeout_option("Seconds per proof.")
@max_input_option
def triage(claims, markdown, as_json, timeout) -> None:
    """Referee claimed miscompiles: each CLAIM is a .toml or .json claim file, or a
    folder of them (docs/triage.md).

    \b
    A claim gives the PTX and what it is measured against: the LLVM IR it came
    from ([ir]), other PTX said to differ ([reference]), or the PTX ISA itself
    (then [inputs] and the value [reported] got). Verdicts:
      confirmed         a counterexample, replayed through the evaluator, with
                        the `ptxsmt eval` lines that show it
      refuted           proved right, or the value reported wrong is the ISA's;
                        with the readings of the ISA and LangRef it rests on
      not the compiler  the PTX is right by the ISA at the claim's inputs, yet
                        the reported value differs: suspect ptxas (the GPU
                        steps that show it are given)
      unknown           why: a timeout, an instruction ptxsmt does not model
    A bad claim file is one `error:` line; the others are still triaged. Exit 0
    when every claim got a verdict, 3 when some are unknown, 2 when a claim file
    is bad, 4 on a ptxsmt bug.
    \b
    Examples:
      ptxsmt triage tests/claims/rotl64_llc14.toml
      ptxsmt triage tests/claims/ --markdown > triage.md
      ptxsmt triage claims/ --json --timeout 60
    """
    from ..report import triage as rendering
    from ..smt.queries.snippets import ReplayError
    from ..smt.solving.portfolio import SolverDisagreement
    from ..triage.claim import ClaimError, read_claim
    from ..triage.decide import VERDICTS
    from ..triage.decide import triage as decide

    if markdown and as_json:
        fail("give --markdown or --json, not both")
    if not claims:
        fail("no claim given (try: ptxsmt triage tests/claims/)")
    render = rendering.markdown if markdown else rendering.json_line if as_json \
        else rendering.text
    between = "\n---\n" if markdown else None if as_json else ""  # a blank line
    verdicts: dict[str, int] = {}
    status, first, failed = EXIT_DECIDED, True, 0
    paths = _claim_files(claims)
    for path in paths:
        try:
            result = decide(read_claim(path), timeout)
        except ClaimError as e:
            status, failed = _worse(status, EXIT_BAD_CLAIM), failed + 1
            report.err(f"error: {e}")
            if as_json:
                report.out(rendering.error_json(path, str(e)))
            continue
        except (ReplayError, SolverDisagreement) as e:
            status, failed = _worse(status, EXIT_BUG), failed + 1
            report.err(f"error: {path}: ptxsmt bug, please report: {e}")
            continue
        if not first and between is not None:
            report.out(between)
        first = False
        report.out(render(result))
        verdicts[result.verdict] = verdicts.get(result.verdict, 0) + 1
        if result.verdict == "unknown":
            status = _worse(status, EXIT_UNKNOWN)
    if len(paths) > 1:  # a batch's tally (one claim's verdict says it all)
        counts = [f"{verdicts[v]} {v}" for v in VERDICTS if v in verdicts]
        counts += [f"{failed} not triaged (error above)"] if failed else []
        report.err(f"triage: {len(paths)} claims: {', '.join(counts)}")
    sys.exit(status)


def _worse(a: int, b: int) -> int:
    return max(a, b, key=SEVERITY.index)


def _claim_files(claims: tuple[str, ...]) -> list[str]:
    """Each CLAIM, a folder as its claim files in name order; a path that is neither is
    passed on, for read_claim to name what is wrong with it."""
    out: list[str] = []
    for c in claims:
        p = Path(c)
        if p.is_dir():
            found = sorted(str(f) for f in p.iterdir()
                           if f.suffix.lower() in CLAIM_SUFFIXES and f.is_file())
            if not found:
                fail(f"{quote(c)}: no .toml or .json claim files in the folder")
            out += found
        else:
            out.append(c)
    return out
