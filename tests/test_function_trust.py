"""Whole functions you can trust (issue 22, second round): module variables read as their
initial bytes, an .entry's shared memory no output, ... Expected values are computed by
hand from the PTX ISA and the initializers written in the test files, not from the
encoding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ptxsmt.cli import main
from ptxsmt.function import read_function
from ptxsmt.function.evaluate import evaluate_function
from ptxsmt.isa.module import read_module_variable, written_variables

HERE = Path(__file__).parent / "ptx" / "functions"
VARIABLES, ENTRY = HERE / "module_variables.ptx", HERE / "entry_shared.ptx"


def _equiv(path: Path, a: str, b: str) -> tuple[int, dict]:
    r = CliRunner().invoke(main, ["equiv", str(path), str(path), "--function", a,
                                  "--function-b", b, "--json"])
    return r.exit_code, json.loads(r.stdout)


@pytest.mark.parametrize("text, data", [
    (".global .align 4 .b8 t[6] = {1, 2};", bytes([1, 2, 0, 0, 0, 0])),
    (".const .align 4 .u32 c[2] = {0x01020304, 5};", bytes([4, 3, 2, 1, 5, 0, 0, 0])),
    (".global .align 2 .s16 n = -2;", bytes([0xFE, 0xFF])),
    (".global .align 4 .u32 z[2];", bytes(8)),  # .global and .const start as zeros
    (".global .align 8 .u64 p = generic(z);", None),  # an address: not a literal
    (".shared .align 4 .b8 s[4];", None),  # shared memory has no initial contents
])
def test_a_module_variable_s_initial_bytes(text, data):
    _, v = read_module_variable(text, 1, 1)
    assert v.initial == data


@pytest.mark.parametrize("i, expect", [(0, 10), (1, 31), (2, 52), (3, 0), (0xFFFFFFFF, 0)])
def test_a_lookup_table_reads_its_initializer(i, expect):
    ev = evaluate_function(read_function(VARIABLES.read_text(), "by_table"),
                           {"i": i, "table": 0x1000})
    assert ev.returns == {"r": expect}


@pytest.mark.parametrize("i, expect", [(0, 7), (1, 9), (6, 7), (0xFFFFFFFF, 9)])
def test_a_const_array_reads_its_initializer(i, expect):
    ev = evaluate_function(read_function(VARIABLES.read_text(), "by_const"),
                           {"i": i, "odd_even": 0x40})
    assert ev.returns == {"r": expect}


@pytest.mark.parametrize("i, expect", [(0, 7), (1, 9)])
def test_a_const_array_through_the_generic_space(i, expect):
    ev = evaluate_function(read_function(VARIABLES.read_text(), "by_const_generic"),
                           {"i": i, "odd_even": 0x40, "window.const": 1 << 40})
    assert ev.returns == {"r": expect}
    assert _equiv(VARIABLES, "by_const_generic", "by_const")[0] == 0


def test_a_switch_by_table_is_the_switch_by_compares():
    assert _equiv(VARIABLES, "by_table", "by_compare")[0] == 0
    assert _equiv(VARIABLES, "by_const", "by_select")[0] == 0
    code, out = _equiv(VARIABLES, "by_table", "by_compare_wrong")
    assert code == 1 and out["counterexample"]["inputs"]["i"] == "0x00000002"


def test_a_visible_global_s_initializer_is_not_assumed():
    """The host (cudaMemcpyToSymbol) may have written a .visible .global before the call."""
    code, out = _equiv(VARIABLES, "read_settable", "one")
    assert code == 1 and out["verdict"] == "different"


def test_a_global_the_module_writes_is_not_its_initializer():
    """counter is private but bump increments it: a later call reads 6, 7, ..."""
    code, out = _equiv(VARIABLES, "read_counter", "five")
    assert code == 1 and out["verdict"] == "different"


@pytest.mark.parametrize("body, written", [
    ("mov.u64 %rd1, t; add.s64 %rd2, %rd1, 4; st.global.u32 [%rd2], 1;", {"t"}),
    ("mov.u64 %rd1, t; ld.global.u32 %r1, [%rd1+4]; st.global.u32 [%rd3], %r1;", set()),
    ("mov.u64 %rd1, t; st.global.u64 [%rd3], %rd1;", {"t"}),  # its address escapes
    ("atom.global.add.u32 %r1, [t+4], 1;", {"t"}),
    ("mov.u64 %rd1, u; selp.b64 %rd2, %rd1, %rd3, %p1; red.global.add.u32 [%rd2], 1;", {"u"}),
    ("st.global.u32 [%rd2], 1; add.s64 %rd2, %rd1, 8; mov.u64 %rd1, u;", {"u"}),  # a loop
])
def test_the_variables_a_module_may_write(body, written):
    text = (".global .align 4 .b8 t[8];\n.global .align 4 .b8 u[8];\n.visible .func f()\n{\n"
            + "\n".join(f"{i.strip()};" for i in body.split(";") if i.strip()) + "\n}\n")
    assert written_variables(text, {"t", "u"}) == written


def test_an_entry_s_shared_memory_is_no_output_a_func_s_is():
    assert _equiv(ENTRY, "k_store", "k_drop")[0] == 0
    code, out = _equiv(ENTRY, "f_store", "f_drop")
    assert code == 1 and any(d.startswith("shared[") for d in out["counterexample"]["differ"])


# ---- atom and red, as one thread sees them ----------------------------------------------

ATOMICS = HERE / "atomics.ptx"


def _signed(x: int, w: int) -> int:
    return x - (1 << w) if x >> (w - 1) else x


# the PTX ISA's pseudocode for atom (9.7.13.5), on Python integers
ATOM_OPS = {
    "add": lambda old, b, w: (old + b) % (1 << w),
    "and": lambda old, b, w: old & b, "or": lambda old, b, w: old | b,
    "xor": lambda old, b, w: old ^ b, "exch": lambda old, b, w: b,
    "inc": lambda old, b, w: 0 if old >= b else old + 1,
    "dec": lambda old, b, w: b if old == 0 or old > b else old - 1,
    "min_s": lambda old, b, w: min(old, b, key=lambda x: _signed(x, w)),
    "max_s": lambda old, b, w: max(old, b, key=lambda x: _signed(x, w)),
    "min_u": lambda old, b, w: min(old, b), "max_u": lambda old, b, w: max(old, b),
}


@pytest.mark.parametrize("name", ["add_u32", "and_b32", "or_b32", "xor_b32", "exch_b32",
                                  "inc_u32", "dec_u32", "min_s32", "max_s32", "min_u32",
                                  "max_u32", "add_u64"])
@pytest.mark.parametrize("old, b", [(0, 5), (5, 5), (7, 3), (0xFFFFFFFF, 1), (0x80000000, 2)])
def test_an_atomic_returns_the_old_value_and_stores_the_new(name, old, b):
    op, t = name.split("_")
    w = int(t[1:])
    key = f"{op}_{t[0]}" if op in ("min", "max") else op
    fn = read_function(ATOMICS.read_text(), f"atom_{name}")
    ev = evaluate_function(fn, {"q": 0x1000, "b": b, f"global[0x1008].{t}": old})
    assert ev.returns == {"r": old}
    assert {str(loc): v for loc, v in ev.stores.items()} == \
        {"global[0x1008]": ATOM_OPS[key](old, b, w)}


@pytest.mark.parametrize("old, expect", [(3, 9), (4, 4)])
def test_compare_and_swap(old, expect):
    fn = read_function(ATOMICS.read_text(), "atom_cas")
    ev = evaluate_function(fn, {"q": 0x40, "b": 3, "c": 9, "global[0x40].u32": old})
    assert ev.returns == {"r": old} and list(ev.stores.values()) == [expect]


def test_red_is_a_load_add_store_for_one_thread():
    assert _equiv(ATOMICS, "red_add", "plain_add")[0] == 0
    code, _ = _equiv(ATOMICS, "atom_add_u32", "atom_exch_b32")
    assert code == 1


# ---- a parameter's address ------------------------------------------------------------

PARAMS = HERE / "param_address.ptx"


# byte 1 (little-endian) of a = 0x11223344 or b = 0x55667788
@pytest.mark.parametrize("c, expect", [(1, 0x33), (3, 0x33), (0, 0x77), (2, 0x77)])
def test_a_load_through_a_parameter_s_address(c, expect):
    fn = read_function(PARAMS.read_text(), "pick")
    ev = evaluate_function(fn, {"a": 0x11223344, "b": 0x55667788, "c": c})
    assert ev.returns == {"r": expect}


def test_a_parameter_s_address_and_its_value_agree():
    assert _equiv(PARAMS, "pick", "pick2")[0] == 0
    wrong = PARAMS.read_text().replace("[%rd3+1]", "[%rd3+2]")
    fn, other = read_function(wrong, "pick"), read_function(PARAMS.read_text(), "pick2")
    from ptxsmt.smt.queries.functions import check_function_equivalence
    v = check_function_equivalence(fn, other)
    assert v.verdict == "different" and v.counterexample.differ == ("r",)


# ---- parameters and returns of different sizes --------------------------------------------

SIZES = HERE / "sizes.ptx"


def test_a_half_as_b32_and_as_two_bytes_compare_on_the_bytes_both_declare():
    code, out = _equiv(SIZES, "wide", "narrow")
    assert code == 0 and "2 low bytes" in out["reason"]
    code, out = _equiv(SIZES, "wide", "narrow_wrong")
    assert code == 1 and out["counterexample"]["differ"] == ["r"]
    # the counterexample's values replay on each side at its own size: x + y vs x - y
    x, y = (int(out["counterexample"]["inputs"][k], 16) for k in ("x", "y"))
    assert int(out["counterexample"]["lhs"]["r"], 16) & 0xFFFF == (x + y) & 0xFFFF
    assert int(out["counterexample"]["rhs"]["r"], 16) == (x - y) & 0xFFFF
    # where only the store differs, the return (equal on its 2 low bytes) is not named
    code, out = _equiv(SIZES, "wide_store", "narrow_store")
    assert code == 1 and out["counterexample"]["differ"] == ["global[0x10000]"], out
