"""IR loops by bounded unrolling (`llvm/loops.py`): the unrolled terms against LLVM's own
JIT on inputs whose trip counts Python knows, a difference planted on the third
iteration found with --unroll 3 and not 2, and a loop of a constant trip count proved
whole."""

from __future__ import annotations

import random

import pytest
import z3

pytest.importorskip("llvmlite")

from llvm_host import run_jit  # noqa: E402

from ptxsmt.function import read_function  # noqa: E402
from ptxsmt.llvm import encode_function, read_ir  # noqa: E402
from ptxsmt.llvm.errors import Unsupported  # noqa: E402
from ptxsmt.llvm.module import compile_to_ptx  # noqa: E402
from ptxsmt.smt.queries.refinement import ir_refines  # noqa: E402

K = 5

# name -> (IR body over i32 %n, %a, %b; the iterations of its loops on (n, a, b))
LOOPS = {
    # a do-while loop; the sum's last value read after the loop through a phi
    "sum": ("""entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i32 [ %a, %entry ], [ %s2, %loop ]
  %m = mul i32 %i, %b
  %s1 = xor i32 %s, %m
  %s2 = add i32 %s1, 7
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, %n
  br i1 %c, label %loop, label %done
done:
  ret i32 %s2""", lambda n, a, b: max(n, 1)),
    # an early exit, and values of the loop read after it with no phi
    "first": ("""entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %x = mul i32 %i, %a
  %big = icmp ugt i32 %x, %b
  br i1 %big, label %out, label %latch
latch:
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, %n
  br i1 %c, label %loop, label %out
out:
  %r = add i32 %x, %i
  ret i32 %r""", lambda n, a, b: next((i + 1 for i in range(max(n, 1))
                                       if (i * a) % 2**32 > b), max(n, 1))),
    # two nested loops, the inner one with a diamond in its body
    "nested": ("""entry:
  %n3 = and i32 %n, 3
  br label %outer
outer:
  %i = phi i32 [ 0, %entry ], [ %i1, %next ]
  %s = phi i32 [ %a, %entry ], [ %t2, %next ]
  br label %inner
inner:
  %j = phi i32 [ 0, %outer ], [ %j1, %join ]
  %t = phi i32 [ %s, %outer ], [ %t2, %join ]
  %odd = and i32 %j, 1
  %c0 = icmp eq i32 %odd, 0
  br i1 %c0, label %even, label %join
even:
  %u = mul i32 %t, 5
  br label %join
join:
  %v = phi i32 [ %u, %even ], [ %t, %inner ]
  %w = xor i32 %i, %j
  %t2 = add i32 %v, %w
  %j1 = add i32 %j, 1
  %c1 = icmp ult i32 %j1, %b
  br i1 %c1, label %inner, label %next
next:
  %i1 = add i32 %i, 1
  %c2 = icmp ult i32 %i1, %n3
  br i1 %c2, label %outer, label %done
done:
  ret i32 %t2""", lambda n, a, b: max(max(n & 3, 1), max(b, 1))),
    # a float per iteration whose bits are seen in the loop and after it
    "fsum": ("""entry:
  %x = bitcast i32 %a to float
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi float [ %x, %entry ], [ %s2, %loop ]
  %acc = phi i32 [ %b, %entry ], [ %acc1, %loop ]
  %s1 = fmul float %s, 1.5
  %s2 = fadd float %s1, 1.0
  %bits = bitcast float %s2 to i32
  %acc1 = xor i32 %acc, %bits
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, %n
  br i1 %c, label %loop, label %done
done:
  %last = bitcast float %s2 to i32
  %r = add i32 %acc1, %last
  ret i32 %r""", lambda n, a, b: max(n, 1)),
}


def _ir(name: str, body: str) -> str:
    return f"define i32 @{name}(i32 %n, i32 %a, i32 %b) {{\n{body}\n}}\n"


def _rows(name: str) -> list[list[int]]:
    rng = random.Random(name)
    return [[n, rng.getrandbits(32) if rng.random() < 0.7 else rng.randint(0, 9),
             rng.randint(0, 2 * K) if name == "nested" else rng.getrandbits(32)]
            for n in range(2 * K + 1) for _ in range(3)]


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_unrolled_loops_agree_with_llvm(name):
    body, iterations = LOOPS[name]
    ir = _ir(name, body)
    enc = encode_function(read_ir(ir)[name], unroll=K)
    rows = _rows(name)
    results = run_jit(ir, {name: (32, [32, 32, 32], 0, rows)})[name]
    compared = beyond = 0
    for (n, a, b), observed in zip(rows, results, strict=True):
        sub = [(enc.params[k], z3.BitVecVal(v, 32)) for k, v in zip("nab", (n, a, b))]
        past = z3.simplify(z3.substitute(z3.Or(False, *[c for _, c in enc.bounded]), *sub))
        assert z3.is_true(past) == (iterations(n, a, b) > K), (name, n, a, b)
        if z3.is_true(past):
            beyond += 1
            continue
        assert z3.is_false(z3.simplify(z3.substitute(enc.ub, *sub)))
        got = z3.simplify(z3.substitute(enc.result[0].bits, *sub))
        if not z3.is_bv_value(got):  # a NaN's bits, chosen: LLVM's must be a choice
            agree = z3.Solver()
            agree.add(got == observed)
            assert agree.check() == z3.sat, (name, n, a, b)
            continue
        assert got.as_long() == observed, (name, n, a, b)
        compared += 1
    assert compared > 10 and beyond > 0


def _verdict(ir: str, ptx_ir: str, unroll: int):
    ptx = compile_to_ptx(ptx_ir, opt=0)
    return ir_refines(read_ir(ir)["f"], read_function(ptx, "f"), 60_000, unroll=unroll)


PLANTED = """entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i32 [ %a, %entry ], [ %s2, %loop ]
  %s1 = mul i32 %s, 3
  %s2 = add i32 %s1, %k
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, %n
  br i1 %c, label %loop, label %done
done:
  ret i32 %s2"""
SAME = "%k = add i32 %b, 0"
THIRD = "%t = icmp eq i32 %i, 2\n  %k = select i1 %t, i32 %a, i32 %b"  # differs on the 3rd


def _planted(k: str) -> str:
    return _ir("f", PLANTED.replace("%s1 = mul", f"{k}\n  %s1 = mul"))


def test_a_difference_on_the_third_iteration_needs_unroll_3():
    ir, bad = _planted(SAME), _planted(THIRD)
    two = _verdict(ir, bad, 2)
    assert (two.verdict, two.unroll) == ("bounded", 2), two
    assert "loops that run more than 2 times" in two.reason
    three = _verdict(ir, bad, 3)
    assert three.verdict == "different", three
    n, a, b = (three.inputs[x] for x in "nab")
    assert n >= 3 and a != b
    # LLVM's own JIT tells the two apart on those inputs, as the PTX's result says
    jit = run_jit(ir + bad.replace("@f(", "@g("), {f: (32, [32] * 3, 0, [[n, a, b]])
                                                  for f in "fg"})
    assert (jit["f"][0], jit["g"][0]) == (three.ir_result, three.ptx_result) != (0, 0)
    assert jit["f"][0] != jit["g"][0]
    same = _verdict(ir, ir, 3)
    assert (same.verdict, same.unroll) == ("bounded", 3)


def test_without_unroll_a_bounded_proof_is_unknown():
    r = _verdict(_planted(SAME), _planted(SAME), 0)
    assert r.verdict == "unknown"
    assert r.reason.startswith("refines up to 4 iterations of each loop (at %loop: br i1 %c")


def test_a_constant_trip_count_is_proved_whole():
    three = _ir("f", PLANTED.replace("%s1 = mul", "%k = add i32 %b, 0\n  %s1 = mul")
                .replace("icmp ult i32 %i1, %n", "icmp ult i32 %i1, 3"))
    r = _verdict(three, three, 0)  # the PTX keeps the loop: both sides unrolled 4 times
    assert (r.verdict, r.unroll) == ("refines", 0), r
    off = three.replace("%s2 = add i32 %s1, %k", "%s2 = add i32 %s1, 1")
    assert _verdict(three, off, 0).verdict == "different"


def test_a_cycle_entered_at_two_blocks_is_refused():
    ir = _ir("f", """entry:
  %c0 = icmp ult i32 %n, 5
  br i1 %c0, label %l, label %m
l:
  %i = phi i32 [ 0, %entry ], [ %j, %m ]
  %k = add i32 %i, 1
  br label %m
m:
  %j = phi i32 [ %n, %entry ], [ %k, %l ]
  %c = icmp ult i32 %j, 100
  br i1 %c, label %l, label %e
e:
  ret i32 %j""")
    with pytest.raises(Unsupported, match="irreducible"):
        encode_function(read_ir(ir)["f"], unroll=4)


def test_a_value_of_the_last_iteration_has_the_bits_it_had_in_the_loop():
    """A NaN's bits are chosen once per value: an iteration's sum seen in the loop and
    the same sum seen after it (the iteration that left) are the same bits."""
    ir = _ir("f", """entry:
  %x = bitcast i32 %a to float
  %y = bitcast i32 %b to float
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi float [ %x, %entry ], [ %s1, %loop ]
  %s1 = fadd float %s, %y
  %bits = bitcast float %s1 to i32
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, %n
  br i1 %c, label %loop, label %done
done:
  %last = bitcast float %s1 to i32
  %r = xor i32 %last, %bits
  ret i32 %r""")
    enc = encode_function(read_ir(ir)["f"], unroll=3)
    assert enc.choices  # NaN bits chosen
    s = z3.Solver()
    s.add(z3.Not(z3.Or(False, *[c for _, c in enc.bounded])), enc.result[0].bits != 0)
    assert s.check() == z3.unsat


def test_tv_and_equiv_say_refines_up_to_k_iterations(tmp_path):
    from click.testing import CliRunner

    from ptxsmt.cli import main
    ll, ptx = tmp_path / "f.ll", tmp_path / "f.ptx"
    ll.write_text(_planted(SAME))
    ptx.write_text(compile_to_ptx(_planted(SAME), opt=0))
    r = CliRunner().invoke(main, ["tv", str(ll), "--unroll", "3"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("@f: refines up to 3 iterations (loops that run more than 3 "
                               "times (at %loop: br i1 %c, label %loop, label %done, line ")
    assert r.stdout.endswith("are not compared)\n1 bounded\n")
    r = CliRunner().invoke(main, ["equiv", str(ll), str(ptx), "--unroll", "3", "--json"])
    assert r.exit_code == 0 and '"verdict": "bounded"' in r.stdout and '"unroll": 3' in r.stdout
    r = CliRunner().invoke(main, ["equiv", str(ll), str(ptx)])
    assert r.exit_code == 3 and "refines up to 4 iterations of each loop" in r.stdout
