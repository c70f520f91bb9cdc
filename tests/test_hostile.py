"""Hostile input costs nothing: whatever a careless or hostile user types, every command
answers with a verdict or one clear line (exit 2), never a traceback or a hang, and a
batch answers every line in place, in order.

The batch's good lines are checked against the independent reference (tests/reference.py
on tests/oracle.py), options included, never against ptxsmt itself.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import run as reference

from ptxsmt import evaluate, parse
from ptxsmt.cli import main
from ptxsmt.isa.errors import PtxError
from ptxsmt.isa.variants import catalogue
from ptxsmt.program import Program
from ptxsmt.smt.queries.vectors import instruction_forms

BIG = "9" * 5000
FUZZ = settings(max_examples=max(20, settings.default.max_examples // 3), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def invoke(args: list[str], stdin: bytes | None = None):
    return CliRunner().invoke(main, args, input=stdin)


def assert_clean(r, codes=(0, 1, 2, 3)) -> None:
    """A verdict or one error line: never a traceback, never an unexpected exception."""
    assert r.exit_code in codes, (r.exit_code, r.output[-2000:])
    assert r.exc_info is None or r.exc_info[0] is SystemExit, r.exc_info
    assert "Traceback" not in r.output
    if r.exit_code == 2:
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr


# ---- concrete hostile inputs, one per kind ------------------------------------------------

OK, NEG, BAD = 0, 1, 2
SETP = "setp.lt.u32 p, a, b;"
F32 = "setp.lt.f32 p, a, b;"
SNIPPET = "mov.b64 m, x0; setp.gt.u64 p, x1, m; selp.b64 m, x1, m, p;"
CASES = [
    # eval: literals, grammar, operands, options
    (["eval", SETP, f"a={BIG}", "b=1"], None, BAD),
    (["eval", f"setp.lt.u32 p, a, {BIG};", "a=1"], None, BAD),
    (["eval", f"setp.lt.f32 p, a, {BIG}.5;", "a=1"], None, BAD),
    (["eval", f"setp.lt.f32 p, a, 0f{'F' * 5000};", "a=1"], None, BAD),
    (["eval", f"vset2.u32.u32.lt d.h{'1' * 5000}, a, b, c;"], None, BAD),
    (["eval", "setp.lt.f32 p, a, b", "a=1", "b=2"], None, BAD),
    (["eval", "setp.lt.f32 p, a, b;;", "a=1", "b=2"], None, BAD),
    (["eval", ";"], None, BAD),
    (["eval", "setp.lt.u32 p, a, 09;", "a=1"], None, BAD),
    (["eval", "setp.lt.u32 p, a, 7u;", "a=1"], None, BAD),
    (["eval", "setp.lt.f32 p, a, 1e400;", "a=1"], None, BAD),
    (["eval", SETP, "a=1", "a=2", "b=3"], None, BAD),
    (["eval", SETP, "%a=1", "a=2", "b=3"], None, BAD),
    (["eval", "--check", SETP, "a=1", "b=2"], None, BAD),
    (["eval", "--batch", "-", SETP], b"", BAD),
    (["eval", "--batch", "-", "a=1"], b"", BAD),
    (["eval", "--target", "sm_0", SETP, "a=1", "b=2"], None, BAD),
    (["eval", "--target", "sm_9999", SETP, "a=1", "b=2"], None, BAD),
    (["eval", "--target", BIG, SETP, "a=1", "b=2"], None, BAD),
    (["eval", "--vset-merge", "x", SETP], None, BAD),
    (["eval", "setp.lt.f32 p, a, b;\x00", "a=1", "b=2"], None, BAD),
    (["eval", "setp.lt.u32 p, a, \udcff;", "a=1"], None, BAD),  # a non-UTF-8 argument
    (["eval", "∀x ∃y;"], None, BAD),
    (["eval", "a" * 100_000], None, BAD),
    (["eval", ""], None, BAD),
    (["eval", SETP, "a=", "b=1"], None, BAD),
    (["eval", SETP, "=1", "b=1"], None, BAD),
    (["eval", SETP, "a=nan", "b=1"], None, BAD),
    (["eval", SETP, "a=1", "b=2", f"{'x' * 5000}=1"], None, BAD),
    (["eval", "--batch", "{missing}"], None, BAD),
    (["eval", "--batch", "{dir}"], None, BAD),
    (["eval", "setp.eq.u32 p, 0, 0;"], None, OK),  # input-free
    (["eval", "--json", "setp.lt.u32 p, a, b; // \udcff", "a=1", "b=2"], None, OK),
    # check: line numbers, bytes, headers
    (["check", "-"], b"setp.lt.f32 p, a, b;\n\xff\xfe\n", NEG),
    (["check", "-"], b"\xef\xbb\xbfsetp.lt.f32 p, a, b;\n", OK),
    (["check", "-"], f"setp.lt.u32 p, a, {BIG};\n".encode(), NEG),
    (["check", "-"], b"setp.lt.f32 p, a, b\n", NEG),
    (["check", "-"], b"\x00\x01\x02\n" * 3, NEG),
    (["check", "--target", "sm_0", "-"], b"", BAD),
    (["check", "--ptx-version", "x", "-"], b"", BAD),
    (["check", "--ptx-version", "99.99", "-"], b"", BAD),
    (["check", "--target", "sm_90", "--ptx-version", "7.0", "-"], b"", BAD),
    (["check", "{missing}"], None, BAD),
    # equiv: option values, files, mixed sources
    (["equiv", "--timeout", "nan", SETP, SETP], None, BAD),
    (["equiv", "--timeout", "inf", SETP, SETP], None, BAD),
    (["equiv", "--timeout", "-1", SETP, SETP], None, BAD),
    (["equiv", "--timeout", "0", SETP, SETP], None, BAD),
    (["equiv", "--timeout", BIG, SETP, SETP], None, BAD),
    (["equiv", "--emit-smt2", "/proc/ptxsmt-nope", SETP, SETP], None, BAD),
    (["equiv", "--emit-smt2", "{file}", SETP, SETP], None, BAD),
    (["equiv", "-a", "{latin1}", "-b", "{file}"], None, BAD),
    (["equiv", "-a", "-", "-b", "{file}"], b"setp.lt.u32 p, a, b; // \xff\n", BAD),
    (["equiv", "-a", "{file}", SETP], None, BAD),
    (["equiv", "-a", "{file}", "-b", "{file}", SETP], None, BAD),
    (["equiv", f"setp.lt.u32 p, a, {BIG};", SETP], None, BAD),
    (["equiv", SETP], None, BAD),
    (["equiv", SETP, SETP, "--outputs", "nosuch"], None, BAD),
    (["equiv", SETP, SETP], None, OK),
    # prove identities
    (["prove", "identities", "--jobs", "0"], None, BAD),
    (["prove", "identities", "--jobs", "1000"], None, BAD),
    (["prove", "identities", "--timeout", "nan"], None, BAD),
    (["prove", "identities", "--emit-smt2", "/proc/ptxsmt-nope"], None, BAD),
    (["prove", "identities", "-k", "no-such-identity"], None, BAD),
    (["prove", "identities", "--library", "{badlib}"], None, BAD),
    (["prove", "identities", "--library", "{dir}"], None, BAD),
    # vectors
    (["vectors", "--per-case", "0", "setp.lt.f32"], None, BAD),
    (["vectors", "--per-case", "99999999999999999999", "setp.lt.f32"], None, BAD),
    (["vectors", "--limit", "0", "setp.lt.f32"], None, BAD),
    (["vectors", "--max-vectors", "0", "setp.lt.f32"], None, BAD),
    (["vectors", "--target", "sm_0", "setp.lt.f32"], None, BAD),
    (["vectors", "--out", "/proc/ptxsmt-nope", "setp.lt.f32"], None, BAD),
    (["vectors", "--out", "{dir}", "setp.lt.f32"], None, BAD),
    (["vectors", f"setp.lt.u32 p, a, {BIG};"], None, BAD),
    (["vectors", "setp.lt.f32", "--family", "slct"], None, BAD),
    (["vectors", "frob.lt.f32"], None, BAD),
    (["vectors", "setp.lt.f32", "--max-vectors", "3"], None, NEG),
    # sweep
    (["sweep", "--jobs", "0", "setp.lt.f16"], None, BAD),
    (["sweep", "--jobs", "1000", "setp.lt.f16"], None, BAD),
    (["sweep", "--blocks", "/proc/ptxsmt-nope", "setp.lt.f16"], None, BAD),
    (["sweep", f"setp.lt.u16 p, a, {BIG};"], None, BAD),
    (["sweep", "setp.lt.u32"], None, BAD),
    (["sweep", "--target", "sm_9999", "setp.lt.f16"], None, BAD),
    # ptxas-diff (all refused before ptxas runs)
    (["ptxas-diff", "{latin1}"], None, BAD),
    (["ptxas-diff", "{deep}"], None, BAD),
    (["ptxas-diff", "{longnum}"], None, BAD),
    (["ptxas-diff", "{missing}"], None, BAD),
    (["ptxas-diff", "--jobs", "0", "{file}"], None, BAD),
    (["ptxas-diff", "--jobs", "1000", "{file}"], None, BAD),
    (["ptxas-diff", "--target", "sm_0", "{file}"], None, BAD),
    # the command line itself
    (["no-such-command"], None, BAD),
    (["eval", "--no-such-option"], None, BAD),
    (["equiv", SNIPPET, SNIPPET, "--outputs", "m", "--timeout", "0.5"], None, OK),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    (d / "lib").mkdir()
    (d / "lib" / "bad.toml").write_bytes(b'[[identity]]\nname = "\xff"\n')
    paths = {"missing": d / "missing.jsonl", "dir": d, "file": d / "snippet.ptx",
             "latin1": d / "latin1.ptx", "deep": d / "deep.jsonl", "longnum": d / "long.jsonl",
             "badlib": d / "lib"}
    paths["file"].write_text(SETP + "\n")
    paths["latin1"].write_bytes(b"setp.lt.u32 p, a, b; // caf\xe9\n")
    paths["deep"].write_text("[" * 3000 + "]" * 3000 + "\n")
    paths["longnum"].write_text(json.dumps({"ptx": SETP, "inputs": {"a": "1"}})[:-2]
                                + f', "b": {BIG}}}}}\n')
    return {k: str(v) for k, v in paths.items()}


@pytest.mark.parametrize("args,stdin,code", CASES,
                         ids=[f"{i}-{c[0][0]}" for i, c in enumerate(CASES)])
def test_hostile_input(args, stdin, code, files):
    r = invoke([a.format(**files) if a.startswith("{") else a for a in args], stdin)
    assert_clean(r, (code,))
    if code == BAD:
        assert len(r.stderr) < 500, r.stderr  # input is quoted short


def test_check_answers_each_bad_line_in_place():
    r = invoke(["check", "--json", "-"], b"setp.lt.f32 p, a, b;\n\xff\n\nsetp.lt.f32 p, a, 09;\n")
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [(x["line"], x["legal"]) for x in rows] == [(1, True), (2, False), (4, False)]
    assert rows[1]["error"] == "line 2: not UTF-8 text (byte 0xff)"
    assert rows[2]["error"].startswith("line 4, col 19: ")


# ---- the grammar, fuzzed ------------------------------------------------------------------

TOKENS = ["set", "setp", "selp", "slct", "vset2", "vset4", "mov", "not", "and", "xor", "cvt",
          "frob", ".lt", ".eq", ".geu", ".and", ".or", ".ftz", ".add", ".f32", ".f16", ".f16x2",
          ".bf16", ".u32", ".s32", ".b32", ".b64", ".pred", ".u16", ".f64", ".h10", ".b3210",
          ".x", " ", ", ", ",", ";", ";;", "\n", "\r\n", "@p ", "@!p ", "// c", "/*", "*/", "p",
          "q", "p|q", "_", "a", "b", "c", "d", "!c", "%r1", "%", "1", "-1", "0", "09", "7u",
          "0f3F800000", "0d3FF0000000000000", "1.5", "1e400", "{a, b}", "{", "}", "a.h10",
          "a.b7654", BIG, "0x" + BIG, "\x00", "\ufeff", "é", "\udcff"]
OPCODES = ["set", "setp", "selp", "slct", "vset2", "vset4", "mov", "not", "and", "xor", "cvt"]
MODIFIERS = [".lt", ".eq", ".geu", ".and", ".ftz", ".add", ".f32", ".f16", ".f16x2", ".bf16",
             ".u32", ".s32", ".b32", ".pred", ".u16", ".f64", ".x"]
OPERANDS = ["p", "q", "p|q", "_", "a", "b", "c", "d", "!c", "%r1", "1", "-1", "09", "7U",
            "0f3F800000", "1.5", "1e400", "{a, b}", "a.h10", "a.b7654", "d.b20", BIG]
instruction_like = st.builds(
    lambda guard, op, mods, ops, end: f"{guard}{op}{''.join(mods)} {', '.join(ops)}{end}",
    st.sampled_from(["", "@p ", "@!g "]), st.sampled_from(OPCODES),
    st.lists(st.sampled_from(MODIFIERS), max_size=4),
    st.lists(st.sampled_from(OPERANDS), min_size=1, max_size=5),
    st.sampled_from([";", ";;", "", "; ", ";\n", "; // c\n"]))
FORMS = [t for v in list(catalogue())[::5] for t in instruction_forms(v)]  # legal texts


def _edit(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Replace text[at:at+cut] with a token, for each edit."""
    for at, cut, token in edits:
        at %= len(text) + 1
        text = text[:at] + token + text[at + cut:]
    return text


near_legal = st.builds(_edit, st.sampled_from(FORMS), st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 3), st.sampled_from(TOKENS + OPERANDS)),
    max_size=2))
texts = st.one_of(  # token soup, instruction-shaped text, and legal text lightly damaged
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), max_size=24).map("".join),
    st.lists(instruction_like, min_size=1, max_size=3).map("".join),
    st.lists(near_legal, min_size=1, max_size=3).map(" ".join))
values = st.one_of(st.sampled_from(["1", "-1", "nan", "inf", "0x7e00", "true", "09", BIG, ""]),
                   st.text(max_size=6), st.integers(-2**70, 2**70), st.booleans(), st.none(),
                   st.floats(), st.lists(st.integers(), max_size=2))


@FUZZ
@given(texts, st.dictionaries(st.sampled_from(["a", "b", "c", "d", "p", "%a", "x"]), values))
def test_parse_and_evaluate_raise_only_ptx_errors(text, inputs):
    named = {k: v for k, v in inputs.items() if k.lstrip("%") in text}  # more often complete
    for attempt in (lambda: parse(text), lambda: evaluate(text, inputs),
                    lambda: evaluate(text, named)):
        with contextlib.suppress(PtxError):
            attempt()


@FUZZ
@given(texts, st.lists(st.sampled_from(["a=1", "b=0x7e00", "c=true", "d=-1.5", "p=1", "a=1",
                                        f"b={BIG}", "x", "=", "a=\udcff"]), max_size=4))
def test_commands_answer_fuzzed_text_cleanly(text, operands):
    assert_clean(invoke(["eval", text, *operands]))
    assert_clean(invoke(["eval", "--json", text, *operands]))
    assert_clean(invoke(["check", "-"], text.encode("utf-8", "surrogateescape")),
                 (0, 1, 2, 5))  # 5: a line not judged (`setset`, `ld`)
    assert_clean(invoke(["equiv", text, "setp.lt.u32 p, a, b;", "--timeout", "2"]))


# ---- the batch reader, fuzzed -------------------------------------------------------------

GOOD = [  # (text, options) pairs whose lines the reference answers
    ("setp.lt.f32 p|q, a, b;", {}), ("setp.lt.f32 p|q, a, b;", {"target": "sm_13"}),
    ("set.gtu.u32.f32 d, a, b;", {"target": "sm_13"}),
    ("setp.ge.f64 p, a, b;", {"target": "sm_13"}),
    ("slct.f32.f32 d, a, b, c;", {"target": "sm_13"}), ("slct.s32.f32 d, a, b, c;", {}),
    ("vset2.u32.u32.lt d.h1, a, b, c;", {"vset_merge": "b"}),
    ("vset4.s32.s32.ge d.b20, a.b4567, b, c;", {"vset_merge": "b", "target": "sm_13"}),
    ("vset4.u32.u32.ne d.b3, a, b, c;", {}),
    ("setp.eq.u32 %p0, 0, 0;", {}), ("slct.s32.s32 %r0, 1, 12, 2142016040;", {}),
]
SPECIALS = [0, 1, 0x80000001, 0x007FFFFF, 0x7FC00000, 0xFF800000, 0x80000000, 0x00800000,
            0x0000000000000001, 0x000FFFFFFFFFFFFF, 0x7FF8000000000000, 0xFFFFFFFF]
BAD_LINES = [b"\xff\xfe", b"[" * 2000 + b"]" * 2000, b'{"a": ' + BIG.encode() + b"}", b"\x00",
             b"not json", b"[]", b'{"ptx": 1}', b'{"ptx": "setp.lt.f32 p, a, b;", "inputs": []}',
             b'{"ptx": "setp.lt.f32 p, a, b;", "inputs": {}, "options": {"target": "sm_0"}}',
             b'{"ptx": "setp.lt.f32 p, a, b;", "inputs": {}, "options": {"frob": 1}}',
             b'{"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": [1], "b": "1"}}',
             b'{"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "1", "%a": "2", "b": "1"}}',
             b'{"ptx": "setp.lt.f32 p, a, b", "inputs": {"a": "1", "b": "1"}}',
             b'{"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "' + BIG.encode() + b'"}}']


@st.composite
def good_line(draw) -> tuple[bytes, dict]:
    text, opts = draw(st.sampled_from(GOOD))
    program = Program.parse(text)  # one instruction: its source registers are its inputs
    types, (ins,) = program.types, program.instructions
    inputs = {}
    for name in dict.fromkeys(o.text for o in ins.sources.values() if o.kind == "reg"):
        width = types[name].width
        if width == 1:
            inputs[name] = draw(st.booleans())
        else:
            pool = [x for x in SPECIALS if x < 1 << width]
            inputs[name] = draw(st.sampled_from(pool) | st.integers(0, (1 << width) - 1))
    regs = reference(text, inputs, int(opts.get("target", "sm_90")[3:]),
                     opts.get("vset_merge", "c"))
    line = {"ptx": text, "inputs": {k: v if isinstance(v, bool) else
                                    f"0x{v:0{types[k].width // 4}x}" for k, v in inputs.items()}}
    if opts:
        line["options"] = opts
    want = {}
    for op in ins.destinations.values():
        v = regs[op.text]
        want[op.spelled[0]] = v if isinstance(v, bool) else f"0x{v:0{types[op.text].width // 4}x}"
    return json.dumps(line).encode(), {"line": line, "outputs": want}


blank = st.sampled_from([b"", b"  ", b"\t", b"\r"])
bad = st.one_of(st.sampled_from(BAD_LINES),
                st.binary(min_size=1, max_size=40).filter(
                    lambda b: b"\n" not in b and b.strip(b" \t\r")))


@FUZZ
@given(st.lists(st.one_of(good_line(), bad.map(lambda b: (b, None)), blank.map(lambda b: (b, ""))),
                max_size=30))
def test_batch_answers_every_line_in_place(lines):
    r = invoke(["eval", "--batch", "-"], b"\n".join(raw for raw, _ in lines))
    assert_clean(r, (0, 1))
    out = [json.loads(x) for x in r.stdout.splitlines()]
    expected = list(enumerate((want for _, want in lines), 1))
    if lines and lines[-1][0] == b"":  # the input ends in a newline (or is empty): no line
        expected.pop()
    assert len(out) == len(expected)  # a blank line too: answer k is line k's
    for obj, (number, want) in zip(out, expected):
        if want is None or want == "":
            assert obj["error"].startswith(f"line {number}: "), obj
        else:
            assert obj == {**want["line"], "outputs": want["outputs"]}, obj


def test_a_bug_in_one_group_costs_no_other_line(monkeypatch):
    """A fast-path failure falls back to the slow path for its group; an exception there
    is an internal error on its own line, never a traceback."""
    from ptxsmt.batch import engine as batch
    from ptxsmt.eval import evaluate as evaluating  # the slow path, imported where used

    real_evaluate = evaluating.evaluate

    def broken_fast(*args, **kwargs):
        raise RuntimeError("fast path bug")

    def broken_slow(ptx, *args, **kwargs):
        if "vset2" in ptx:
            raise ZeroDivisionError("slow path bug")
        return real_evaluate(ptx, *args, **kwargs)

    monkeypatch.setattr(batch, "_run_together", broken_fast)
    monkeypatch.setattr(evaluating, "evaluate", broken_slow)
    lines = [{"ptx": "slct.s32.s32 d, a, b, c;", "inputs": {"a": "0x1", "b": "0x2", "c": "-1"}},
             {"ptx": "vset2.u32.u32.lt d, a, b, c;", "inputs": {"a": "1", "b": "2", "c": "0"}},
             {"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x1", "b": "0x2"}}]
    r = invoke(["eval", "--batch", "-"], "\n".join(map(json.dumps, lines)).encode())
    assert_clean(r, (1,))
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert out[0]["outputs"] == {"d": "0x00000002"} and out[2]["outputs"] == {"p": True}
    assert out[1]["error"].startswith("line 2: internal error (a ptxsmt bug, please report it): "
                                      "ZeroDivisionError")


@pytest.mark.parametrize("where", ["equiv", "all-classes", "vectors", "minimise"])
def test_z3_swallowing_ctrl_c_is_never_an_answer(monkeypatch, where):
    """z3 answers unknown ("interrupted from keyboard") when Ctrl-C lands in check():
    every solver call turns that back into KeyboardInterrupt."""
    import z3

    from ptxsmt.smt.queries import classes, vectors
    from ptxsmt.smt.queries import snippets as solve

    real = z3.Solver.check
    calls = {"n": 0}
    trip = {"equiv": 1, "all-classes": 3, "vectors": 1, "minimise": 2}[where]

    def check(self, *a):
        calls["n"] += 1
        return z3.unknown if calls["n"] >= trip else real(self, *a)

    monkeypatch.setattr(z3.Solver, "check", check)
    monkeypatch.setattr(z3.Solver, "reason_unknown", lambda self: "interrupted from keyboard")
    lhs, rhs = "setp.lt.f32 p, a, b; not.pred p, p;", "setp.ge.f32 p, a, b;"
    with pytest.raises(KeyboardInterrupt):
        if where == "vectors":
            list(vectors.vectors_for("setp.lt.f32 p, a, b;"))
        elif where == "all-classes":
            q = solve.build_query(lhs, rhs)
            calls["n"] = 2
            classes.class_report(q, 5.0)
        else:
            solve.check_equivalence(lhs, rhs)
