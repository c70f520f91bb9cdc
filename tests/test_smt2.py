"""`--emit-smt2`: standard SMT-LIB 2 (QF_BVFP) that other solvers read and agree with.

Every instance of the identity library (cvt ones included) is exported once; each
file must use only standard QF_BVFP (checked on its S-expressions, independently
of any solver), and cvc5 and bitwuzla must each reach the verdict Z3 reaches on
the same file, which is the verdict the library expects (every instance in the
thorough tier, a fixed sample of SOLVED in the default one).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import z3
from click.testing import CliRunner
from tier import sample

from ptxsmt import proofs
from ptxsmt.cli import main
from ptxsmt.llvm.module import compile_to_ptx
from ptxsmt.smt.queries.snippets import build_query

LIBRARY = proofs.load(Path(__file__).resolve().parent.parent / "proofs")
SOLVED = sample(LIBRARY, 150, "smt2")  # the instances three solvers are asked about
EXPECT = {"holds": "unsat", "fails": "sat"}

# SMT-LIB 2.6 Core, FixedSizeBitVectors and FloatingPoint: what QF_BVFP may apply
CORE = {"not", "=>", "and", "or", "xor", "=", "distinct", "ite"}
BV = {"concat", "extract", "zero_extend", "sign_extend", "repeat", "rotate_left",
      "rotate_right", "bvnot", "bvand", "bvor", "bvxor", "bvnand", "bvnor", "bvxnor",
      "bvneg", "bvadd", "bvsub", "bvmul", "bvudiv", "bvurem", "bvsdiv", "bvsrem", "bvsmod",
      "bvshl", "bvlshr", "bvashr", "bvcomp", "bvult", "bvule", "bvugt", "bvuge", "bvslt",
      "bvsle", "bvsgt", "bvsge"}
FP = {"fp", "+zero", "-zero", "+oo", "-oo", "NaN", "fp.abs", "fp.neg", "fp.add", "fp.sub",
      "fp.mul", "fp.div", "fp.fma", "fp.sqrt", "fp.rem", "fp.roundToIntegral", "fp.min",
      "fp.max", "fp.leq", "fp.lt", "fp.geq", "fp.gt", "fp.eq", "fp.isNormal",
      "fp.isSubnormal", "fp.isZero", "fp.isInfinite", "fp.isNaN", "fp.isNegative",
      "fp.isPositive", "to_fp", "to_fp_unsigned", "fp.to_ubv", "fp.to_sbv"}
STANDARD = CORE | BV | FP | {"bvN"}  # (_ bvN w) literals


def safe_name(instance_id: str) -> str:
    """The file name proofs.emit_smt2 gives an instance."""
    return "".join(ch if ch.isalnum() or ch in "-_=" else "_" for ch in instance_id)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("smt2")
    assert proofs.emit_smt2(LIBRARY, d) == len(LIBRARY)
    return {i.id: d / f"{safe_name(i.id)}.smt2" for i in LIBRARY}


@pytest.fixture(scope="module")
def z3_verdicts(exported) -> dict[str, str]:
    out = {}
    for inst in SOLVED:
        s = z3.Solver()
        s.from_file(str(exported[inst.id]))
        out[inst.id] = str(s.check())
    return out


# ---- standard SMT-LIB, read without any solver --------------------------------------------

def parse(text: str) -> list:
    """S-expressions of an SMT-LIB script (comments dropped; |symbols| kept whole)."""
    tokens = re.findall(r'\(|\)|\|[^|]*\||[^\s()|;]+', re.sub(r";[^\n]*", "", text))
    stack: list[list] = [[]]
    for tok in tokens:
        if tok == "(":
            stack.append([])
        elif tok == ")":
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    assert len(stack) == 1, "unbalanced parentheses"
    return stack[0]


def operators(node, found: set[str]) -> None:
    """Every function symbol applied in a term; a one-operand and/or is recorded as such."""
    if isinstance(node, str):
        return
    head = node[0]
    if head == "let":
        for _, term in node[1]:
            operators(term, found)
        operators(node[2], found)
        return
    if head in ("forall", "exists"):  # (forall ((x Sort) ...) body): the body's symbols
        found.add(head)
        operators(node[2], found)
        return
    if head == "_":  # indexed identifier: (_ extract 7 0), (_ bv5 8), (_ +zero 8 24)
        found.add("bvN" if re.fullmatch(r"bv\d+", node[1]) else node[1])
        return
    if head in ("and", "or") and len(node) < 3:
        found.add(f"unary {head}")
    operators(head, found)  # an indexed operator: ((_ to_fp 8 24) x)
    if isinstance(head, str):
        found.add(head)
    for arg in node[1:]:
        operators(arg, found)


def nonstandard(text: str) -> list[str]:
    """What in an exported query is not standard QF_BVFP (empty when all is)."""
    bad, found = [], set()
    for cmd in parse(text):
        kind = cmd[0]
        if kind == "set-logic" and cmd[1] not in ("QF_BVFP", "QF_BV"):  # the least it needs
            bad.append(f"logic {cmd[1]}")
        elif kind == "declare-fun" and (cmd[2] != [] or not (
                cmd[3] == "Bool" or cmd[3][:2] == ["_", "BitVec"])):
            bad.append(f"declares {cmd[1]} {cmd[2]} {cmd[3]}")
        elif kind == "assert":
            operators(cmd[1], found)
        elif kind not in ("set-logic", "set-info", "declare-fun", "check-sat"):
            bad.append(f"command {kind}")
    if not any(cmd[0] == "set-logic" for cmd in parse(text)):
        bad.append("no set-logic")
    return bad + sorted(found - STANDARD)


def test_the_checker_sees_what_z3_alone_would_write():
    """Z3's own to_smt2 of a single-output cvt query is not standard: the checker says so
    (the cvt's open NaN is observed as bits, so the query keeps it)."""
    q = build_query("cvt.f32.bf16 x, a; and.b32 y, x, 1;", "mov.b32 y, 1;", ["y"])
    s = z3.Solver()
    s.add(z3.Or([q.differ]), z3.fpToIEEEBV(z3.fpBVToFP(z3.BitVec("b", 32), z3.Float32())) == 0)
    bad = nonstandard("(set-logic QF_BVFP)\n" + s.to_smt2())
    assert "unary or" in bad and "fp.to_ieee_bv" in bad
    assert any(b.startswith("declares cvt.f32.bf16") for b in bad)
    assert nonstandard(q.smt2()) == []


def test_every_export_is_standard_qf_bvfp(exported):
    bad = {name: b for name, path in exported.items() if (b := nonstandard(path.read_text()))}
    assert not bad, list(bad.items())[:3]


def test_library_exports_include_cvt_and_single_outputs(exported):
    texts = [p.read_text() for p in exported.values()]
    assert sum("cvt." in t for t in texts) >= 16  # the free NaN constants of cvt
    assert len(texts) == len(LIBRARY) >= 500


# ---- two other solvers, every instance ------------------------------------------------------

def cvc5_answer(path: Path) -> str:
    cvc5 = pytest.importorskip("cvc5", reason="cvc5 (a second SMT solver) is not installed")
    solver = cvc5.Solver(cvc5.TermManager())
    solver.setOption("fp-exp", "true")  # cvc5 needs it for f16 and bf16 sorts
    solver.setOption("arrays-exp", "true")  # and this for a constant array
    parser = cvc5.InputParser(solver)
    parser.setFileInput(cvc5.InputLanguage.SMT_LIB_2_6, str(path))
    answers = []
    while not (cmd := parser.nextCommand()).isNull():
        answers.append(cmd.invoke(solver, parser.getSymbolManager()).strip())
    return "".join(answers)


def bitwuzla_answer(path: Path) -> str:
    bitwuzla = pytest.importorskip("bitwuzla",
                                   reason="bitwuzla (a second SMT solver) is not installed")
    parser = bitwuzla.Parser(bitwuzla.TermManager(), bitwuzla.Options())
    parser.parse(str(path), parse_only=True)  # every command but check-sat
    return str(parser.bitwuzla().check_sat())


@pytest.mark.parametrize("answer", [cvc5_answer, bitwuzla_answer], ids=["cvc5", "bitwuzla"])
def test_every_library_export_gets_z3s_verdict(answer, exported, z3_verdicts):
    """A second solver, the same verdict."""
    wrong = []
    for inst in SOLVED:
        want = EXPECT[inst.expect]
        got = answer(exported[inst.id])
        if not got == z3_verdicts[inst.id] == want:
            wrong.append((inst.id, want, z3_verdicts[inst.id], got))
    assert not wrong, wrong[:5]


def test_smt2_export_is_standalone(tmp_path):
    r = CliRunner().invoke(main, ["equiv", "--emit-smt2", str(tmp_path),
                                  "setp.lt.f32 p, a, b; not.pred p, p;", "setp.ge.f32 p, a, b;"])
    assert r.exit_code == 1
    text = (tmp_path / "equiv.smt2").read_text()
    s = z3.Solver()
    s.from_string(text)
    assert s.check() == z3.sat  # sat: the snippets differ
    assert nonstandard(text) == []


@pytest.mark.parametrize(("lhs", "rhs", "verdict"), [
    # one input, one NaN: both sides convert a, so they agree even on NaN
    ("cvt.f32.bf16 x, a;", "cvt.f32.bf16 x, a;", "unsat"),
    # the ISA leaves the NaN open: no exact bit rewrite of cvt.f32.bf16 exists
    ("cvt.f32.bf16 x, a;", "mov.b32 x, {z, a}; and.b32 x, x, 0xffff0000;", "sat"),
    # a and b may be equal: Ackermann's lemma must give their NaNs one value then
    ("cvt.f32.bf16 x, a; cvt.f32.bf16 y, b; setp.eq.b16 p, a, b; selp.b32 d, x, y, p;",
     "cvt.f32.bf16 y, b; mov.b32 d, y;", "unsat"),
    ("cvt.f32.f16 x, a; cvt.f64.f32 y, x;", "cvt.f32.f16 x, a; cvt.f64.f32 y, x;", "unsat"),
])
def test_free_nans_export_with_the_same_verdict(tmp_path, lhs, rhs, verdict):
    q = build_query(lhs, rhs, ["d"] if "d," in lhs else None)
    path = tmp_path / "q.smt2"
    path.write_text(q.smt2())
    s = z3.Solver()
    s.add(q.differ)
    assert str(s.check()) == verdict
    assert nonstandard(path.read_text()) == []
    assert cvc5_answer(path) == bitwuzla_answer(path) == verdict


# ---- functions and IR against PTX: the query a verdict comes from ---------------------------

PTX = Path(__file__).resolve().parent / "ptx"
# (first, second, function, ptxsmt's verdict); the verdicts come from how the files were made:
# nvcc -G and -O3 of one source, a planted wrong rewrite (O3_wrong), llc-14 of the IR
FUNCTION_PAIRS = [
    (PTX / "func_sm90_G.ptx", PTX / "func_sm90_O3.ptx", "_Z5clampPKiPiii", "equivalent"),
    (PTX / "func_sm90_O3.ptx", PTX / "func_sm90_O3_wrong.ptx", "_Z4pickPKiS0_Piii", "different"),
    (PTX / "mixed_sm90_G.ptx", PTX / "mixed_sm90_O3.ptx", "_Z4fselPKfS0_Pfi", "equivalent"),
    (PTX / "llvm14.ll", PTX / "llvm14_sm80.ptx", "store", "refines"),
    (PTX / "llvm14.ll", PTX / "llvm14_sm80.ptx", "fmn", "refines"),  # a quantified query
    (PTX / "llvm" / "une.ll", "une_bad.ptx", "une", "different"),
    # float arithmetic (its IEEE bits: fp.to_ieee_bv in z3's own writing)
    ("sum.ptx", "sum_rn.ptx", "f", "equivalent"),
    ("sum.ptx", "sum_planted.ptx", "f", "different"),
    # -0.0 < +0.0 of llvm.maximum: Bool terms, never Int (bitwuzla reads no Int)
    ("maximum.ll", "maximum.ptx", "maximum", "refines"),
]
MAXIMUM = """target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
declare float @llvm.maximum.f32(float, float)
define float @maximum(float %a, float %b) {
  %r = call float @llvm.maximum.f32(float %a, float %b)
  ret float %r
}
"""
SUM = """.version 8.4
.target sm_90
.address_size 64

.visible .func  (.param .b32 func_retval0) f(.param .b32 f_param_0, .param .b32 f_param_1)
{{
	.reg .f32 	%f<4>;
	.reg .pred 	%p<2>;
	ld.param.f32 	%f1, [f_param_0];
	ld.param.f32 	%f2, [f_param_1];
	{body}
	st.param.f32 	[func_retval0], %f3;
	ret;
}}
"""
GENERATED = {  # name -> text of a file made for the test
    "une_bad.ptx": lambda: (PTX / "llvm" / "une_llc14_O2.ptx").read_text().replace(
        "setp.neu.f32", "setp.ne.f32"),  # llc's une lowered as the ordered compare: a bug
    "maximum.ll": lambda: MAXIMUM,
    "maximum.ptx": lambda: compile_to_ptx(MAXIMUM, "sm_90"),  # max.NaN.f32
    "sum.ptx": lambda: SUM.format(body="add.f32 %f3, %f1, %f2;"),
    "sum_rn.ptx": lambda: SUM.format(body="add.rn.f32 %f3, %f1, %f2;"),
    "sum_planted.ptx": lambda: SUM.format(  # 1.0 + 1.0 gives 3.0
        body="add.f32 %f3, %f1, %f2; setp.eq.f32 %p1, %f3, 0f40000000;\n"
             "@%p1 add.f32 %f3, %f3, 0f3F800000;"),
}
SAT = {"equivalent": "unsat", "refines": "unsat", "different": "sat"}


def _declared_functions(text: str) -> set[str]:
    return {cmd[1].strip("|") for cmd in parse(text) if cmd[0] == "declare-fun" and cmd[2]}


@pytest.mark.parametrize(("first", "second", "function", "verdict"), FUNCTION_PAIRS,
                         ids=[p[2] for p in FUNCTION_PAIRS])
def test_a_function_export_is_the_query_its_verdict_comes_from(tmp_path, first, second,
                                                              function, verdict):
    for name in (first, second):
        if name in GENERATED:
            (tmp_path / name).write_text(GENERATED[name]())
    first, second = (tmp_path / p if p in GENERATED else p for p in (first, second))
    r = CliRunner().invoke(main, ["equiv", str(first), str(second), "--function", function,
                                  "--emit-smt2", str(tmp_path), "--timeout", "60"])
    shown = r.stdout.split(":")[0] if str(first).endswith(".ptx") else r.stdout.split()[1]
    assert shown == verdict, r.output
    path = tmp_path / f"{function}.smt2"
    text = path.read_text()
    s = z3.Solver()
    s.from_file(str(path))  # z3 from the file alone, nothing of ptxsmt's objects
    assert str(s.check()) == SAT[verdict]
    quantified = "forall" in text
    commands = parse(text)
    assert [c[0] for c in commands][-1] == "check-sat"
    logic = next(c[1] for c in commands if c[0] == "set-logic")
    assert logic.startswith("QF_") != quantified and "BV" in logic
    assert ("A" in logic.removeprefix("QF_")[:1]) == ("(Array" in text)
    found: set[str] = set()
    for cmd in commands:
        if cmd[0] == "assert":
            operators(cmd[1], found)
    # arrays (memory; `(as const (Array ...))` where it starts as one value) and quantifiers
    extra = {"select", "store", "as", "const", "Array", "BitVec", "forall", "exists"}
    extra |= _declared_functions(text)
    assert {f.strip("|") for f in found} - STANDARD - extra == set(), "not standard SMT-LIB"
    for answer in (cvc5_answer, bitwuzla_answer):
        got = answer(path)
        assert got == SAT[verdict] or (quantified and got.startswith("unknown")), (answer, got)


def test_a_conversion_that_holds_a_bound_variable_stays_under_its_binder():
    """`fp.to_ieee_bv` of a free float becomes a defined constant; of a quantified one
    it stays (a constant cannot stand for a value that varies with the binder)."""
    from ptxsmt.smt.solving import smt2

    x, y = z3.FP("x", z3.Float32()), z3.FP("y", z3.Float32())
    query = z3.ForAll([y], z3.Implies(z3.fpToIEEEBV(y) == z3.fpToIEEEBV(x),
                                      z3.Or(z3.fpEQ(x, y), z3.fpIsNaN(x))))
    out = smt2.standard([query])
    text = " ".join(t.sexpr() for t in out)
    assert len(out) == 2, text  # x's conversion defined, and the query
    assert text.count("fp.to_ieee_bv") == 1 and "to_ieee_bv!0" in text, text
    assert "(fp.to_ieee_bv y)" in text, text


def test_terms_of_two_contexts_are_walked_apart():
    """z3 numbers terms per context: the same id in another context is another term."""
    from ptxsmt.smt.solving import smt2

    a, b = (z3.BitVec(name, 8, ctx=z3.Context()) for name in "ab")  # built alike: one id
    x, y = a + 1, b * 3
    assert x.get_id() == y.get_id()  # else this test shows nothing
    assert [t.sexpr() for t in smt2.subterms(x)] == ["(bvadd a #x01)", "a", "#x01"]
    assert [t.sexpr() for t in smt2.subterms(y)] == ["(bvmul b #x03)", "b", "#x03"]


def test_the_rewrites_keep_the_logic():
    """`script` names the logic from the assertions (their walks are made already), not
    from their standard form: the rewrites must not change it."""
    from ptxsmt.smt.solving import smt2

    x, y = z3.FP("x", z3.Float32()), z3.FP("y", z3.Float32())
    a, i = z3.BitVec("a", 8), z3.BitVec("i", 32)
    memory = z3.Array("m", z3.BitVecSort(32), z3.BitVecSort(8))
    f = z3.Function("f", a.sort(), a.sort())
    queries = [[z3.fpToIEEEBV(x) == z3.BitVec("b", 32)],
               [z3.Or([z3.fpIsNaN(x)]), z3.And([a == 1])],
               [z3.ForAll([y], z3.fpToIEEEBV(y) != z3.fpToIEEEBV(x))],
               [memory[i] == a, f(a) == z3.Extract(7, 0, z3.fpToIEEEBV(x))]]
    logics = [smt2.logic(q) for q in queries]
    assert logics == ["QF_BVFP", "QF_BVFP", "BVFP", "QF_AUFBVFP"]
    assert logics == [smt2.logic(smt2.standard(q)) for q in queries]


def _smtlib_division(op: str, x: int, y: int, w: int = 8) -> int:
    """SMT-LIB 2.6's bit-vector divisions on `w`-bit operands, by plain arithmetic
    (truncating quotient; by 0: all ones, the dividend, and bvsdiv's sign-dependent 1
    or all ones as bvudiv of the magnitudes makes it)."""
    mask, sign = (1 << w) - 1, 1 << (w - 1)
    sx, sy = x - (x & sign) * 2, y - (y & sign) * 2
    if op in ("bvudiv", "bvurem"):
        if y == 0:
            return mask if op == "bvudiv" else x
        return x // y if op == "bvudiv" else x % y
    if y == 0:
        return (1 if sx < 0 else mask) if op == "bvsdiv" else x
    q = abs(sx) // abs(sy) * (1 if (sx < 0) == (sy < 0) else -1)
    r = sx - q * sy
    if op == "bvsmod" and r != 0 and (r < 0) != (sy < 0):
        r += sy
    return (q if op == "bvsdiv" else r) & mask


Z3_DIVISIONS = ("bvudiv", "bvurem", "bvsdiv", "bvsrem", "bvsmod")


@pytest.mark.parametrize("op", Z3_DIVISIONS)
def test_z3s_division_by_a_variable_is_spelled_standard_and_is_the_same(op):
    """z3 writes `bvudiv_i` (`_i`: created where the divisor may be assumed nonzero)
    for a division by a variable too. Its value by 0 is the standard one: the spelling
    `smt2.standard` gives it is proved equal for all 8-bit operands, by 0 included
    (z3: unsat of the difference), and z3's own value of `op_i` by 0 is plain
    arithmetic's (every 8-bit dividend)."""
    from ptxsmt.smt.solving import smt2

    x, y, z = z3.BitVecs("x y z", 8)
    (own,) = z3.parse_smt2_string(
        "(declare-const x (_ BitVec 8)) (declare-const y (_ BitVec 8))"
        f"(declare-const z (_ BitVec 8)) (assert (= ({op}_i x y) z))")
    own = own.arg(0)
    assert own.decl().name() == f"{op}_i"
    (spelled,) = smt2.standard([own == z])
    spelled = spelled.arg(0)
    assert spelled.decl().name() == op and spelled.arg(0).eq(x) and spelled.arg(1).eq(y)
    s = z3.Solver()
    s.add(spelled != own)
    assert s.check() == z3.unsat
    for v in range(256):
        at_zero = z3.simplify(z3.substitute(own, (x, z3.BitVecVal(v, 8)),
                                            (y, z3.BitVecVal(0, 8))))
        assert at_zero.as_long() == _smtlib_division(op, v, 0), (op, v)


def test_plain_arithmetic_divides_as_smtlib_says():
    """The reference above against bitwuzla (another solver's standard operations) on
    a sample of operands, divisors 0 and -1 among them."""
    bitwuzla = pytest.importorskip("bitwuzla")
    tm = bitwuzla.TermManager()
    bv, options = tm.mk_bv_sort(8), bitwuzla.Options()
    options.set(bitwuzla.Option.PRODUCE_MODELS, True)
    kinds = {"bvudiv": bitwuzla.Kind.BV_UDIV, "bvurem": bitwuzla.Kind.BV_UREM,
             "bvsdiv": bitwuzla.Kind.BV_SDIV, "bvsrem": bitwuzla.Kind.BV_SREM,
             "bvsmod": bitwuzla.Kind.BV_SMOD}
    for op, kind in kinds.items():
        for x in (0, 1, 7, 100, 127, 128, 129, 200, 255):
            for y in (0, 1, 3, 7, 127, 128, 253, 255):
                t = tm.mk_term(kind, [tm.mk_bv_value(bv, x), tm.mk_bv_value(bv, y)])
                solver = bitwuzla.Bitwuzla(tm, options)
                assert str(solver.check_sat()) == "sat"
                got = int(solver.get_value(t).value(10))
                assert got == _smtlib_division(op, x, y), (op, x, y)


def test_a_float_term_shared_by_conversions_is_written_once():
    """The export is one assertion, so that z3's `let` shares a float term between the
    query and the definitions of its `fp.to_ieee_bv` conversions (apart, each
    assertion spells it again)."""
    from ptxsmt.smt.solving import smt2

    x, y = z3.FP("x", z3.Float32()), z3.FP("y", z3.Float32())
    product = z3.fpMul(z3.RNE(), x, y)
    bits = [z3.fpToIEEEBV(z3.fpAdd(z3.RNE(), product, c)) for c in (x, y)]
    text = smt2.script([bits[0] != bits[1], z3.Extract(0, 0, bits[0]) == 1])
    assert text.count("(assert") == 1 and text.count("fp.mul") == 1, text
