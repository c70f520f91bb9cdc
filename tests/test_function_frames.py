"""A read of one local frame past the writes to another (`function.memory.byte`): the
term holds no array left, the evaluator agrees with the plain-Python oracle, and a write
that may reach the byte (the same frame, or past a frame's size) still counts."""

from __future__ import annotations

import random
from pathlib import Path

import oracle_function as of
import z3

from ptxsmt.function import read_function
from ptxsmt.function.encode import encode_function
from ptxsmt.function.evaluate import evaluate_function
from ptxsmt.function.memory import frame_byte
from ptxsmt.smt.queries.functions import check_function_equivalence
from ptxsmt.terms.walk import subterms

FRAMES = Path(__file__).parent / "ptx" / "oracle" / "frames.ptx"
WINDOWS = {"window.local": 0x10 << 32, "window.shared": 0x20 << 32}
SIZES = {"__local_depot0": 8, "__local_depot1": 4}


def arrays_in(name: str) -> list[z3.ExprRef]:
    term = encode_function(read_function(FRAMES.read_text(), name)).returns["func_retval0"]
    return [t for t in subterms(term) if z3.is_select(t) or z3.is_store(t)]


def test_the_address_shapes_read():
    """Byte k of a frame where the term is the encoder's shape and k below the size."""
    a, b = z3.BitVec("a", 64), z3.BitVec("b", 64)
    sizes = {a.get_id(): 8, b.get_id(): 4}
    low = z3.Extract(31, 0, a)
    for at in (2 + low + 1, z3.Extract(31, 0, a + 3), z3.Extract(31, 0, a + (1 << 32) + 3),
               low + 0xFFFFFFFF + 4):
        assert frame_byte(at, sizes) == (a.get_id(), 3)
    for at in (low + 8, low + 0xFFFFFFFF, z3.Extract(32, 1, a), z3.Extract(31, 0, a + b),
               low * 1, z3.Extract(31, 0, a * 2), z3.BitVec("c", 32) + 1,
               low + z3.BitVec("c", 32)):
        assert frame_byte(at, sizes) is None


def test_a_read_of_one_frame_skips_the_writes_to_another():
    assert arrays_in("frames") == []  # generic (cvta.local) and ld.local addresses
    assert arrays_in("rewrite") == []  # a write to the frame read: its value


def test_a_read_past_a_join_or_a_guarded_write_is_each_side_read():
    """A branch's paths and a guard leave the memory `ite(c, M1, M2)`: the byte is read
    in each, one term where both agree (frame 1's writes), a select of the two values
    where they differ (frame 0's byte 0 on one path)."""
    assert arrays_in("joined") == []


def test_a_write_or_read_past_a_frame_is_kept():
    assert arrays_in("spill") != []  # frame 1's byte 4 may be frame 0's byte 0
    assert arrays_in("peek") != []


def placements(rng: random.Random):
    """Both frames below 2^32, 4-aligned, apart; adjacent in either order half the time."""
    low, high = sorted(SIZES, key=lambda _: rng.random())
    start = rng.randrange(0, 1 << 30, 4)
    gap = 0 if rng.random() < 0.5 else rng.randrange(0, 1 << 20, 4)
    return {low: start, high: start + SIZES[low] + gap}


def test_the_evaluator_agrees_with_the_oracle():
    rng = random.Random("frames")
    for name in ("frames", "rewrite", "joined"):
        fn, mine = of.read(FRAMES.read_text(), name), read_function(FRAMES.read_text(), name)
        windows = {k: v for k, v in WINDOWS.items() if k in encode_function(mine).inputs}
        for _ in range(12):
            params = {p: rng.getrandbits(8 * n) for p, n in fn.params.items()}
            ev = evaluate_function(mine, {**params, **windows, **placements(rng)})
            want = of.run(fn, params).returns["func_retval0"]
            assert ev.returns["func_retval0"] == want, (name, params)


def equiv(name: str, edit: tuple[str, str]) -> str:
    text = FRAMES.read_text()
    start = text.index(f"func_retval0) {name}(")
    body_end = text.index("ret;", start)
    edited = text[:start] + text[start:body_end].replace(*edit) + text[body_end:]
    assert edited != text
    lhs, rhs = read_function(text, name), read_function(edited, name)
    return check_function_equivalence(lhs, rhs, timeout=20).verdict


def test_a_write_that_may_reach_the_byte_keeps_the_pair_different():
    """Apart only through the write: past frame 1's size onto frame 0 where the frames
    touch (a read past it alike), and to the frame read."""
    assert equiv("spill", ("st.local.u32 \t[%rd1+4], %r2;", "")) == "different"
    assert equiv("peek", ("st.local.u32 \t[%SP], %r1;", "")) == "different"
    assert equiv("rewrite", ("st.local.u16 \t[%SP+2], %r2;", "")) == "different"


def test_a_write_to_another_frame_does_not_count():
    assert equiv("rewrite", ("st.local.u32 \t[%rd1], %r1;", "")) == "equivalent"


def test_a_write_on_one_path_counts_only_on_the_frame_read():
    assert equiv("joined", ("st.local.u32 \t[%rd1], %r2;", "")) == "equivalent"
    assert equiv("joined", ("@%p2 st.local.u32 \t[%rd1], %r1;", "")) == "equivalent"
    assert equiv("joined", ("st.local.u8 \t[%SP], %r2;", "")) == "different"
    assert equiv("joined", ("st.local.u8 \t[%SP], %r2;", "st.local.u8 \t[%SP+4], %r2;")) \
        == "different"
