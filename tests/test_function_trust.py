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
from ptxsmt.isa.module import read_module_variable

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


def test_a_switch_by_table_is_the_switch_by_compares():
    assert _equiv(VARIABLES, "by_table", "by_compare")[0] == 0
    assert _equiv(VARIABLES, "by_const", "by_select")[0] == 0
    code, out = _equiv(VARIABLES, "by_table", "by_compare_wrong")
    assert code == 1 and out["counterexample"]["inputs"]["i"] == "0x00000002"


def test_a_visible_global_s_initializer_is_not_assumed():
    """The host (cudaMemcpyToSymbol) may have written a .visible .global before the call."""
    code, out = _equiv(VARIABLES, "read_settable", "one")
    assert code == 1 and out["verdict"] == "different"


def test_an_entry_s_shared_memory_is_no_output_a_func_s_is():
    assert _equiv(ENTRY, "k_store", "k_drop")[0] == 0
    code, out = _equiv(ENTRY, "f_store", "f_drop")
    assert code == 1 and any(d.startswith("shared[") for d in out["counterexample"]["differ"])
