"""Rule synthesis (`ptxsmt synth`): enumerate small snippets, fingerprint them on
characteristic operands, prove the candidate equalities, keep the rules the others do
not imply, and report near misses and the inversion table. See docs/synth.md."""
