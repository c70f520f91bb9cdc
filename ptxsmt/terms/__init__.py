"""Z3 terms as data, below every reading of them: how to walk a term DAG (`walk.py`) and
what each operator computes outside Z3 (`ops.py`, with IEEE arithmetic in `floats.py`)."""
