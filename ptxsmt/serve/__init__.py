"""`ptxsmt serve`: verdicts as web pages that can be shared (docs/serve.md).

request.py  what a visitor asks (two inputs, their kind, names, options), bounded, and
            its content address: the permalink
work.py     what a worker process runs: the verdict (ptxsmt.pairs, as `equiv --batch`),
            a stored "different" replayed, the counterexample as a table
jobs.py     the worker pool: each request in a process of its own, stopped at its limits
            on time and memory, cancellable; a slow one blocks no other
store.py    permalinks in a local SQLite file, each record sealed and checked when read
app.py      the Flask routes and pages (templates/)
"""
