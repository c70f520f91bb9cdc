"""Solver-facing layer: concrete evaluation and (later) equivalence queries."""
