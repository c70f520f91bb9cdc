"""Texts of one shape (differing in register names or immediates) compile once, and each
still computes exactly what its own text says: held against the plain-Python reference."""

from __future__ import annotations

import pytest
from batchbits import evaluate_bits
from reference import run as reference

from ptxsmt import PtxError
from ptxsmt.batch import engine, programs
from ptxsmt.batch.engine import evaluate_many
from ptxsmt.fast import FastProgram
from ptxsmt.fast.shape import shaped
from ptxsmt.program import Program

# (text, inputs): the same shape spelled differently, immediates at each operand kind
SAME_SHAPE = [
    [("setp.lt.f32 p, a, 0f3F800000;", {"a": 0x3F000000}),
     ("setp.lt.f32 %p9, %f1, 0f40400000;", {"f1": 0x40800000}),
     ("setp.lt.f32 q, x, -0.0;", {"x": 0x80000001})],
    [("slct.u32.s32 d, 7, -1, c;", {"c": 0}),
     ("slct.u32.s32 r, 0x10, 3, s;", {"s": 0x80000000})],
    [("set.lt.and.u32.u32 d, a, b, !1;", {"a": 1, "b": 2}),
     ("set.lt.and.u32.u32 d, a, b, !0;", {"a": 1, "b": 2})],
    # a register named like the shape's immediates must stay a register
    [("selp.b32 k0, 5, k0, c;", {"k0": 9, "c": False}),
     ("selp.b32 x, 6, x, c;", {"x": 9, "c": True})],
    [("@g mov.b32 d, {lo, hi};", {"g": True, "d": 1, "lo": 0x1234, "hi": 0xABCD}),
     ("@%p1 mov.b32 %r3, {%h1, %h2};", {"p1": False, "r3": 7, "h1": 1, "h2": 2})],
]


def _fresh_caches():
    programs.compile_program.cache_clear()


@pytest.mark.parametrize("group", SAME_SHAPE, ids=lambda g: g[0][0])
def test_one_compilation_per_shape_and_each_text_its_own_answer(group, monkeypatch):
    _fresh_caches()
    made = []
    real = programs._generate
    monkeypatch.setattr(programs, "_generate", lambda *a: made.append(1) or real(*a))
    for text, inputs in group:
        program = programs.compile_program(text)
        assert set(program.inputs) == set(inputs), text  # immediates are not asked for
        got = {k: v.item() for k, v in program({k: [v] for k, v in inputs.items()}).items()}
        expected = reference(text, dict(inputs))
        assert got == {k: expected[k] for k in got}, text
    assert len(made) == 1


def test_the_shape_renames_in_order_and_lifts_immediates():
    shape, _ = shaped(Program.parse("@g setp.lt.and.f32 %p1|q, a, 0f3F800000, !%p1;"))
    assert shape.text == "@r0 setp.lt.and.f32 r1|r2, r3, k0, !r1;"
    assert shape.registers == {"g": "r0", "p1": "r1", "q": "r2", "a": "r3"}
    assert shape.constants == {"k0": 0x3F800000}


def test_outputs_keep_the_texts_spelling_in_a_batch():
    items = [("setp.lt.u32 %p1, %r1, 5;", {"%r1": "0x4"}), ("setp.lt.u32 q, x, 3;", {"x": "0x4"})]
    first, second = evaluate_many(items)
    assert first == {"%p1": True} and second == {"q": False}


def test_a_texts_errors_name_its_own_registers_and_places():
    _fresh_caches()
    programs.compile_program("setp.lt.u32 p, a, b; selp.b32 d, a, b, p;")
    with pytest.raises(PtxError, match=r"line 1, col 41: register zz is used as \.pred"):
        programs.compile_program("setp.lt.u32 p, zz, b; selp.b32 d, a, b, zz;")


def test_a_batch_runs_texts_of_one_shape_together_each_with_its_own_answer(monkeypatch):
    """One array program per shape: each text's rows, its immediates and its names."""
    runs = []
    real = FastProgram.run_slots
    monkeypatch.setattr(FastProgram, "run_slots",
                        lambda self, *a: runs.append(1) or real(self, *a))
    items = [(text, inputs) for group in SAME_SHAPE for text, inputs in group for _ in range(3)]
    answers = evaluate_bits(items)
    assert len(runs) == len(SAME_SHAPE)
    for (text, inputs), answer in zip(items, answers):
        expected = reference(text, dict(inputs))
        assert answer == {k: expected[k] for k in answer}, text


def test_shapes_whose_programs_read_alike_still_run_apart(monkeypatch):
    """Both simplify to a program of no lines (d is one input): one answers c, the other
    a. Grouping texts by their compiled lines ran them as one shape (a regression), and
    only the slow path's fallback hid it."""
    monkeypatch.setattr(engine, "_slow", lambda *a: pytest.fail("took the slow path"))
    items = [("vset2.u32.u32.gt.add d, a.h32, b, c;", {"a": 1, "b": 0, "c": 0xFFFFFFFF}),
             ("mov.b32 d, a;", {"a": 5})]
    assert [programs.compile_program(text).lines for text, _ in items] == [(), ()]
    for (text, inputs), answer in zip(items, evaluate_bits(items)):
        expected = reference(text, dict(inputs))
        assert answer == {k: expected[k] for k in answer}, text
