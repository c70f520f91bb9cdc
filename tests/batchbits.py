"""The batch's public answers (JSON values by register as spelled) as register bits, for
tests that compare them with an oracle's integers."""

from ptxsmt.batch.engine import evaluate_many
from ptxsmt.isa.errors import PtxError
from ptxsmt.sem.options import DEFAULT


def evaluate_bits(items, opts=DEFAULT) -> list[dict | PtxError]:
    """Per item: its outputs as bits (a Boolean for a predicate) by register name, or
    the PtxError it raised."""
    return [got if isinstance(got, PtxError) else
            {k.lstrip("%"): v if isinstance(v, bool) else int(v, 16) for k, v in got.items()}
            for got in evaluate_many(items, opts)]
