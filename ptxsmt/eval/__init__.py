"""Concrete evaluation, all derived from the Z3 terms: substitution and
simplification (`evaluate`), a numpy program compiled from the same terms
(`fast`), batches of lines grouped by text (`batch`, `jsonl`) and exhaustive
16-bit sweeps (`sweep`)."""
