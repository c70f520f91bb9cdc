"""The sweep is deterministic (issue 44): the same pair gives the same merges, in the
same order, and the same swept terms however its terms were made (AST ids follow
creation order and are reused; `smt/sweeping/order.py` orders by structure instead)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from ptxsmt.cli.common import read_function_file
from ptxsmt.function.encode import encode_function
from ptxsmt.sem.options import DEFAULT
from ptxsmt.smt.sweeping import sweep

CORPUS = Path(__file__).parent / "ptx" / "division"


def _swept(first: str, warm: bool = False) -> tuple[list[tuple[int, int]], str]:
    """mix32's -O0/-O2 query (`first` encoded first), swept: the merges and the swept
    query's text. `warm`: swept once before, its terms dropped, so that z3 hands their
    AST ids out again in another order."""
    if warm:
        _swept("O0" if first == "O2" else "O2")
        gc.collect()
    made = {n: encode_function(read_function_file(str(CORPUS / f"mix32.{n}.ptx"), "f"),
                               DEFAULT) for n in (first, "O2" if first == "O0" else "O0")}
    a, b = made["O0"].returns["func_retval0"], made["O2"].returns["func_retval0"]
    inputs = list({**made["O0"].inputs, **made["O2"].inputs}.values())
    out, stats = sweep([a != b], inputs, seconds=120, sides=([a], [b]))
    return stats.merges, out[0].sexpr()


_SWEPT = """
import sys
sys.path.insert(0, sys.argv[2])
from test_sweep_order import _swept
merges, text = _swept("O0", warm=sys.argv[1] == "1")
print(merges, text)
"""


def _in_process(script: str, *args: str) -> str:
    tests = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": str(tests.parent)}
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, check=True, env=env).stdout


def test_the_same_pair_sweeps_alike_whatever_its_ast_ids():
    """The same merges in the same order and the same swept query: three times in one
    process (the functions encoded in either order), and in a fresh process against
    one where a sweep before it left other AST ids."""
    merges, text = _swept("O0")
    assert len(merges) > 40
    for first in ("O2", "O0", "O2"):
        assert _swept(first) == (merges, text)
    fresh, warm = (_in_process(_SWEPT, k, str(Path(__file__).parent)) for k in "01")
    assert fresh == warm == f"{merges} {text}\n"


_NORMAL = """
import sys, z3
from ptxsmt.smt.sweeping.rewrite import normal
names = "abcdef"
order = names[::-1] if sys.argv[1] == "1" else names
s = {n: z3.LShR(z3.BitVec(n, 32), 3) for n in order}
t = normal(s["a"] + s["b"] * 3 + s["c"] - s["d"] + normal(s["e"] ^ s["f"] ^ s["a"]))
print(t.sexpr())
"""


def test_a_normal_form_is_the_same_whatever_order_its_atoms_were_made_in():
    """In two processes, the atoms made in opposite orders (opposite AST ids)."""
    out = [_in_process(_NORMAL, k) for k in "01"]
    assert out[0] == out[1]
    assert out[0].count("bvlshr") == 7


_FLOAT_ORDER = """
import sys, z3
from ptxsmt.smt.sweeping.order import structural
s = z3.FPSort(8, 24)
if sys.argv[1] == "1":
    [z3.FPVal(v, s) for v in (2.0, 3.0, 0.5)]  # z3 numbers its float values as made
x = z3.FP("x", s)
one, sum_ = z3.FPVal(1.0, s), z3.fpAdd(z3.RNE(), x, z3.FPVal(1.0, s))
print(structural(one).hash, structural(sum_).hash, structural(x) < structural(sum_))
"""


def test_a_float_numeral_orders_alike_whatever_floats_were_made_before_it():
    """z3's hash of a float numeral is its index in z3's value table; the order's is not
    (and so neither is a term's above it)."""
    out = [_in_process(_FLOAT_ORDER, k) for k in "01"]
    assert out[0] == out[1]


def test_a_term_against_itself_is_not_printed(monkeypatch):
    """A term is not before itself, and knowing so reads no text (a DAG's text is a tree:
    `x * x` over a 1,000-operation cone printed twice was a third of `normal` there);
    two terms of one hash are still ordered by their text, both ways alike."""
    import z3

    from ptxsmt.smt.sweeping import order

    x = z3.FP("x", z3.Float32())
    deep = x
    for _ in range(40):
        deep = z3.fpAdd(z3.RNE(), deep, deep)
    same = z3.fpAdd(z3.RNE(), deep, z3.FP("x", z3.Float32()))  # built again: one term
    printed = []
    text = order._text
    monkeypatch.setattr(order, "_text", lambda c, n: printed.append(n) or text(c, n))
    assert not order.structural(same) < order.structural(same)
    assert printed == []
    a, b = order.structural(z3.BitVec("a", 8)), order.structural(z3.BitVec("b", 8))
    a.hash = b.hash = 0  # a collision, made
    assert (a < b) != (b < a) and printed


def test_the_hash_is_z3s_own_but_above_a_float_numeral():
    """`_hash`, read through z3's C API: z3's own hash where no float numeral is below,
    a numeral's text (crc32) for a float numeral, and the operator's hash with the
    operands' above one; the same from a cold table and from a warm one."""
    import struct
    import zlib

    import z3

    from ptxsmt.smt.sweeping import order

    x, y = z3.FP("x", z3.Float16()), z3.BitVec("y", 8)
    plain = z3.fpMul(z3.RNE(), x, z3.fpBVToFP(z3.Concat(y, y), z3.Float16()))
    one = z3.FPVal(1.0, z3.Float16())
    above = z3.fpAdd(z3.RNE(), plain, one)
    for cold in (True, False):
        if cold:
            order._HASHES.clear()
            order._HELD.clear()
        assert order._hash(plain) == plain.hash()
        text = zlib.crc32(f"{one.sexpr()} {one.sort().sexpr()}".encode())
        assert order._hash(one) == text
        assert order._hash(above) == zlib.crc32(struct.pack(
            "<4I", above.decl().hash(), z3.RNE().hash(), plain.hash(), text))


def test_terms_of_two_contexts_with_one_ast_id_keep_their_own_hashes():
    """A portfolio's second z3 context numbers its terms apart: a term there with the
    id of one hashed in another context is hashed for itself (z3's own hash
    of it), not given the other's."""
    import z3

    from ptxsmt.smt.sweeping import order

    one, other = z3.Context(), z3.Context()
    mine = [z3.BitVec("x", 8, one) + i for i in range(40)]
    theirs = [z3.BitVec("y", 16, other) * i for i in range(40)]
    for t in mine:
        order._hash(t)
    shared = [(a, b) for a in mine for b in theirs if a.get_id() == b.get_id()]
    assert shared  # the ids meet: the case the key must tell apart
    assert all(order._hash(b) == b.hash() for _, b in shared)
