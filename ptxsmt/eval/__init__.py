"""Concrete evaluation, derived from the Z3 terms: substitution and simplification
(`evaluate`, the slow path every other evaluator is held to), whole functions
(`function`), the values and their JSON spelling (`values`) and exhaustive 16-bit
sweeps run by the fast backend (`sweep`). Batches: `ptxsmt.batch`."""
