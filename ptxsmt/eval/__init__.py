"""Concrete evaluation: substitution into the Z3 terms (`evaluate`, the slow path the fast
one is held to), values and their JSON spelling (`values`), 16-bit sweeps (`sweep`)."""
