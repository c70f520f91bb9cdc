"""The verifier core, in three rooms: `solving` (the one solve policy and its plumbing),
`sweeping` (equivalence sweeping) and `queries` (snippets, functions, IR refinement;
operand classes and vectors). Imports flow queries -> sweeping -> solving. Concrete
values come from `ptxsmt.eval`; nothing here computes a value a second way."""
