"""Whole functions from PTX files: `eval FILE.ptx --function F` against an independent
interpreter (tests/ptx_interp.py) and the kernels' C semantics, and `equiv A.ptx B.ptx`
on nvcc's -G and -O3 output of tests/ptx/func.cu (and a deliberately wrong rewrite)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from ptx_interp import run
from tier import THOROUGH

from ptxsmt.cli import main
from ptxsmt.function import read_function
from ptxsmt.function.evaluate import Location, evaluate_function
from ptxsmt.isa.errors import PtxError
from ptxsmt.isa.types import TYPES
from ptxsmt.smt.queries.functions import check_function_equivalence

PTX = Path(__file__).parent / "ptx"
O3, G, WRONG = (PTX / f"func_sm90_{v}.ptx" for v in ("O3", "G", "O3_wrong"))
TEXT = {p: p.read_text() for p in (O3, G, WRONG)}
KERNELS = ["_Z4pickPKiS0_Piii", "_Z5clampPKiPiii", "_Z4keepPKiPii", "_Z5umax2PKjPj"]
M32 = 0xFFFFFFFF


def _s32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


# What each kernel of func.cu computes, in C terms: (params, specials, read) -> {index: value}
# of the int array o written (read(p, i) is the 32-bit word p[i]).
def _pick(p, s, read):
    i = (s["ctaid.x"] * s["ntid.x"] + s["tid.x"]) & M32
    return {(p[2], i): p[3] if _s32(read(p[0], i)) < _s32(read(p[1], i)) else p[4]}


def _clamp(p, s, read):
    v, lo, hi = _s32(read(p[0], s["tid.x"])), _s32(p[2]), _s32(p[3])
    return {(p[1], s["tid.x"]): (lo if v < lo else hi if v > hi else v) & M32}


def _keep(p, s, read):
    i = s["tid.x"]
    ok = _s32(i) < _s32(p[2]) and _s32(read(p[0], i)) > 0
    return {(p[1], i): read(p[0], i)} if ok else {}


def _umax2(p, s, read):
    i = s["tid.x"]
    return {(p[1], i): max(read(p[0], 2 * i), read(p[0], 2 * i + 1))}


C_SEMANTICS = dict(zip(KERNELS, [_pick, _clamp, _keep, _umax2]))

POINTERS = st.sampled_from([0x1000, 0x2000, 0x3000, 0x1004])  # some alias, some overlap
WORD = st.one_of(st.integers(0, M32), st.sampled_from([0, 1, M32, 0x80000000, 0x7FFFFFFF, 5]))


@st.composite
def runs(draw, name: str):
    fn = read_function(TEXT[O3], name)
    params = {p.name: draw(POINTERS) if p.type.width == 64 else draw(WORD) for p in fn.params}
    specials = {"tid.x": draw(st.integers(0, 3)), "ctaid.x": draw(st.integers(0, 2)),
                "ntid.x": draw(st.integers(1, 4))}  # ntid is at least 1 (ISA)
    memory = {0x1000 + k: draw(st.integers(0, 255)) for k in range(0, 0x2020, 1)
              if k % 0x1000 < 0x20}
    return params, specials, memory


def _run_all(path, name, params, specials, memory, watch=False):
    """eval through the API, memory given byte by byte (so byte order matters), and only
    the special registers the body reads (an unread input is an error)."""
    fn = read_function(TEXT[path], name)
    body = "".join(g.text for g in fn.body.generic)
    read = {k: v for k, v in specials.items() if f"%{k}" in body}
    mem = {f"global[{a:#x}].b8": v for a, v in memory.items()}
    bytes_ = [Location("global", a, TYPES["b8"]) for a in memory] if watch else []
    return evaluate_function(fn, {**params, **read, **mem}, watch=bytes_)


@pytest.mark.parametrize("path", [O3, G], ids=["O3", "G"])
@pytest.mark.parametrize("name", KERNELS)
@settings(max_examples=100 if THOROUGH else 8, deadline=None)
@given(data=st.data())
def test_eval_matches_the_interpreter_and_the_c_semantics(path, name, data):
    params, specials, memory = data.draw(runs(name))
    ev = _run_all(path, name, params, specials, memory)
    _, final = run(TEXT[path], name, params, specials, memory)
    watched = _run_all(path, name, params, specials, memory, watch=True)
    assert all(v == final.get(loc.address, 0) for loc, v in watched.stores.items()
               if loc.type.width == 8)  # every byte given ends as the interpreter says
    changed = {a for a, v in final.items() if memory.get(a, 0) != v}
    for loc, value in ev.stores.items():
        assert value == sum(final.get(loc.address + k, 0) << 8 * k
                            for k in range(loc.type.width // 8)), loc
    covered = {loc.address + k for loc in ev.stores for k in range(loc.type.width // 8)}
    assert changed <= covered
    if _aliases(params):
        return
    # the interpreter itself against what the C source says (o aliases no input)
    p = list(params.values())

    def word(mem, base, i):
        at = (base + 4 * _s32(i & M32)) & (2**64 - 1)
        return sum(mem.get(at + k, 0) << 8 * k for k in range(4))

    expect = C_SEMANTICS[name](p, specials, lambda base, i: word(memory, base, i))
    assert {key: word(final, *key) for key in expect} == expect
    assert len(changed) <= 4 * len(expect)


def _aliases(params) -> bool:
    pointers = [v for v in params.values() if v in (0x1000, 0x2000, 0x3000, 0x1004)]
    return len(set(pointers)) < len(pointers) or 0x1004 in pointers


def test_a_straight_line_function_with_a_return_value():
    fn = read_function(TEXT[O3], "_Z4dseljj")
    for x in (0, 5, 6, M32):
        ev = evaluate_function(fn, {"_Z4dseljj_param_0": x})
        assert ev.returns == {"func_retval0": (x - 5) & M32 if x > 5 else 5}
        returns, _ = run(TEXT[O3], "_Z4dseljj", {"_Z4dseljj_param_0": x}, {}, {})
        assert returns == ev.returns


def test_memory_is_little_endian_and_a_load_sees_an_earlier_store():
    fn = read_function(TEXT[O3], "_Z5umax2PKjPj")
    ev = evaluate_function(fn, {"_Z5umax2PKjPj_param_0": 0x100, "_Z5umax2PKjPj_param_1": 0x100,
                                "tid.x": 0, "global[0x100].b8": 0x01, "global[0x104].b8": 0,
                                "global[0x107].b8": 0x01})
    assert {str(k): v for k, v in ev.stores.items()} == {"global[0x100]": 0x01000000}


@pytest.mark.parametrize("name", KERNELS)
def test_O0_and_O3_are_equivalent(name):
    v = check_function_equivalence(read_function(TEXT[G], name), read_function(TEXT[O3], name))
    assert v.verdict == "equivalent" and v.uninterpreted == {}


def test_a_wrong_rewrite_is_found_and_its_counterexample_replays():
    name = "_Z4pickPKiS0_Piii"
    v = check_function_equivalence(read_function(TEXT[O3], name),
                                   read_function(TEXT[WRONG], name))
    assert v.verdict == "different" and v.counterexample.differ
    cex = v.counterexample
    memory = {}
    for loc, value in cex.memory.items():
        memory |= {loc.address + k: (value >> 8 * k) & 0xFF for k in range(loc.type.width // 8)}
    params = {k: x for k, x in cex.inputs.items() if "param" in k}
    specials = {k: x for k, x in cex.inputs.items() if "param" not in k}
    finals = [run(TEXT[p], name, params, specials, memory)[1] for p in (O3, WRONG)]
    assert finals[0] != finals[1]  # the independent interpreter sees the difference too
    # the predicate flipped only on equal elements: a[i] == b[i]
    assert cex.lhs.memory and len(set(v for v, _ in cex.lhs.memory.values())) == 1


def test_the_other_functions_are_unchanged_by_the_wrong_rewrite():
    for name in KERNELS[1:]:
        v = check_function_equivalence(read_function(TEXT[O3], name),
                                       read_function(TEXT[WRONG], name))
        assert v.verdict == "equivalent"


GUARDED = """.version 9.0
.target sm_90
.address_size 64
.visible .entry g(.param .u64 g_o, .param .u32 g_x)
{
	.reg .pred %p<3>;
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [g_o];
	ld.param.u32 %r1, [g_x];
	setp.lt.u32 %p1, %r1, 10;
	@%p1 st.global.u32 [%rd1], %r1;
	setp.eq.u32 %p2, %r1, 3;
	@%p2 ret;
	mov.u32 %r2, 7;
	st.global.u32 [%rd1+4], %r2;
	ret;
	st.global.u32 [%rd1+8], %r2;
}
"""


@pytest.mark.parametrize("x", [0, 3, 9, 10, M32])
def test_a_guarded_store_and_a_guarded_ret(x):
    """`@p st` stores only where p holds; `@p ret` ends that path; code after `ret` is
    never run (handwritten: nvcc put branches around the fixtures' stores)."""
    memory = {0x40 + k: 0xAA for k in range(12)}
    ev = evaluate_function(read_function(GUARDED), {
        "g_o": 0x40, "g_x": x, **{f"global[{a:#x}].b8": v for a, v in memory.items()}},
        watch=[Location("global", a, TYPES["b8"]) for a in memory])
    _, final = run(GUARDED, "g", {"g_o": 0x40, "g_x": x}, {}, memory)
    assert {loc.address: v for loc, v in ev.stores.items() if loc.type.width == 8} == \
        {a: final[a] for a in memory}
    written = {loc.address + k for loc in ev.stores if loc.type.width == 32 for k in range(4)}
    assert written == {a for a in memory if final[a] != memory[a]}  # the stores that ran


OPAQUE = """.version 9.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r) f(.param .b32 f_x, .param .b32 f_y)
{{
\t.reg .b32 %r<4>;
\t.reg .f32 %f<2>;
\t.reg .pred %p<2>;
\tld.param.u32 %r1, [f_x];
\tld.param.u32 %r2, [f_y];
\tmov.b32 %f0, %r{src};
\tsin.approx.f32 %f1, %f0;
\tsetp.lt.f32 %p1, %f1, 0f00000000;
\tselp.b32 %r3, 1, 2, %p1;
\tst.param.b32 [r], %r3;
\tret;
}}
"""


def test_an_unmodelled_instruction_is_uninterpreted_in_equiv_and_an_input_in_eval(tmp_path):
    one, two = (read_function(OPAQUE.format(src=k)) for k in (1, 2))
    same = check_function_equivalence(one, read_function(OPAQUE.format(src=1)))
    assert same.verdict == "equivalent"
    assert list(same.uninterpreted) == ["sin.approx.f32 %f1, %f0"]
    # sin of x vs sin of y: they differ only if sin does, which ptxsmt does not know
    other = check_function_equivalence(one, two)
    assert other.verdict == "unknown" and "sin.approx.f32 _, _" in other.reason
    with pytest.raises(PtxError, match=r"f1 \(written by .sin.approx.f32 %f1, %f0. \(line 12\)"):
        evaluate_function(one, {"f_x": 1, "f_y": 2})
    ev = evaluate_function(one, {"f_x": 1, "f_y": 2, "%f1": "-1.0"})
    assert ev.returns == {"r": 1}


def _cli(*args):
    return CliRunner().invoke(main, list(map(str, args)))


def test_cli_equiv_on_files():
    r = _cli("equiv", G, O3, "--function", "_Z4pickPKiS0_Piii")
    assert r.exit_code == 0 and r.stdout.startswith("equivalent")
    r = _cli("equiv", O3, WRONG, "--function", "_Z4pickPKiS0_Piii", "--json")
    out = json.loads(r.stdout)
    assert r.exit_code == 1 and out["verdict"] == "different" and out["counterexample"]["differ"]


def test_cli_eval_on_a_file():
    r = _cli("eval", O3, "--function", "_Z4dseljj", "_Z4dseljj_param_0=9", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["outputs"] == {"func_retval0": "0x00000004"}
    r = _cli("eval", O3, "--function", "_Z4dseljj")
    assert r.exit_code == 2 and "needs a value for: _Z4dseljj_param_0" in r.output


@pytest.mark.parametrize("args, message", [
    (("eval", O3, "--function", "_Z3sumPKiPii"), "branches back to"),
    (("equiv", G, O3), "name one with --function"),
    (("eval", O3, "--function", "nope"), "no function"),
])
def test_refusals_are_one_line_exit_2(args, message):
    r = _cli(*args)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_malformed_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(TEXT[O3].replace("ret;\n\n}", "ret;\n\n", 1))
    r = _cli("eval", bad, "--function", "_Z4dseljj")
    assert r.exit_code == 2 and "Traceback" not in r.output


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_batch_lines_name_a_function_and_answer_as_the_interpreter(data, tmp_path_factory):
    """`{"file", "function", "inputs"}` lines in a batch, between snippet lines and bad
    lines: each answered in place, its stored words as the independent interpreter ends
    them, and `--check` reproduces them."""
    name = data.draw(st.sampled_from(KERNELS))
    params, specials, memory = data.draw(runs(name))
    fn = read_function(TEXT[O3], name)
    body = "".join(g.text for g in fn.body.generic)
    read = {k: v for k, v in specials.items() if f"%{k}" in body}
    inputs = {**{k: hex(v) for k, v in {**params, **read}.items()},
              **{f"global[{a:#x}].b8": v for a, v in memory.items()}}
    lines = [{"file": str(O3), "function": name, "inputs": inputs},
             {"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x1", "b": "0x2"}},
             {"file": str(O3), "function": "nope", "inputs": {}}]
    path = tmp_path_factory.mktemp("batch") / "lines.jsonl"
    path.write_text("\n".join(map(json.dumps, lines)) + "\n")
    r = _cli("eval", "--batch", str(path))
    assert r.exit_code == 1
    out = [json.loads(x) for x in r.stdout.splitlines()]
    _, final = run(TEXT[O3], name, params, read, memory)
    covered = set()
    for loc, value in out[0]["outputs"].items():
        address, size = int(loc.removeprefix("global[").removesuffix("]"), 16), len(value) // 2 - 1
        assert int(value, 16) == sum(final.get(address + k, 0) << 8 * k for k in range(size)), loc
        covered |= {address + k for k in range(size)}
    assert {a for a, v in final.items() if memory.get(a, 0) != v} <= covered
    assert out[1]["outputs"] == {"p": True}
    assert out[2]["error"].startswith("line 3: ") and "no function" in out[2]["error"]
    path.write_text(json.dumps(out[0]) + "\n")
    assert _cli("eval", "--batch", str(path), "--check").exit_code == 0


@pytest.mark.parametrize("path", [O3, G], ids=["O3", "G"])
@pytest.mark.parametrize("name", KERNELS)
def test_vectors_drive_each_compare_both_ways_and_replay_in_the_interpreter(path, name, tmp_path):
    """`vectors FILE.ptx --function F`: two lines per setp predicate that a path reaches
    both ways; every line's stored words are what the independent interpreter ends with
    on its inputs, and `eval --batch --check` replays them."""
    r = _cli("vectors", str(path), "--function", name)
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    setps = [s for s in read_function(TEXT[path], name).body.checked
             if s.instruction.variant.opcode == "setp"]
    assert len(lines) == 2 * len(setps)  # each of these compares goes both ways
    assert sorted(x["case"].rsplit(" = ", 1)[1] for x in lines) == \
        ["false"] * len(setps) + ["true"] * len(setps)
    for line in lines:
        ins = line["inputs"]
        params = {k: int(v, 16) for k, v in ins.items() if "param" in k}
        specials = {k: int(v, 16) for k, v in ins.items() if k in ("tid.x", "ctaid.x", "ntid.x")}
        memory = {}
        for k, v in ins.items():
            if k.startswith("global["):
                at, size = int(k[7:k.index("]")], 16), (len(v) - 2) // 2
                memory |= {at + i: (int(v, 16) >> (8 * i)) & 0xFF for i in range(size)}
        regs: dict = {}
        _, final = run(TEXT[path], name, params, specials, memory, regs)
        predicate, outcome = line["case"].split(" -> ")[1].split(" = ")
        assert regs["%" + predicate] == (outcome == "true"), line["case"]  # the case holds
        for loc, value in line["outputs"].items():
            at, size = int(loc[7:-1], 16), (len(value) - 2) // 2
            assert int(value, 16) == sum(final.get(at + k, 0) << 8 * k for k in range(size))
    out = tmp_path / "v.jsonl"
    out.write_text(r.stdout)
    assert _cli("eval", "--batch", str(out), "--check").exit_code == 0


def test_a_file_rewritten_in_one_process_is_read_again(tmp_path):
    """read_function_file keeps a function while its file stays as it was: a mutant written
    over the same file is its own function, never the cached original (a stale verdict)."""
    from ptxsmt.function.evaluate import read_function_file

    text = """.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r) f(.param .b32 x)
{{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [x];
    {op}.s32 %r2, %r1, 1;
    st.param.b32 [r], %r2;
    ret;
}}
"""
    path = tmp_path / "k.ptx"
    path.write_text(text.format(op="add"))
    first = read_function_file(str(path), "f")
    assert read_function_file(str(path), "f") is first  # unchanged: read once
    path.write_text(text.format(op="sub"))
    second = read_function_file(str(path), "f")
    assert evaluate_function(first, {"x": 5}).returns["r"] == 6
    assert evaluate_function(second, {"x": 5}).returns["r"] == 4
