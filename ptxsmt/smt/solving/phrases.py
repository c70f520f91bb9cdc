"""Verdicts as ptxsmt says them, one table for snippets, functions and IR: the word
(JSON's "verdict", the cache's), the exit status it gives, and the phrase a line
opens with, qualified where a claim is weaker or narrower than the word.

The replay contract every "different" keeps: it is shown only with a counterexample
checked apart from the solver's model -- two snippets' or two functions' through the
evaluator (a model that does not replay is a ptxsmt bug, `ReplayError`: exit 4, never
a verdict), IR's by z3 again with every input fixed to the model's value (one that
does not replay there is "unknown": the IR's open choices are quantified, and that
check may run out of time).
"""

from __future__ import annotations

# word -> exit status: 0 the claim holds, 1 a counterexample, 3 no verdict
EXIT = {"equivalent": 0, "bounded": 0, "refines": 0, "different": 1, "unknown": 3,
        "refused": 3}
UP_TO_NAN_PAYLOADS = "up to NaN payloads"  # proved payload-free, not bit for bit
ONLY_NAN_PAYLOADS = "only in NaN payloads"  # a difference that vanishes payload-free
# IR refinement: the PTX may give a NaN the ISA leaves open ("yields an unspecified NaN")
# that the IR forbids; the ISA also allows one that agrees (docs/llvm.md)
OPEN_NAN = "where the PTX ISA leaves a NaN open"

# (word, qualifier) -> the phrase; "{unroll}": the loop bound of a "bounded", and
# "{relation}" what it bounds: "equivalent" (two functions) or "refines" (IR and PTX)
PHRASES = {
    ("equivalent", ""): "equivalent",
    ("equivalent", UP_TO_NAN_PAYLOADS): f"equivalent {UP_TO_NAN_PAYLOADS}",
    ("bounded", ""): "{relation} up to {unroll} iterations",
    ("bounded", UP_TO_NAN_PAYLOADS): f"{{relation}} up to {{unroll}} iterations "
                                     f"{UP_TO_NAN_PAYLOADS}",
    ("refines", ""): "refines",
    ("refines", UP_TO_NAN_PAYLOADS): f"refines {UP_TO_NAN_PAYLOADS}",
    ("different", ""): "different",
    ("different", ONLY_NAN_PAYLOADS): f"different {ONLY_NAN_PAYLOADS} (--nan exact)",
    ("different", OPEN_NAN): f"different {OPEN_NAN}",
    ("unknown", ""): "unknown",
    ("refused", ""): "refused",
}


def phrase(verdict: str, up_to_nan_payloads: bool = False, only_nan_payloads: bool = False,
           unroll: int = 0, relation: str = "equivalent", open_nan: bool = False) -> str:
    """The phrase a verdict line opens with (a difference at an open NaN is said so
    first: what it rests on)."""
    qualifier = UP_TO_NAN_PAYLOADS if up_to_nan_payloads else OPEN_NAN if open_nan else \
        ONLY_NAN_PAYLOADS if only_nan_payloads else ""
    return PHRASES[verdict, qualifier].format(unroll=unroll, relation=relation)
