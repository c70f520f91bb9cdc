"""Solving: equivalence queries and counterexamples (`solve`), operand classes
(`classes`) and test vectors from models (`vectors`). Concrete values come from
`ptxsmt.eval`; nothing here computes a value a second way."""
