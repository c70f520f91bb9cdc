"""`ptxsmt triage`: referee a claimed miscompile (docs/triage.md).

claim.py reads a claim file, decide.py gives its verdict by asking the verifier through
verifier.py (the one module that calls it); report/triage.py renders it."""
