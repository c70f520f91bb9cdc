"""The verifier core's solve policy and its plumbing: `decide` (one policy for every
query: interrupts, the portfolio, another solver's model), `budget` (every limit in CPU
seconds, with a wall-clock cap), `phrases` (what verdicts are called), `portfolio` and
`child` (other solvers, in processes), `smt2` (the one SMT-LIB export) and `verdicts`
(verdicts kept on disk). Below the sweep and the queries."""
