"""What is asked of the verifier core: two snippets (`snippets`), two functions
(`functions`), a PTX function against its LLVM IR (`refinement`), and the operand
classes and test vectors read from such queries (`classes`, `vectors`,
`function_vectors`)."""
