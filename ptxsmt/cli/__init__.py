"""Command line: thin click commands over the library, one module per command.

Each command parses its options, calls the library, hands the result to
`ptxsmt.report` and exits with a code (see `common`).
"""

from __future__ import annotations

import os

# ptxsmt does no linear algebra: numpy's OpenBLAS would start a thread per core at import,
# and their idle spinning takes ~0.1 s of CPU from the processes of a batch on those cores
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click  # noqa: E402

from .common import CONTEXT, Main  # noqa: E402
from .common import run as _run  # noqa: E402

COMMANDS = {
    "eval": "evaluate:eval_cmd", "check": "check:check", "variants": "variants:variants",
    "equiv": "equiv:equiv", "prove": "prove:prove", "vectors": "vectors:vectors",
    "sweep": "sweep:sweep", "ptxas-diff": "ptxas_diff:ptxas_diff", "cache": "cache:cache_cmd",
    "synth": "synth:synth", "tv": "tv:tv", "triage": "triage:triage",
    "serve": "serve:serve",
}


@click.group(cls=Main, lazy=COMMANDS, context_settings=CONTEXT)
@click.version_option(package_name="ptxsmt")
def main() -> None:
    """Symbolic verifier for NVIDIA PTX: instructions, functions, and the IR they came from.

    \b
    Examples:
      ptxsmt eval 'setp.ltu.f32 p|q, a, b;' a=nan b=1.0
      ptxsmt eval --batch vectors.jsonl
      echo 'set.lt.bf16.f32 d, a, b;' | ptxsmt check --target sm_80
      ptxsmt variants --family vset2
      ptxsmt equiv 'setp.lt.f32 p, a, b; not.pred p, p;' 'setp.ge.f32 p, a, b;'
      ptxsmt prove identities --jobs 2
      ptxsmt vectors setp.lt.ftz.f32 --out lt.jsonl
      ptxsmt sweep setp.lt.f16
      ptxsmt ptxas-diff models/golden.jsonl
      ptxsmt cache
      ptxsmt synth --types f32,s32 --size 2 --jobs 2 --out synth-out
      ptxsmt tv kernels.ll --mcpu sm_80
      ptxsmt triage tests/claims/ --markdown
      ptxsmt serve
    """


def run() -> None:
    """The `ptxsmt` console command (tests call `main`, which never ends the process)."""
    _run(main)
