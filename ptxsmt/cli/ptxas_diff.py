"""`ptxsmt ptxas-diff`: compare ptxas's constant folding with ptxsmt's semantics."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import report
from ..isa import source
from ..isa.errors import PtxError
from ..isa.targets import parse_target
from ..ptxasdiff import DiffError, ReadbackError, load_jsonl, run_diff
from ..ptxasdiff.lowering import audit
from ..report import ptxas_diff as rendering
from ..report.progress import Progress
from ..resources import model_files
from ..sem.options import Options
from ..solver import MAX_JOBS
from .common import CONTEXT, fail, max_input_option


@click.command("ptxas-diff", context_settings=CONTEXT)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False), metavar="[FILE]...")
@click.option("--ptxas", "ptxas", default="ptxas", show_default=True, metavar="PATH",
              help="The ptxas to test.")
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="Only the first N cases.")
@click.option("--jobs", type=click.IntRange(1, MAX_JOBS), default=2, show_default=True,
              help="ptxas processes at once.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--target", default="sm_90", show_default=True, help="ptxas -arch and .target.")
@click.option("--lowering", is_flag=True,
              help="Instead: check that the modifiers each catalogue variant states (.bf16, "
                   ".rz/.rm/.rp, .ftz) reach the SASS ptxas lowers it to, operands from memory.")
@max_input_option
def ptxas_diff(files, ptxas, limit, jobs, as_json, target, lowering) -> None:
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
    With --lowering, no vectors: every catalogue variant a lowering rule covers is
    compiled on operands loaded from memory, and its SASS must carry what the
    PTX states (docs/ptxas-diff.md findings 4 and 5); exit 1 when a rule is broken.
    A lowering that keeps every modifier but computes a wrong value needs a GPU
    (scripts/gpu_replay.py).
    \b
    Examples:
      ptxsmt ptxas-diff models/golden.jsonl
      ptxsmt ptxas-diff --limit 2000 --jobs 4 --json vectors.jsonl
      ptxsmt ptxas-diff --lowering
    """
    if lowering:
        _lowering(files, ptxas, jobs, as_json, target)
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
        fail(f"cannot read the SASS back: {e} (set PTXSMT_DIFF_KEEP=DIR to keep the kernel)")
    except (DiffError, PtxError, OSError) as e:
        fail(str(e))
    if as_json:
        report.out(report.dumps(result.to_json()))
    else:
        report.out(rendering.text(result))
    sys.exit(1 if result.mismatches or result.rejected() else 0)


def _lowering(files, ptxas: str, jobs: int, as_json: bool, target: str) -> None:
    if files:
        fail("--lowering reads the catalogue, not vector files")
    try:
        broken = audit(ptxas=ptxas, target=target, jobs=jobs)
    except (DiffError, OSError) as e:
        fail(str(e))
    report.out(report.dumps(rendering.lowering_json(broken)) if as_json
               else rendering.lowering_text(broken))
    sys.exit(1 if broken else 0)


def _check_readable(path: Path) -> None:
    """A FILE must be a file of UTF-8 text; say which line is not."""
    if not path.is_file():
        raise DiffError(f"{path}: {'not a regular file' if path.exists() else 'no such file'}")
    data = source.read_file(str(path))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DiffError(f"{path}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x})") from None


def _advance(bar: Progress, done: int, total: int) -> None:
    bar.total = total
    bar.update(done - bar.done)
