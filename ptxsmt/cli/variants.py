"""`ptxsmt variants`: the catalogue with each variant's requirements."""

from __future__ import annotations

import click

from .. import report
from ..isa.variants import FAMILIES, MODELLED_FAMILIES, catalogue, spec_catalogue
from ..report import catalogue as rendering
from .common import CONTEXT


@click.command("variants", context_settings=CONTEXT)
@click.option("--family", type=click.Choice((*FAMILIES, *MODELLED_FAMILIES)),
              help="Only this family.")
@click.option("--spec", is_flag=True, help="The ISA text's catalogue, before ptxas corrections.")
@click.option("--json", "as_json", is_flag=True)
def variants(family, spec, as_json) -> None:
    """List the legal variants with the PTX ISA version and sm_ target each needs.

    \b
    Examples:
      ptxsmt variants --family half-setp
      ptxsmt variants --json | jq length
    """
    rows = rendering.variants_rows(spec_catalogue() if spec else catalogue(), family)
    report.out(report.dumps(rows) if as_json else rendering.variants_text(rows))
