"""The verifier core: snippets, functions and IR decided by one policy (`smt.decide`)
and said in one table of phrases (`smt.phrases`). An interrupted IR solve is the
interrupt; another solver's model that z3 refutes is a bug for IR as for snippets;
every verdict `equiv` and `tv` print opens with a phrase of the table."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import z3
from click.testing import CliRunner

from ptxsmt.cli import main
from ptxsmt.smt.solving import decide, phrases, portfolio
from ptxsmt.smt.solving.decide import SolverDisagreement

pytest.importorskip("llvmlite")

from ptxsmt.function.evaluate import read_function_file  # noqa: E402
from ptxsmt.llvm import read_ir  # noqa: E402
from ptxsmt.smt.queries.refinement import ir_refines  # noqa: E402

PAIR = Path(__file__).parent / "ptx" / "llvm"
UNE = str(PAIR / "une.ll"), str(PAIR / "une_llc14_O2.ptx")


def _une(solver: str = "z3"):
    return ir_refines(read_ir(Path(UNE[0]).read_text())["une"],
                      read_function_file(UNE[1], "une"), 30_000, solver)


def _z3_interrupted(monkeypatch) -> None:
    """Every z3 search stops as a Ctrl-C stops it: unknown, "interrupted from keyboard"."""
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    monkeypatch.setattr(z3.Solver, "reason_unknown", lambda self: "interrupted from keyboard")


def test_an_interrupted_refinement_solve_is_the_interrupt_not_unknown(monkeypatch):
    _z3_interrupted(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        _une()


def test_tv_stopped_by_a_ctrl_c_in_its_solve_exits_130_with_the_summary(monkeypatch):
    _z3_interrupted(monkeypatch)
    r = CliRunner().invoke(main, ["tv", UNE[0], "--function", "une", "-O", "0"])
    assert r.exit_code == 130, r.output
    assert r.stdout == "interrupted after 0 of 1 functions\n"


REAL_CHECK = decide.check


def _bitwuzla_says_sat_with(monkeypatch, values: dict) -> None:
    """z3's first seconds give up; the race then answers sat with `values`, made up."""
    real, calls = REAL_CHECK, []  # not decide.check: a command's calls were in its child

    def check(s, *assumptions):
        calls.append(assumptions)
        return z3.unknown if len(calls) == 1 else real(s, *assumptions)
    monkeypatch.setattr(decide, "check", check)
    for name in ("bitwuzla", "cvc5"):  # installed, as far as `unavailable` can tell
        monkeypatch.setitem(sys.modules, name, ModuleType(name))
    monkeypatch.setattr(portfolio, "solve", lambda assertions, timeout, racers:
                        portfolio.Answer("sat", "bitwuzla", values))


def test_a_refuted_model_of_an_ir_query_is_a_bug_as_for_snippets(monkeypatch):
    """une refines its IR (unsat): any "sat" model is wrong, and z3 refutes it. For
    snippets `check_with` raises; the IR query is decided by the same policy."""
    _bitwuzla_says_sat_with(monkeypatch, {"a": 0, "b": 0})
    with pytest.raises(SolverDisagreement, match="bitwuzla says sat, but z3 refutes its model"):
        _une("auto")
    _bitwuzla_says_sat_with(monkeypatch, {"a": 0, "b": 0})
    r = CliRunner().invoke(main, ["equiv", *UNE, "--function", "une"])
    assert r.exit_code == 4 and "ptxsmt bug, please report: bitwuzla says sat" in r.stderr
    _bitwuzla_says_sat_with(monkeypatch, {"a": 0, "b": 0})
    r = CliRunner().invoke(main, ["tv", UNE[0], "--function", "une", "-O", "0"])
    assert r.exit_code == 4 and "ptxsmt bug, please report: bitwuzla says sat" in r.stderr


def test_a_quantified_query_is_z3s_alone():
    """IR's open choices are quantified: no other solver of the portfolio is handed one."""
    x, c = z3.BitVecs("x c", 8)
    refused = portfolio.unreadable([z3.ForAll([c], x + c != x + 1)], portfolio.SOLVERS)
    assert refused == {"bitwuzla": "not asked: the query is quantified",
                       "cvc5": "not asked: the query is quantified"}


# ---- one table of phrases ---------------------------------------------------------------

def test_each_phrase_opens_with_its_word():
    """A phrase says the verdict it stands for ("bounded" is equivalence, or refinement,
    up to loops)."""
    for (word, qualifier), said in phrases.PHRASES.items():
        assert said.startswith("{relation} up to" if word == "bounded" else word)
        assert said.endswith(qualifier) or qualifier in said
    assert set(phrases.EXIT) == {w for w, _ in phrases.PHRASES}


def _phrases() -> set[str]:
    return {p.format(unroll=4, relation=r) for p in phrases.PHRASES.values()
            for r in ("equivalent", "refines")}


def _said(line: str) -> str | None:
    """The table's phrase a verdict line opens with (`@f: PHRASE (why)` from tv,
    `PHRASE: ...` from equiv), the longest that fits; None if none does."""
    line = re.sub(r"^@\S+: ", "", line)
    return next((p for p in sorted(_phrases(), key=len, reverse=True)
                 if re.match(re.escape(p) + r"($|: | \()", line)), None)


# tv's verdicts: refines, refines up to NaN payloads (neg.f32's NaN is any NaN, compared
# payload-free by default), refused (a cycle entered at two blocks); --nan exact:
# different where the ISA leaves that NaN open (the PTX may give one fneg forbids)
# a cycle entered at two blocks (l and m): refused
IRREDUCIBLE = (Path(__file__).parent / "ptx" / "llvm" / "irreducible.ll").read_text()

TV = """define i32 @add(i32 %a, i32 %b) {
  %r = add i32 %a, %b
  ret i32 %r
}
define float @fneg(float %a) {
  %r = fneg float %a
  ret float %r
}
""" + IRREDUCIBLE
FUNCTION = """.visible .func (.param .b32 r) f(.param .b32 a, .param .b32 b)
{
    .reg .b32 %r<4>;
    ld.param.u32 %r1, [a];
    ld.param.u32 %r2, [b];
    OP.u32 %r3, %r1, %r2;
    st.param.b32 [r], %r3;
    ret;
}
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    """IR and PTX pairs for `equiv`: une and its ordered-compare miscompile, two PTX
    functions that agree and two that do not."""
    d = tmp_path_factory.mktemp("pairs")
    out = {"une.ll": UNE[0], "une.ptx": UNE[1], "tv.ll": str(d / "tv.ll")}
    (d / "tv.ll").write_text(TV)
    (d / "une_bad.ptx").write_text(Path(UNE[1]).read_text().replace("setp.neu.f32",
                                                                    "setp.ne.f32"))
    out["une_bad.ptx"] = str(d / "une_bad.ptx")
    for op in ("add", "sub"):
        (d / f"{op}.ptx").write_text(FUNCTION.replace("OP", op))
        out[f"{op}.ptx"] = str(d / f"{op}.ptx")
    return out


@pytest.mark.parametrize("args", [
    ["add.u32 d, a, b;", "add.u32 d, b, a;"],
    ["add.u32 d, a, b;", "sub.u32 d, a, b;"],
    ["mul.lo.u64 d, a, b;", "mul.lo.u64 d, b, a;", "--timeout", "0.001", "--solver", "z3"],
    ["add.f32 d, a, b;", "add.f32 d, b, a;"],
    ["add.f32 d, a, b;", "add.f32 d, b, a;", "--nan", "exact"],
    ["{add.ptx}", "{add.ptx}", "--function", "f"],
    ["{add.ptx}", "{sub.ptx}", "--function", "f"],
    ["{une.ll}", "{une.ptx}", "--function", "une"],
    ["{une.ll}", "{une_bad.ptx}", "--function", "une"],
], ids=["equivalent", "different", "unknown", "f32", "exact", "functions-equivalent",
        "functions-different", "ir-refines", "ir-different"])
def test_every_verdict_equiv_prints_is_a_phrase_of_the_table(args, files):
    args = [files[a[1:-1]] if a.startswith("{") else a for a in args]
    text = CliRunner().invoke(main, ["equiv", *args])
    assert text.exit_code in (0, 1, 3), text.output
    assert _said(text.stdout.splitlines()[0]) is not None, text.stdout
    as_json = CliRunner().invoke(main, ["equiv", *args, "--json"])
    verdict = json.loads(as_json.stdout)["verdict"]
    assert phrases.EXIT[verdict] == text.exit_code


def test_every_verdict_tv_prints_is_a_phrase_of_the_table(files):
    said = {}
    for nan in ("payload-free", "exact"):
        r = CliRunner().invoke(main, ["tv", files["tv.ll"], "--nan", nan])
        said[nan] = [_said(line) for line in r.stdout.splitlines()[:-1]]
    assert said == {"payload-free": ["refines", "refines up to NaN payloads", "refused"],
                    "exact": ["refines", "different where the PTX ISA leaves a NaN open",
                              "refused"]}
    counted = Path(files["tv.ll"]).with_name("counted.ll")  # a loop: refines up to K
    counted.write_text("define i32 @f(i32 %n) {\nentry:\n  br label %l\nl:\n"
                       "  %i = phi i32 [ 0, %entry ], [ %j, %l ]\n  %j = add i32 %i, 1\n"
                       "  %c = icmp ult i32 %j, %n\n  br i1 %c, label %l, label %e\ne:\n"
                       "  ret i32 %j\n}\n")
    r = CliRunner().invoke(main, ["tv", str(counted), "--unroll", "4"])
    assert [_said(line) for line in r.stdout.splitlines()[:-1]] == [
        "refines up to 4 iterations"]
