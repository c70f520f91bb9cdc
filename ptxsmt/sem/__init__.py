"""Semantics: one function per instruction family, written against Z3 terms
(`families.semantics` picks it). Importing the package imports no Z3: `options` is
plain data that the parser and the batch read too."""
