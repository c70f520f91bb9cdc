"""Equivalence sweeping: values two functions share merged before the whole query.
`sweep` is the entry (tests and the queries use it; `fraig` holds its machinery)."""

from .fraig import JUSTIFICATIONS, Certified, SweepStats, certify, sweep, sweep_if_large

__all__ = ["JUSTIFICATIONS", "Certified", "SweepStats", "certify", "sweep", "sweep_if_large"]
