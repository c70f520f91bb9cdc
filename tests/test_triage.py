"""`ptxsmt triage`: each example claim in tests/claims/ gets its verdict, and each verdict
is checked against something independent of the Z3 terms: plain-Python arithmetic and
the independent snippet runner (tests/reference.py) for the values, an H200's results
(models/hw) for the values reported from silicon, the `ptxsmt eval` lines it prints run
again. Bad claim files are one line and exit 2; a batch goes on past them."""

from __future__ import annotations

import gzip
import json
import re
import shlex
import shutil
import struct
from fractions import Fraction
from pathlib import Path

import pytest
import reference
from click.testing import CliRunner

from ptxsmt.cli import main
from ptxsmt.report import triage as rendering
from ptxsmt.triage.claim import read_claim
from ptxsmt.triage.decide import VERDICT, VERDICTS, triage

HERE = Path(__file__).parent
CLAIMS = HERE / "claims"
SILICON = HERE.parent / "models" / "hw" / "arith_hw_half.jsonl.gz"
EXPECTED = {
    "rotl64_llc14.toml": "confirmed",  # a real llc-14 miscompile (docs/function-corpus.md)
    "fptosi_i1.toml": "confirmed",  # llvm/llvm-project#200718's sibling, both LLVMs
    "setp_not_ge.toml": "confirmed",  # two snippets said to differ
    "rotl64_llvm22.toml": "refuted",  # the same rotate, fixed in LLVM 22
    "fast_min_nsz.toml": "refuted",  # min.f32 for fcmp fast + select fast: nsz
    "min_f32_signed_zero.toml": "refuted",  # the "wrong" value is the ISA's
    "neg_s16_setp.toml": "not the compiler",  # LLVM issue 160482: ptxas
    "abs_f64_snan.json": "not the compiler",  # docs/ptxas-diff.md finding 9
    "mul24_unknown.toml": "unknown",  # mul24 is not modelled
}


def _needs_llvm(path: Path) -> None:
    if "[ir]" in path.read_text():
        pytest.importorskip("llvmlite")


def _triage(name: str):
    path = CLAIMS / name
    _needs_llvm(path)
    return triage(read_claim(path))


def _cli(*args, input=None):
    return CliRunner().invoke(main, ["triage", *args], input=input)


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def test_every_example_claim_has_its_verdict_here():
    assert sorted(p.name for p in CLAIMS.iterdir()) == sorted(EXPECTED)


def test_the_verdict_table_is_total():
    from ptxsmt.triage.decide import AT_INPUTS, OUTCOMES
    assert set(VERDICT) == {(o, a) for o in OUTCOMES for a in AT_INPUTS} - {("none", "none")}
    assert set(VERDICT.values()) == set(VERDICTS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_claims_get_their_verdict(name):
    t = _triage(name)
    assert t.verdict == EXPECTED[name], rendering.text(t)


def _rotl(a: int, n: int) -> int:
    n %= 64
    return ((a << n) | (a >> (64 - n))) & (2**64 - 1)


def _eval_output(line: str) -> str:
    """Run a printed `ptxsmt eval ...` line; its stdout."""
    args = shlex.split(line)
    assert args[:2] == ["ptxsmt", "eval"], line
    r = CliRunner().invoke(main, args[1:])
    assert r.exit_code == 0, (line, r.output)
    return r.stdout


def test_confirmed_rotate_counterexample_is_a_real_one_and_its_eval_line_replays_it():
    t = _triage("rotl64_llc14.toml")
    r = t.proof.verdict.refinement
    want = _rotl(r.inputs["a"], r.inputs["n"])  # LangRef fshl(a, a, n): a rotate, n mod 64
    assert r.ir_result == want and r.ptx_result != want
    (line,) = rendering.reproduce(t)
    assert re.search(rf"out  func_retval0 += {r.ptx_result:#018x}", _eval_output(line))


def test_confirmed_fptosi_at_the_claims_own_inputs():
    t = _triage("fptosi_i1.toml")
    r = t.proof.verdict.refinement
    x = _f32(r.inputs["x"])
    assert r.ir_result == int(x) & 1  # fptosi of a value in (-2, 1): -1 or 0, here 0
    assert r.ptx_result == (0xFFFFFFFF if r.inputs["x"] == 0 else 0)  # setp.eq.b32 x, 0
    (o,) = t.observed  # +0.0: the PTX gives -1 as the reporter says, the IR 0
    assert (o.value, o.got, o.fits) == (0xFFFFFFFF, 0xFFFFFFFF, True)


def test_confirmed_fptosi_with_the_input_named_as_the_ir_names_it(tmp_path):
    text = (CLAIMS / "fptosi_i1.toml").read_text()
    f = tmp_path / "fptosi.toml"
    f.write_text(text.replace('"../ptx/', f'"{HERE}/ptx/').replace("f32_to_s1_param_0 =",
                                                                   '"%x" ='))
    pytest.importorskip("llvmlite")
    t = triage(read_claim(f))
    (o,) = t.observed  # +0.0: setp.eq x, 0 gives -1, the IR 0
    assert (t.verdict, o.value, o.fits) == ("confirmed", 0xFFFFFFFF, True)
    assert t.claim.inputs == {"f32_to_s1_param_0": "0x00000000"}


def test_confirmed_snippets_differ_by_the_independent_runner():
    t = _triage("setp_not_ge.toml")
    cex = t.proof.verdict.counterexample
    inputs = {k: v for k, v in cex.inputs.items()}
    ge = reference.run("setp.ge.f32 p, a, b;", inputs)["p"]
    not_lt = reference.run("setp.lt.f32 p, a, b; not.pred p, p;", inputs)["p"]
    assert ge != not_lt
    for line in rendering.reproduce(t):  # each side's line replays its own value
        side = ge if "setp.ge" in line else not_lt
        assert f"out  p = {str(side).lower()}" in _eval_output(line)


ISA_CLAIMS = ["min_f32_signed_zero.toml", "neg_s16_setp.toml", "abs_f64_snan.json"]


@pytest.mark.parametrize("name", ISA_CLAIMS)
def test_claims_against_the_isa_follow_the_independent_runner(name):
    """refuted where the value reported wrong is the ISA's, by tests/reference.py;
    not the compiler where it is not."""
    claim = read_claim(CLAIMS / name)
    inputs = {k: {"-0.0": 0x80000000, "0.0": 0}.get(v) if "." in v else int(v, 0)
              for k, v in claim.inputs.items()}
    isa = reference.run(claim.ptx.text, inputs)
    got = {k: v if isinstance(v, bool) else int(v, 16) for k, v in claim.got.items()}
    fits = all(isa[k] == v for k, v in got.items())
    assert triage(claim).verdict == ("refuted" if fits else "not the compiler")


def test_abs_f64_reported_value_is_what_an_h200_gave():
    """The claim reports silicon's value (models/hw): the ISA's differs, so ptxas."""
    claim = read_claim(CLAIMS / "abs_f64_snan.json")
    with gzip.open(SILICON, "rt") as f:
        rows = [json.loads(x) for x in f if '"abs.f64 d, a;"' in x]
    (hw,) = [r for r in rows if r["inputs"] == claim.inputs]
    assert hw["hw_outputs"] == claim.got
    t = triage(claim)
    assert t.verdict == "not the compiler" and t.observed[0].value == 0x7FF0000000000001


def test_not_the_compiler_gpu_vector_is_one_eval_batch_check_passes():
    """The vector the GPU steps write holds the ISA's outputs (checked again by
    `eval --batch --check`) and replays the claim's inputs."""
    t = _triage("neg_s16_setp.toml")
    steps = rendering.gpu_steps(t)
    assert any("scripts/gpu_replay.py claim.jsonl" in s for s in steps)
    vector = json.loads(steps[1])
    assert vector["outputs"]["p"] is True and vector["inputs"]["a"] == "0x8000"
    r = CliRunner().invoke(main, ["eval", "--batch", "-", "--check"], input=steps[1] + "\n")
    assert r.exit_code == 0, r.output


def test_refuted_nsz_rests_on_the_flag_and_without_it_is_confirmed(tmp_path):
    """min.f32 refines `fcmp fast olt` + `select fast` (nsz), and not the same IR without
    flags: at a = -0.0, b = +0.0 the select gives b (plain Python: -0.0 < 0.0 is false)
    where min.f32 gives -0.0."""
    t = _triage("fast_min_nsz.toml")
    assert any(r.startswith("fast:") and "nsz" in r for r in t.readings)
    assert any(r.startswith("Spec notes 10") for r in t.readings)
    ir = (HERE / "ptx" / "llvm" / "fast_min.ll").read_text().replace(" fast", "")
    (tmp_path / "plain.ll").write_text(ir)
    claim = (CLAIMS / "fast_min_nsz.toml").read_text()
    claim = claim.replace('file = "../ptx/llvm/fast_min.ll"', f'file = "{tmp_path / "plain.ll"}"')
    claim = claim.replace("../ptx/llvm/", f"{HERE / 'ptx' / 'llvm'}/")
    (tmp_path / "plain.toml").write_text(claim)
    plain = triage(read_claim(tmp_path / "plain.toml"))
    assert plain.verdict == "confirmed"
    r = plain.proof.verdict.refinement
    a, b = _f32(r.inputs["a"]), _f32(r.inputs["b"])
    assert struct.pack("<f", a if a < b else b) == r.ir_result.to_bytes(4, "little")


def _nearest_even(n: int, digits: int) -> int:
    """The integer n > 0 rounded to `digits` significant bits, ties to even."""
    drop = max(n.bit_length() - digits, 0)
    q, r = divmod(n, 1 << drop)
    half = (1 << drop) >> 1
    return (q + (r > half or (r == half and drop > 0 and q & 1))) << drop


def test_ir_alone_is_compiled_as_tv_does_and_the_double_rounding_found(tmp_path):
    """Without [ptx] the IR is compiled by llvmlite's LLVM 22: for sm_80 `uitofp i32 to
    bfloat` becomes cvt.rn.f32.u32 then cvt.rn.bf16.f32, which rounds twice (LangRef:
    once); for sm_90 it is one cvt.rn.bf16.u32, right."""
    pytest.importorskip("llvmlite")
    f = tmp_path / "bf16.toml"
    for mcpu, verdict in (("sm_90", "refuted"), ("sm_80", "confirmed")):
        f.write_text(f'[ir]\nfile = "{HERE}/ptx/llvm/miscompiles/known.ll"\n'
                     f'function = "u32_to_bf16"\n[options]\nmcpu = "{mcpu}"\n')
        t = triage(read_claim(f))
        assert t.verdict == verdict and t.claim.ptx.made == f"llvmlite's LLVM -O2 for {mcpu}"
    r = t.proof.verdict.refinement
    once, twice = (float(_nearest_even(n, 8)) for n in (  # a != 0: it rounds
        r.inputs["a"], _nearest_even(r.inputs["a"], 24)))
    bf16 = lambda x: struct.unpack("<I", struct.pack("<f", x))[0] >> 16  # noqa: E731 (exact)
    assert (r.ir_result, r.ptx_result) == (bf16(once), bf16(twice))
    assert "bf16.ptx: the claim's PTX (llvmlite's LLVM -O2 for sm_80)" in rendering.text(t)
    assert "cvt.rn.bf16.f32" in rendering.markdown(t)


RELU2 = """define <2 x i16> @relu(<2 x i16> %a, <2 x i16> %b) {
  %m = call <2 x i16> @llvm.smin.v2i16(<2 x i16> %a, <2 x i16> %b)
  %r = call <2 x i16> @llvm.smax.v2i16(<2 x i16> %m, <2 x i16> zeroinitializer)
  ret <2 x i16> %r
}
declare <2 x i16> @llvm.smin.v2i16(<2 x i16>, <2 x i16>)
declare <2 x i16> @llvm.smax.v2i16(<2 x i16>, <2 x i16>)
"""


def test_ir_alone_compiled_with_mattr_as_tv_does(tmp_path):
    """`[options] mattr` is llc's -mattr: LLVM 22.1 writes PTX 8.0's min.relu.s16x2 at
    sm_90 only with +ptx80; the lowering is right (docs/arith-families.md)."""
    pytest.importorskip("llvmlite")
    f = tmp_path / "relu.toml"
    f.write_text(f'[ir]\ntext = """{RELU2}"""\n[options]\nmcpu = "sm_90"\n'
                 'mattr = "+ptx80"\n')
    t = triage(read_claim(f))
    assert t.verdict == "refuted", rendering.text(t)
    assert t.claim.ptx.made == "llvmlite's LLVM -O2 -mattr=+ptx80 for sm_90"
    assert "\tmin.relu.s16x2 \t" in t.claim.ptx.text
    for options, message in (('mcpu = "sm_90"\nmattr = "+ptx99"',
                              '[options] mattr: "+ptx99" is not a target feature'),
                             ('mattr = "+ptx80"', "[options] mattr: is for IR compiled here")):
        ptx = "" if "ptx99" in options else '[ptx]\ntext = ".func f() { ret; }"\n'
        f.write_text(f'{ptx}[ir]\ntext = """{RELU2}"""\n[options]\n{options}\n')
        r = _cli(str(f))
        assert r.exit_code == 2, r.output
        (line,) = r.stderr.splitlines()
        assert line.startswith(f"error: {f}: {message}"), line


def _relu_lanes(a: int, b: int) -> int:
    """max(min(a, b), 0) on each signed 16-bit lane, lane 0 the low one (LangRef)."""
    def lane(x: int, i: int) -> int:
        x = (x >> 16 * i) & 0xFFFF
        return x - (x >> 15 << 16)
    return sum((max(min(lane(a, i), lane(b, i)), 0) & 0xFFFF) << 16 * i for i in (0, 1))


@pytest.mark.parametrize("a, b", [("%a", "b"), ("a", "relu_param_1"),
                                  ("relu_param_0", "%relu_param_1")])
def test_ir_claim_inputs_by_ir_or_ptx_names(tmp_path, a, b):
    """An IR argument's name stands for the PTX parameter it is passed in (IR parameter
    N is the Nth .param, as the refinement links them): the evaluator runs the PTX on
    it, and the eval line names the PTX parameter."""
    pytest.importorskip("llvmlite")
    x, y = 0x0007_0002, 0x0005_FFFF  # lanes (2, 7) and (-1, 5): relu(min) = (0, 5)
    f = tmp_path / "relu.toml"
    f.write_text(f'[ir]\ntext = """{RELU2}"""\n[options]\nmcpu = "sm_90"\n'
                 f'mattr = "+ptx80"\n[inputs]\n"{a}" = {x}\n"{b}" = "{y:#x}"\n'
                 '[reported]\ngot = { func_retval0 = "0x0" }\n')
    t = triage(read_claim(f))
    (o,) = t.observed
    assert o.value == _relu_lanes(x, y) == 0x0005_0000 != o.got
    assert t.verdict == "not the compiler"
    line = next(x for x in rendering.reproduce(t) if x.startswith("ptxsmt eval"))
    assert line.endswith(f" relu_param_0={x:#x} relu_param_1={y:#x}"), line


@pytest.mark.parametrize("inputs, message", [
    ('a = 1\nc = 2\n', '[inputs]: unknown input "c": relu reads relu_param_0, relu_param_1 '
                        "(the IR's arguments: %a is relu_param_0, %b is relu_param_1)"),
    ('"%a" = 1\nrelu_param_0 = 2\nb = 3\n',
     '[inputs] "relu_param_0": relu_param_0 is given twice (as "%a" too)'),
])
def test_ir_claim_input_errors_name_the_input_and_the_irs_arguments(tmp_path, inputs, message):
    pytest.importorskip("llvmlite")
    f = tmp_path / "relu.toml"
    f.write_text(f'[ir]\ntext = """{RELU2}"""\n[inputs]\n{inputs}')
    r = _cli(str(f))
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.splitlines()
    assert line == f"error: {f}: {message}"


def test_not_the_compiler_for_a_function_proved_right(tmp_path):
    """fast_min refines its IR, yet a GPU said +0.0 at (-0.0, +0.0): min.f32 gives -0.0 by
    the ISA, so it is not the compiler; the GPU steps replay the claim's inputs."""
    pytest.importorskip("llvmlite")
    claim = (CLAIMS / "fast_min_nsz.toml").read_text().replace("../ptx/", f"{HERE / 'ptx'}/")
    claim = claim.replace('got = { func_retval0 = "0x80000000" }',
                          'got = { func_retval0 = "0x00000000" }')
    (tmp_path / "hw.toml").write_text(claim)
    t = triage(read_claim(tmp_path / "hw.toml"))
    assert t.verdict == "not the compiler"
    steps = rendering.gpu_steps(t)
    assert any("gpu_function_replay.py generate" in s and "--pair" in s for s in steps)
    record = json.loads(steps[1])
    assert record["counterexample"]["inputs"] == {"f_param_0": "0x80000000",
                                                  "f_param_1": "0x00000000"}


def test_a_bounded_proof_says_its_bound(tmp_path):
    """Two functions with a loop, [options] unroll = 3: refuted only up to 3 iterations."""
    f = tmp_path / "loop.toml"
    f.write_text(f'[ptx]\nfile = "{HERE}/ptx/functions/loops_O2.ptx"\nfunction = "sum"\n'
                 f'[reference]\nfile = "{HERE}/ptx/functions/loops_O0.ptx"\n'
                 '[options]\nunroll = 3\n')
    t = triage(read_claim(f))
    assert (t.verdict, t.proof.verdict.verdict) == ("refuted", "bounded")
    assert rendering.summary(t) == "proved: the PTX and the reference agree for every input " \
        "on which each loop runs at most 3 times"


def test_unknown_names_what_ptxsmt_does_not_model():
    t = _triage("mul24_unknown.toml")
    assert "mul24" in t.reason
    assert t.proof.verdict.verdict == "unknown"


def test_an_unmodelled_snippet_instruction_is_unknown_not_a_bad_claim(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[ptx]\ntext = "mul24.lo.u32 d, a, b;"\n[inputs]\na = "1"\nb = "2"\n'
                 '[reported]\ngot = { d = "0x3" }\n')
    r = _cli(str(f))
    assert r.exit_code == 3, r.output
    assert r.stdout.startswith(f"{f}: unknown") and "mul24" in r.stdout


def _isa_claim(tmp_path, ptx: str, inputs: dict, got: dict):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"ptx": {"text": ptx}, "inputs": inputs,
                             "reported": {"got": got}}))
    return triage(read_claim(f))


FUSED = {"a": "0x3f800800", "b": "0x3f800800", "c": "0xbf801000"}  # 1+2^-12, 1+2^-12, -(1+2^-11)


def _exact_f32(x: Fraction) -> int:
    """The f32 nearest the exact rational `x` (a normal number here, exact in a double)."""
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def test_one_reported_output_the_isa_does_not_give_is_enough(tmp_path):
    """t is the ISA's (-32768 wraps to itself in 16 bits), p is not: not the compiler."""
    ptx = "neg.s16 t, a; setp.lt.s16 p, t, b;"
    assert reference.run(ptx, {"a": 0x8000, "b": 0}) == {"a": 0x8000, "b": 0, "t": 0x8000,
                                                         "p": True}
    for got, verdict in (({"t": "0x8000", "p": False}, "not the compiler"),
                         ({"p": False, "t": "0x8000"}, "not the compiler"),
                         ({"t": "0x8000", "p": True}, "refuted")):
        assert _isa_claim(tmp_path, ptx, {"a": "0x8000", "b": "0"}, got).verdict == verdict


def test_an_open_value_allows_each_of_its_values_and_no_other(tmp_path):
    """mul.f32 + add.f32 may be one fma (Spec notes 13): by exact rational arithmetic the
    fused result is 2^-24 and the unfused one 0; both are the ISA's, 1.0 is not."""
    a = b = Fraction(1) + Fraction(1, 2**12)
    c = -(Fraction(1) + Fraction(1, 2**11))
    fused = _exact_f32(a * b + c)
    unfused = _exact_f32(Fraction(_f32(_exact_f32(a * b))) + c)
    assert (fused, unfused) == (0x33800000, 0)
    ptx = "mul.f32 t, a, b; add.f32 d, t, c;"
    for bits, verdict in ((fused, "refuted"), (unfused, "refuted"),
                          (0x3F800000, "not the compiler")):
        t = _isa_claim(tmp_path, ptx, FUSED, {"d": f"{bits:#010x}"})
        assert t.verdict == verdict, bits
    assert any(r.startswith("Spec notes 13") for r in t.readings)


def test_an_open_nan_allows_any_nan_only(tmp_path):
    """min of two NaNs is "NaN" (Spec notes 10): any NaN, and only a NaN."""
    for bits, verdict in (("0x7fffffff", "refuted"), ("0xffc00001", "refuted"),
                          ("0x7f800000", "not the compiler"), ("0x00000000", "not the compiler")):
        x = int(bits, 16)
        is_nan = (x >> 23) & 0xFF == 0xFF and x & 0x7FFFFF != 0  # plain Python
        assert (verdict == "refuted") == is_nan
        t = _isa_claim(tmp_path, "min.f32 d, a, b;", {"a": "nan", "b": "0x7fa00000"},
                       {"d": bits})
        assert t.verdict == verdict, bits


def test_a_function_resting_on_an_unmodelled_instruction_is_unknown(tmp_path):
    claim = (CLAIMS / "mul24_unknown.toml").read_text()
    claim = claim[:claim.index("[reference]")] + '[inputs]\np = "3"\n' \
        '[reported]\ngot = { func_retval0 = "0x6" }\n'
    (tmp_path / "c.toml").write_text(claim)
    t = triage(read_claim(tmp_path / "c.toml"))
    assert t.verdict == "unknown" and "mul24" in t.reason


ABS_F32 = """
.version 7.0
.target sm_80
.address_size 64
.visible .func (.param .b32 func_retval0) f(.param .b32 p)
{
\t.reg .f32 %f<3>;
\tld.param.f32 %f1, [p];
\tabs.f32 %f2, %f1;
\tst.param.f32 [func_retval0+0], %f2;
\tret;
}
"""


def test_a_function_output_the_isa_leaves_open_is_unknown_against_the_isa(tmp_path):
    """abs.f32 of a NaN is an unspecified NaN (Spec notes 12); whether a function's open
    output allows the reported bits is not decided: unknown, never refuted."""
    t = _isa_claim(tmp_path, ABS_F32, {"p": "0x7fc00001"}, {"func_retval0": "0x7fffffff"})
    assert t.verdict == "unknown" and "open" in t.reason
    assert t.observed[0].fits is None


# Markdown: the verdict first, every section it needs, fences closed, eval lines that run

SECTIONS = {
    "confirmed": ["**What the prover said**", "**Reproduce:**"],
    "refuted": ["**Rests on**"],
    "not the compiler": ["**At the claim's inputs**", "**Reproduce:**", "**On a GPU**"],
    "unknown": ["**What the prover said**"],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_markdown_is_fit_to_paste(name):
    t = _triage(name)
    md = rendering.markdown(t)
    lines = md.splitlines()
    assert lines[0].startswith(f"### ptxsmt triage: **{t.verdict}**")
    positions = [md.index(s) for s in SECTIONS[t.verdict]]
    assert positions == sorted(positions)
    fences = [x for x in lines if re.fullmatch(r"`{3,}\w*", x)]
    assert len(fences) % 2 == 0
    assert md.count("<details>") == md.count("</details>") >= 1
    block = re.search(r"\*\*Reproduce:\*\*\n\n```bash\n(.*?)\n```", md, re.S)
    for line in block.group(1).splitlines() if block else []:
        if "--function" not in line or Path(shlex.split(line)[2]).exists():
            _eval_output(line)


def test_markdown_of_a_refuted_isa_claim_golden():
    """The whole section, but the time."""
    md = rendering.markdown(_triage("min_f32_signed_zero.toml"))
    body = md.rsplit("\n<sub>", 1)[0]
    assert body == """\
### ptxsmt triage: **refuted** — min.f32 of -0.0 and +0.0 returns -0.0

at the claim's inputs the ISA gives exactly the value reported wrong; whether a compiler \
should have written this PTX needs its source ([ir]) or other PTX ([reference]).

**At the claim's inputs** (the evaluator's values, by the ISA):

| output | by the ISA | reported | expected |
|---|---|---|---|
| `d` | `0x80000000 (-0.0)` | `0x80000000 (-0.0)` ✓ | `0x00000000 (0.0)` |

**Reproduce:**

```bash
ptxsmt eval 'min.f32 d, a, b;' a=-0.0 b=0.0
```

**Rests on** (docs/spec-notes.md, docs/llvm.md):

- Spec notes 10: min/max order -0.0 < +0.0; one NaN operand gives the other operand
- the reported value is compared bit for bit with the values the ISA allows (an open NaN \
allows any NaN)

<details><summary>PTX (inline)</summary>

```ptx
min.f32 d, a, b;
```

</details>
"""


def test_integer_inputs_are_bits_in_the_eval_line_too(tmp_path):
    """1065353216 is 1.0's bits: the eval line says 0x3f800000, not the float 1065353216."""
    t = _isa_claim(tmp_path, "min.f32 d, a, b;", {"a": 0x3F800000, "b": "2.0"},
                   {"d": 0x3F800000})
    assert t.verdict == "refuted"
    (line,) = rendering.reproduce(t)
    assert line == "ptxsmt eval 'min.f32 d, a, b;' a=0x3f800000 b=2.0"
    assert "out  d = 0x3f800000 (1.0)" in _eval_output(line)


def test_json_lines_carry_the_verdict_and_the_evidence():
    r = _cli(str(CLAIMS / "neg_s16_setp.toml"), "--json")
    assert r.exit_code == 0, r.output
    (row,) = [json.loads(x) for x in r.stdout.splitlines()]
    assert row["verdict"] == "not the compiler" and row["against"] == "isa"
    assert row["at_inputs"]["outputs"]["p"] == {"isa": True, "reported": False,
                                                "fits": False, "expected": True}
    assert row["reproduce"] == ["ptxsmt eval 'neg.s16 t, a; setp.lt.s16 p, t, b;' a=0x8000 b=0"]
    assert row["gpu"] and row["proof"] is None


# bad claim files: one line naming the file and the field, exit 2, no traceback

BAD = {
    "missing_ptx.toml": ('title = "x"\n', "[ptx]: missing"),
    "bad.toml": ('[ptx\ntext = "min.f32 d, a, b;"\n', "not TOML"),
    "bad.json": ('{"ptx": {"text": "min.f32 d, a, b;"}', "not JSON"),
    "field.toml": ('[ptx]\ntext = "min.f32 d, a, b;"\nfunctoin = "f"\n',
                   '[ptx] "functoin": unknown field'),
    "top.toml": ('ptxx = 1\n', '"ptxx": unknown field'),
    "both.toml": ('[ptx]\nfile = "a.ptx"\ntext = "x"\n', "[ptx]: give text"),
    "nofile.toml": ('[ptx]\nfile = "missing.ptx"\n[reference]\ntext = "mov.b32 d, 1;"\n',
                    "[ptx] file: cannot read"),
    "noinputs.toml": ('[ptx]\ntext = "min.f32 d, a, b;"\n', "[inputs]: missing"),
    "input.toml": ('[ptx]\ntext = "min.f32 d, a, b;"\n[inputs]\nz = "1"\n'
                   '[reported]\ngot = { d = "0x0" }\n', '[inputs]: unknown input "z"'),
    "output.toml": ('[ptx]\ntext = "min.f32 d, a, b;"\n[inputs]\na = "1"\nb = "2"\n'
                    '[reported]\ngot = { q = "0x0" }\n', '[reported] got "q": the PTX writes'),
    "value.toml": ('[ptx]\ntext = "min.f32 d, a, b;"\n[inputs]\na = "1"\nb = "2"\n'
                   '[reported]\ngot = { d = [1] }\n', '[reported] got "d": is a string'),
    "isasyntax.toml": ('[ptx]\ntext = "min.f32 d, a"\n[inputs]\na = "1"\n'
                       '[reported]\ngot = { d = "0x0" }\n', "[ptx]: line 1"),
    "syntax.toml": ('[ptx]\ntext = "min.f32 d, a"\n[reference]\ntext = "mov.b32 d, 1;"\n',
                    "[ptx]: line 1"),
    "function.toml": (f'[ptx]\nfile = "{HERE}/ptx/functions/opaque.ptx"\nfunction = "nope"\n'
                      f'[reference]\nfile = "{HERE}/ptx/functions/opaque.ptx"\n',
                      '[ptx]: no function "nope"'),
    "option.toml": ('[ptx]\ntext = "min.f32 d, a, b;"\n[options]\nnan = "loose"\n',
                    "[options] nan: is one of"),
    "claim.yaml": ("ptx: x\n", "a claim file is .toml or .json"),
    "mixed.toml": ('[ptx]\ntext = "min.f32 d, a, b;"\n[reference]\ntext = ".func f() '
                   '{ ret; }"\n', "[reference]: is a module and [ptx] a snippet"),
    "mcpu.toml": ('[ir]\ntext = "x"\n[options]\nmcpu = "sm_9000"\n', "[options] mcpu:"),
    "mattr.toml": ('[ir]\ntext = "x"\n[options]\nmattr = "ptx80"\n',
                   '[options] mattr: target feature "ptx80" is not like +ptx80'),
    "opt.toml": ('[ptx]\ntext = "x"\n[ir]\ntext = "x"\n[options]\nopt = 3\n',
                 "[options] opt: is for IR compiled here"),
    "two.toml": ('[ptx]\ntext = "x"\n[ir]\ntext = "x"\n[reference]\ntext = "x"\n',
                 "[reference]: give [ir] or [reference]"),
    "irsnippet.toml": ('[ptx]\ntext = "min.f32 d, a, b;"\n[ir]\ntext = "define void @f() '
                       '{ ret void }"\n', "[ptx]: against [ir] the PTX is a module"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_claim_file_is_one_line_and_exit_2(tmp_path, name):
    text, message = BAD[name]
    f = tmp_path / name
    f.write_text(text)
    r = _cli(str(f))
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"error: {f}: ") and message in line, line
    assert "Traceback" not in r.output


def test_an_unknown_ir_function_is_one_line(tmp_path):
    pytest.importorskip("llvmlite")
    f = tmp_path / "c.toml"
    f.write_text(f'[ir]\nfile = "{HERE}/ptx/llvm/fast_min.ll"\nfunction = "g"\n'
                 f'[ptx]\nfile = "{HERE}/ptx/llvm/fast_min_llc14_O2.ptx"\n')
    r = _cli(str(f))
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.splitlines()
    assert line == f"error: {f}: [ir]: no function @g (it defines @f)"


def _folder(tmp_path, names, bad=False) -> Path:
    d = tmp_path / "claims"
    d.mkdir()
    for n in names:
        shutil.copy(CLAIMS / n, d / n)
    if bad:
        (d / "broken.toml").write_text("[ptx\n")
    (d / "notes.txt").write_text("not a claim")
    return d


def test_batch_goes_on_past_a_bad_claim_and_exits_2(tmp_path):
    d = _folder(tmp_path, ["min_f32_signed_zero.toml", "mul24_unknown.toml"], bad=True)
    r = _cli(str(d))
    assert r.exit_code == 2, r.output
    heads = [x for x in r.stdout.splitlines() if x.startswith(str(d))]
    assert heads == [f"{d}/min_f32_signed_zero.toml: refuted -- min.f32 of -0.0 and +0.0 "
                     "returns -0.0",
                     f"{d}/mul24_unknown.toml: unknown -- shl.b32 x, 1 rewritten as "
                     "mul24.lo.u32 x, 2"]
    errors, summary = r.stderr.splitlines()
    assert errors.startswith(f"error: {d}/broken.toml: not TOML")
    assert summary == "triage: 3 claims: 1 refuted, 1 unknown, 1 not triaged (error above)"


def test_batch_exit_codes_summarise(tmp_path):
    d = _folder(tmp_path, ["min_f32_signed_zero.toml", "neg_s16_setp.toml"])
    assert _cli(str(d)).exit_code == 0
    shutil.copy(CLAIMS / "mul24_unknown.toml", d)
    assert _cli(str(d)).exit_code == 3


def test_batch_json_has_a_line_per_claim_errors_in_place(tmp_path):
    d = _folder(tmp_path, ["abs_f64_snan.json", "setp_not_ge.toml"], bad=True)
    r = _cli(str(d), "--json")
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [(Path(x["claim"]).name, x.get("verdict") or "error" in x) for x in rows] == [
        ("abs_f64_snan.json", "not the compiler"), ("broken.toml", True),
        ("setp_not_ge.toml", "confirmed")]


def test_batch_markdown_sections_are_separated(tmp_path):
    d = _folder(tmp_path, ["abs_f64_snan.json", "setp_not_ge.toml"])
    r = _cli(str(d), "--markdown")
    assert r.exit_code == 0
    assert r.stdout.count("### ptxsmt triage:") == 2 and "\n---\n" in r.stdout


def test_usage_errors(tmp_path):
    assert _cli().exit_code == 2
    r = _cli(str(CLAIMS / "abs_f64_snan.json"), "--json", "--markdown")
    assert r.exit_code == 2 and "not both" in r.stderr
    (tmp_path / "empty").mkdir()
    r = _cli(str(tmp_path / "empty"))
    assert r.exit_code == 2 and "no .toml or .json claim files" in r.stderr
