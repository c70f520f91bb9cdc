"""Mutation audit: does the test suite notice a wrong semantics or a wrong prover?

Each mutant is a small source edit (exact old text -> new text) that a plausible
mistake would make. For each one the tree is copied to a temporary directory,
the edit applied there (never in the checkout), and pytest run on the copy; a
mutant is killed when pytest fails. The unmutated tree must pass first (else
exit 2). Prints a table and exits 1 if any mutant survives or no longer applies
(its old text is gone: update the table).

    python scripts/mutants.py                      # every mutant, whole suite (-x -q)
    python scripts/mutants.py -k vset --jobs 2     # mutants whose name contains "vset"
    python scripts/mutants.py -- tests/test_every_variant.py -x -q   # a pytest selection
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = shutil.ignore_patterns(".git", ".hypothesis", ".pytest_cache", "__pycache__", "build",
                              "*.egg-info", ".ruff_cache")


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    edits: tuple[tuple[str, str], ...]  # (old, new); each old must occur exactly once
    what: str


def m(name: str, file: str, old: str, new: str, what: str) -> Mutant:
    return Mutant(name, file, ((old, new),), what)


MUTANTS = [
    # the prover
    m("equiv-and", "ptxsmt/smt/solve.py",
      "differ = z3.Or([el.outputs[o] != er.outputs[o] for o in outs])",
      "differ = z3.And([el.outputs[o] != er.outputs[o] for o in outs])",
      "outputs of an equivalence query combined with And, not Or"),
    m("equiv-first-output-only", "ptxsmt/smt/solve.py",
      "differ = z3.Or([el.outputs[o] != er.outputs[o] for o in outs])",
      "differ = z3.Or([el.outputs[o] != er.outputs[o] for o in outs[:1]])",
      "only the first compared output is compared"),
    m("unknown-is-equal", "ptxsmt/smt/solve.py",
      "    if result == z3.unsat:\n        return Verdict(\"equivalent\"",
      "    if result != z3.sat:\n        return Verdict(\"equivalent\"",
      "a solver timeout reported as equivalent"),
    m("witness-any", "ptxsmt/proofs.py",
      "found = input_classes(cex.inputs, cex.types)",
      "return True",
      "every counterexample has the expected witness shape"),
    m("class-sign-swapped", "ptxsmt/smt/classes.py",
      'sign = z3.fpIsNegative(f) if cls[0] == "-" else z3.fpIsPositive(f)',
      'sign = z3.fpIsPositive(f) if cls[0] == "-" else z3.fpIsNegative(f)',
      "operand classes: + and - swapped"),
    # comparison.py / prims.py
    m("q-without-not", "ptxsmt/sem/comparison.py",
      '"q": bool_op(v.boolop, z3.Not(t), c)', '"q": bool_op(v.boolop, t, c)',
      "setp q = BoolOp(t, c) instead of BoolOp(!t, c)"),
    m("q-is-not-p", "ptxsmt/sem/comparison.py",
      '"q": bool_op(v.boolop, z3.Not(t), c)', '"q": z3.Not(bool_op(v.boolop, t, c))',
      "setp q = !p also with a BoolOp"),
    m("boolop-and-or-swapped", "ptxsmt/sem/prims.py",
      "{BoolOp.AND: z3.And, BoolOp.OR: z3.Or,", "{BoolOp.AND: z3.Or, BoolOp.OR: z3.And,",
      "BoolOp .and and .or swapped"),
    m("boolop-xor-is-or", "ptxsmt/sem/prims.py",
      "BoolOp.XOR: z3.Xor}", "BoolOp.XOR: z3.Or}", "BoolOp .xor computed as or"),
    m("negated-c-ignored", "ptxsmt/sem/families.py",
      "c = z3.Not(c)", "c = c", "!c read as c"),
    m("unordered-is-ordered", "ptxsmt/sem/prims.py",
      "return z3.Or(either_nan, rel) if cmp.unordered",
      "return z3.And(z3.Not(either_nan), rel) if cmp.unordered",
      "unordered compares false on NaN"),
    m("unsigned-lt-signed", "ptxsmt/sem/prims.py",
      '"lt": z3.ULT,', '"lt": lambda a, b: a < b,', "lt/lo on unsigned compared signed"),
    m("unsigned-gt-signed", "ptxsmt/sem/prims.py",
      '"gt": z3.UGT,', '"gt": lambda a, b: a > b,', "gt/hi on unsigned compared signed"),
    m("flush-dropped", "ptxsmt/sem/prims.py",
      "return z3.If(z3.fpIsSubnormal(x), zero, x)", "return x", ".ftz flushes nothing"),
    m("set-true-is-1", "ptxsmt/sem/prims.py",
      "return z3.BitVecVal(-1, t.lane_width)", "return z3.BitVecVal(1, t.lane_width)",
      "set's integer true value 1 instead of all ones"),
    m("selp-swapped", "ptxsmt/sem/comparison.py",
      'return {"d": z3.If(c, a, b)}', 'return {"d": z3.If(c, b, a)}', "selp picks b on true"),
    m("slct-nan-selects-a", "ptxsmt/sem/comparison.py",
      "z3.If(z3.fpGEQ(x, z3.fpPlusZero(x.sort())), a, b)",
      "z3.If(z3.Not(z3.fpLT(x, z3.fpPlusZero(x.sort()))), a, b)",
      "slct: a NaN selector selects a"),
    m("slct-minus-zero-selects-b", "ptxsmt/sem/comparison.py",
      "z3.If(z3.fpGEQ(x, z3.fpPlusZero(x.sort())), a, b)",
      "z3.If(z3.fpGT(x, z3.fpPlusZero(x.sort())), a, b)", "slct: c = ±0 selects b"),
    m("slct-ftz-ignored", "ptxsmt/sem/comparison.py",
      "x = float_view(c, v.ctype.fmt, ftz(v, v.ctype, opts))",
      "x = float_view(c, v.ctype.fmt, False)",
      "slct.ftz does not flush c"),
    m("slct-int-unsigned", "ptxsmt/sem/comparison.py",
      'return {"d": z3.If(c >= 0, a, b)}', 'return {"d": z3.If(z3.UGE(c, 0), a, b)}',
      "slct on s32 compares unsigned"),
    m("sm1x-flush-dropped", "ptxsmt/sem/comparison.py",
      'return v.ftz or (opts.sm_1x and t.name == "f32")', "return v.ftz",
      "sm_1x does not flush f32"),
    m("sm1x-flush-f64", "ptxsmt/sem/comparison.py",
      'return v.ftz or (opts.sm_1x and t.name == "f32")',
      "return v.ftz or (opts.sm_1x and t.is_float)", "sm_1x flushes f64 too"),
    m("sm1x-always", "ptxsmt/sem/options.py",
      "return self.target < 20", "return self.target < 100", "every target treated as sm_1x"),
    m("setp-ftz-ignored", "ptxsmt/sem/comparison.py",
      "t = compare(v.cmp, a, b, v.type, ftz(v, v.type, opts))",
      "t = compare(v.cmp, a, b, v.type, False)",
      "setp.ftz does not flush"),
    # half.py
    m("half-set-dtype-from-stype", "ptxsmt/sem/half.py",
      "true_val = true_value(v.dtype) if v.dtype.is_float else",
      "true_val = true_value(v.stype.lane) if v.stype.is_float else",
      "half set's true value chosen by the source type (the pseudocode's typo)"),
    m("half-set-float-dest-all-ones", "ptxsmt/sem/half.py",
      "true_val = true_value(v.dtype) if v.dtype.is_float else z3.BitVecVal(-1, width)",
      "true_val = z3.BitVecVal(-1, width)", "half set writes all ones to float destinations"),
    m("half-q-lane-0", "ptxsmt/sem/half.py",
      'out["q"] = bool_op(v.boolop, t[1], c)', 'out["q"] = bool_op(v.boolop, t[0], c)',
      "packed setp q from lane 0"),
    m("half-ftz-ignored", "ptxsmt/sem/half.py",
      "compare(v.cmp, x, y, lane, v.ftz)", "compare(v.cmp, x, y, lane, False)",
      "half .ftz does not flush"),
    # video.py
    m("vset-merge-b-by-default", "ptxsmt/sem/video.py",
      'vc = lanes(c if opts.vset_merge == "c" else b, width)',
      'vc = lanes(b if opts.vset_merge == "c" else c, width)',
      "vset merge reads b where it should read c (and c for b)"),
    m("vset-merge-option-ignored", "ptxsmt/sem/video.py",
      'vc = lanes(c if opts.vset_merge == "c" else b, width)', "vc = lanes(c, width)",
      "vset_merge='b' has no effect"),
    m("vset-lane-order-reversed", "ptxsmt/sem/video.py",
      "for k in sel.by_lane]", "for k in reversed(sel.by_lane)]",
      "vset selectors feed the lanes in reverse"),
    m("vset-add-unmasked", "ptxsmt/sem/video.py",
      "for i in mask.lanes]", "for i in range(n)]", "vset .add counts unmasked lanes"),
    m("vset-add-without-c", "ptxsmt/sem/video.py",
      'return {"d": c + sum(counted[1:], counted[0])}',
      'return {"d": sum(counted[1:], counted[0])}', "vset .add drops c"),
    m("vset-unsigned-only", "ptxsmt/sem/video.py",
      "ext = z3.SignExt if signed else z3.ZeroExt", "ext = z3.ZeroExt",
      "vset s32 lanes zero-extended"),
    m("vset-merge-mask-inverted", "ptxsmt/sem/video.py",
      "if i in mask.lanes else vc[i]", "if i not in mask.lanes else vc[i]",
      "vset merge writes the unmasked lanes"),
    # program.py and glue
    m("guard-ignored", "ptxsmt/sem/prims.py",
      "return new if holds is None else z3.If(holds, new, old())",
      "return new", "a false guard still writes"),
    m("guard-inverted", "ptxsmt/sem/prims.py",
      "return z3.Not(p) if negated else p",
      "return p if negated else z3.Not(p)", "@p and @!p swapped"),
    m("glue-xor-is-or", "ptxsmt/sem/glue.py",
      '_LOGICAL = {"and": z3.And, "or": z3.Or, "xor": z3.Xor}',
      '_LOGICAL = {"and": z3.And, "or": z3.Or, "xor": z3.Or}', "xor.pred computed as or"),
    # the fast (numpy) path: the code generator
    Mutant("fast-ult-signed", "ptxsmt/fast/codegen.py", (
        ('_U_CMP = {z3.Z3_OP_ULT: "<", ', "_U_CMP = {"),
        ('_S_CMP = {z3.Z3_OP_SLT: "<", ', '_S_CMP = {z3.Z3_OP_SLT: "<", z3.Z3_OP_ULT: "<", ')),
        "fast path: ULT computed as SLT"),
    m("fast-fp-lt-le", "ptxsmt/fast/codegen.py",
      'z3.Z3_OP_FPA_LT: "<",', 'z3.Z3_OP_FPA_LT: "<=",', "fast path: fp.lt computed as <="),
    m("fast-fp-le-lt", "ptxsmt/fast/codegen.py",
      'z3.Z3_OP_FPA_LE: "<=",', 'z3.Z3_OP_FPA_LE: "<",', "fast path: fp.leq computed as <"),
    m("fast-ite-swapped", "ptxsmt/fast/codegen.py",
      'return self.emit(f"where({c.expr}, {x.expr}, {y.expr})", x.kind,',
      'return self.emit(f"where({c.expr}, {y.expr}, {x.expr})", x.kind,',
      "fast path: if-then-else branches swapped"),
    m("fast-ite-constant-dropped", "ptxsmt/fast/codegen.py",
      'times = "" if one == 1 else f" * {one}"', 'times = ""',
      "fast path: c ? K : 0 computed as c ? 1 : 0"),
    m("fast-negation-wrong", "ptxsmt/fast/codegen.py",
      '_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<",',
      '_NEGATED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=",',
      "fast path: not (x < y) computed as x > y"),
    m("fast-signed-as-unsigned", "ptxsmt/fast/codegen.py",
      'signed = [f"i{x.width}({v.expr})" for v in a]', "signed = [v.expr for v in a]",
      "fast path: signed compares on raw bits"),
    m("fast-sign-ext-is-zero-ext", "ptxsmt/fast/codegen.py",
      "{wide} | {high}, {wide})", "{wide}, {wide})", "fast path: sign extension fills zeros"),
    m("fast-sum-cut-short", "ptxsmt/fast/codegen.py",
      'return self.emit(f"({expr}) & {_mask(w)}", "bv", w)',
      'return self.emit(f"({expr}) & {_mask(w - 1)}", "bv", w)',
      "fast path: a sum cut to one bit too few"),
    m("fast-xor-is-or", "ptxsmt/fast/codegen.py",
      'z3.Z3_OP_XOR: "^"}', 'z3.Z3_OP_XOR: "|"}', "fast path: Bool xor computed as or"),
    m("fast-negative-nan", "ptxsmt/fast/codegen.py",
      '"negative": f"({b} ^ {sign}) <= {inf}",', '"negative": f"{b} >= {sign}",',
      "fast path: a NaN with its sign bit set counts as negative"),
    m("fast-extract-off-by-one", "ptxsmt/fast/codegen.py",
      'expr = f"({x.expr} >> {lo})" if lo else x.expr',
      'expr = f"({x.expr} >> {lo - 1})" if lo else x.expr',
      "fast path: an extract reads one bit low"),
    m("fast-lane-flags-reversed", "ptxsmt/fast/codegen.py",
      "[f[1] for f in flags] == list(range(len(parts)))[::-1]",
      "sorted(f[1] for f in flags) == list(range(len(parts)))",
      "fast path: a vset's lane flags joined in any order"),
    m("fast-part-wrong-lane", "ptxsmt/fast/program.py",
      "return a.view(word)[lo // w:: a.itemsize * 8 // w]",
      "return a.view(word)[(lo // w) ^ 1:: a.itemsize * 8 // w]",
      "fast path: a byte view reads the neighbouring lane"),
    m("fast-lanes-shifted-wrong", "ptxsmt/fast/program.py",
      "np.stack([word(a >> (i * w)) for i in range(count)], axis=-1)",
      "np.stack([word(a >> (i * w)) for i in range(count)][::-1], axis=-1)",
      "fast path: lanes of a strided or fixed operand, highest first"),
    m("fast-bf16-view-unshifted", "ptxsmt/fast/program.py",
      '"bf16": lambda x: (np.uint32(x) << 16).view(np.float32),',
      '"bf16": lambda x: np.uint32(x).view(np.float32),',
      "fast path: bf16 bits read as the low half of an f32"),
    # whole functions (ptxsmt/function, smt/functions): tests/test_function*.py kill them
    m("fn-signed-load-zero-extends", "ptxsmt/function/instructions.py",
      "ex.write(dest, resize(value, ex.width(dest, g), t.kind is Kind.SIGNED), g)",
      "ex.write(dest, resize(value, ex.width(dest, g), False), g)",
      "ld.s8 into a wider register zero-extends"),
    m("fn-param-offset-ignored", "ptxsmt/function/effects.py",
      "return _bytes(whole, offset, t.width)", "return _bytes(whole, 0, t.width)",
      "ld.param [p+4] reads [p]"),
    m("fn-shared-not-compared", "ptxsmt/function/memory.py",
      'OBSERVABLE = ("global", "shared")', 'OBSERVABLE = ("global",)',
      "shared memory left out of the compared outputs"),
    m("fn-guard-opposite", "ptxsmt/function/effects.py",
      "return guarded(self.guard(g), new, lambda: old)",
      "return guarded(self.guard(g), old, lambda: new)",
      "a guarded instruction runs under the opposite guard"),
    m("fn-guard-any-type", "ptxsmt/function/effects.py",
      "if self.declared.get(g.guard.register) is not PRED:",
      "if g.guard.register not in self.declared:",
      "a guard register of the wrong type accepted"),
    m("fn-jump-table-past-defined", "ptxsmt/function/encode.py",
      "        ex.enc.undefined.append(Undefined(past,",
      "        0 and ex.enc.undefined.append(Undefined(past,",
      "a brx.idx index past its table taken as falling through"),
    m("fn-free-difference-is-different", "ptxsmt/smt/functions.py",
      "return check(_solver(timeout), *pins, *same, defined) == z3.unsat",
      "return True",
      "a difference through uninterpreted results or open NaNs reported as different"),
    m("fn-congruence-ignores-immediates", "ptxsmt/function/instructions.py",
      "                parts.append(e)\n", "                parts.append(\"_\")\n",
      "uninterpreted instructions keyed without their immediates"),
    m("fn-param-bytes-big-endian", "ptxsmt/function/effects.py",
      "return z3.Extract(8 * offset + width - 1, 8 * offset, whole)",
      "return z3.Extract(whole.size() - 1 - 8 * offset, whole.size() - 8 * offset - width, "
      "whole)",
      "parameter bytes read big-endian"),
    m("fn-generic-always-global", "ptxsmt/function/effects.py",
      "windows = memory.windows_in(at)", "windows = []",
      "a generic address from cvta.shared reaches global memory"),
    m("fn-local-compared", "ptxsmt/function/memory.py",
      'OBSERVABLE = ("global", "shared")', 'OBSERVABLE = ("global", "shared", "local")',
      "local memory compared although it dies with the thread"),
    m("fn-cvta-shared-no-base", "ptxsmt/function/instructions.py",
      "        value = value + ex.window(space)\n", "        ex.window(space)\n",
      "cvta.shared leaves the shared address as the generic one"),
    m("fn-call-arguments-reversed", "ptxsmt/function/encode.py",
      "zip(arguments, callee.params)", "zip(reversed(arguments), callee.params)",
      "a call passes its arguments in the wrong order"),
    m("fn-call-result-dropped", "ptxsmt/function/encode.py",
      "{**ex.state.returns, **returned}", "ex.state.returns",
      "a call's result never reaches the caller"),
    m("fn-recursion-allowed", "ptxsmt/function/encode.py",
      "    if name in ex.stack:\n", "    if name in ex.stack and False:\n",
      "recursion followed (forever) instead of refused"),
    m("fn-unroll-past-limit-dropped", "ptxsmt/function/encode.py",
      "        ex.enc.bounded.append(Undefined(", "        0 and ex.enc.bounded.append(Undefined(",
      "paths that run a loop more than K times vanish instead of being excluded"),
    m("fn-bounded-reported-equivalent", "ptxsmt/smt/functions.py",
      "        if beyond:\n", "        if False:\n",
      "equivalence up to K iterations reported as plain equivalence"),
    m("fn-unroll-continue-not-back", "ptxsmt/function/unroll.py",
      "            elif t == head:  # a branch back",
      "            elif t == head and item is last:",
      "a branch back to a loop's head other than the last one stays in its copy"),
    m("fn-merge-keeps-written-return", "ptxsmt/function/state.py",
      "                         lambda k: z3.BitVec(f\"{k} unwritten\", widths[k])))",
      "                         ))",
      "a return value one path leaves unwritten takes the other paths' value"),
    m("fn-read-only-not-assumed", "ptxsmt/function/encode.py",
      "    _read_only(ex.enc)\n", "",
      "ld.global.nc taken to read memory the function also writes"),
    m("fn-misaligned-allowed", "ptxsmt/function/effects.py",
      "        if t.width > 8:\n            size = t.width // 8",
      "        if False:\n            size = 0",
      "misaligned (and wrapping) accesses allowed"),
    m("fn-special-ranges-dropped", "ptxsmt/function/effects.py",
      "            if new and key in SPECIAL_RANGES:", "            if False:",
      "special registers take any value (tid.x = 0x7fffffff)"),
    m("fn-initializer-ignored", "ptxsmt/function/effects.py",
      'known = None if mv.space == "global" and (mv.linked or mv.written) else mv.initial',
      "known = None",
      "a module variable's initializer ignored (a switch's lookup table is free memory)"),
    m("fn-visible-global-initialised", "ptxsmt/function/effects.py",
      'known = None if mv.space == "global" and (mv.linked or mv.written) else mv.initial',
      "known = mv.initial",
      "a .visible .global taken to hold its initializer (the host may have written it)"),
    m("fn-initializer-big-endian", "ptxsmt/isa/module.py",
      '(bits % (1 << t.width)).to_bytes(width, "little")',
      '(bits % (1 << t.width)).to_bytes(width, "big")',
      "an initializer's elements laid out big-endian"),
    m("fn-written-global-initialised", "ptxsmt/function/effects.py",
      "(mv.linked or mv.written)", "mv.linked",
      "a private .global the module writes taken to hold its initializer at every call"),
    m("fn-written-through-address-missed", "ptxsmt/isa/module.py",
      "                new = origins(g.operands[at]) | set().union(",
      "                new = set().union(",
      "a store through an address computed from a variable not seen as writing it"),
    m("fn-const-window-is-global", "ptxsmt/function/memory.py",
      'WINDOWED = ("shared", "local", "const")', 'WINDOWED = ("shared", "local")',
      "cvta.const taken as a global address (a __constant__ array read from free memory)"),
    m("fn-sizes-whole-return-compared", "ptxsmt/smt/functions.py",
      "    w = min(a.size(), b.size())\n    return tuple(x if x.size() == w",
      "    w = min(a.size(), b.size())\n    return tuple(x if True",
      "returns of different sizes compared as wholes (a sort error, or bytes one side lacks)"),
    m("fn-sizes-replay-unmasked", "ptxsmt/smt/functions.py",
      "            return (a - b) % (1 << min(ta.width, tb.width)) != 0",
      "            return a != b",
      "a counterexample's returns of different sizes compared on all the wider one's bytes"),
    m("fn-default-unroll-bounded", "ptxsmt/smt/functions.py",
      "        if beyond and not asked:", "        if False:",
      "agreement up to the default 4 iterations reported as 'equivalent up to 4' (exit 0)"),
    m("fn-entry-shared-compared", "ptxsmt/function/memory.py",
      'if s != "shared" or "func" in kinds', "if True",
      "an .entry's shared memory compared at its exit"),
    m("fn-atomic-returns-new", "ptxsmt/function/instructions.py",
      "ex.write(operands[0], resize(old, ex.width(operands[0], g), False), g)",
      "ex.write(operands[0], resize(new, ex.width(operands[0], g), False), g)",
      "atom writes the new value to d, not the old one"),
    m("fn-atomic-min-unsigned", "ptxsmt/function/instructions.py",
      "z3.If((old < b) if signed else z3.ULT(old, b), old, b)",
      "z3.If(z3.ULT(old, b), old, b)", "atom.min.s32 compares unsigned"),
    m("fn-atomic-cas-swapped", "ptxsmt/function/instructions.py",
      "z3.If(old == b, c, old)", "z3.If(old == b, old, c)",
      "atom.cas stores c where the old value differs from b"),
    m("fn-param-address-offset-ignored", "ptxsmt/function/instructions.py",
      'value = ex.parameter_at(ex.value(base, TYPES["u64"], g) + at, t, g)',
      'value = ex.parameter_at(ex.value(base, TYPES["u64"], g), t, g)',
      "ld.param [%rd+1] through a parameter's address reads byte 0"),
    m("fn-param-addresses-alias", "ptxsmt/function/effects.py",
      "k = [p.name for p in self.fn.params].index(name)", "k = 0",
      "every parameter's address is the first one's"),
    # the rounding families (float-arith, convert, bits) and arith's additions
    m("round-rm-rp-swapped", "ptxsmt/sem/sorts.py",
      '"rm": z3.RTN, "rp": z3.RTP', '"rm": z3.RTP, "rp": z3.RTN', ".rm and .rp swapped"),
    m("ftz-inputs-kept", "ptxsmt/sem/floatarith.py",
      "xs = [flush_bits(x, fmt) if flush else x for x in inputs]", "xs = list(inputs)",
      ".ftz flushes results but not inputs"),
    m("ftz-result-kept", "ptxsmt/sem/floatarith.py",
      "out = flush_bits(out, fmt) if flush else out", "out = out",
      ".ftz flushes inputs but not results"),
    m("sat-nan-kept", "ptxsmt/sem/floatarith.py",
      "low = z3.Or(z3.fpIsNaN(x), z3.fpLEQ(x, z3.fpPlusZero(x.sort())))",
      "low = z3.fpLEQ(x, z3.fpPlusZero(x.sort()))", ".sat lets a NaN through"),
    m("sat-minus-zero-kept", "ptxsmt/sem/floatarith.py",
      "low = z3.Or(z3.fpIsNaN(x), z3.fpLEQ(x, z3.fpPlusZero(x.sort())))",
      "low = z3.Or(z3.fpIsNaN(x), z3.fpLT(x, z3.fpPlusZero(x.sort())))",
      ".sat keeps -0.0 (ptxas folds it to +0.0)"),
    m("fma-rounds-twice", "ptxsmt/sem/floatarith.py",
      "return rounded(v, fmt, flush, z3.fpFMA, a, b, c)",
      "return rounded(v, fmt, flush, lambda rm, x, y, z: z3.fpAdd(rm, z3.fpMul(rm, x, y), z),"
      " a, b, c)", "fma as a rounded mul then a rounded add"),
    m("rcp-ignores-rounding", "ptxsmt/sem/floatarith.py",
      "lambda rm, x: z3.fpDiv(rm, as_float(_one(fmt), fmt), x)",
      "lambda rm, x: z3.fpDiv(z3.RNE(), as_float(_one(fmt), fmt), x)", "rcp.rz rounds to nearest"),
    m("copysign-from-b", "ptxsmt/sem/floatarith.py",
      "sign, _, _ = fields(a, fmt)", "sign, _, _ = fields(b, fmt)", "copysign takes b's sign"),
    m("cvt-nan-not-zero", "ptxsmt/sem/convert.py",
      "return z3.If(z3.fpIsNaN(x), z3.BitVecVal(0, n),", "return z3.If(False, z3.BitVecVal(0, n),",
      "float-to-integer cvt of NaN is not 0"),
    m("cvt-no-clamp-high", "ptxsmt/sem/convert.py",
      "z3.If(above, z3.BitVecVal(hi, n), exact)", "exact",
      "float-to-integer cvt does not clamp at the top"),
    m("cvt-sm1x-no-flush", "ptxsmt/sem/convert.py",
      'return t.name == "f32" and (v.ftz or opts.sm_1x)', 'return t.name == "f32" and v.ftz',
      "cvt does not flush f32 on sm_1x"),
    m("cvt-int-rounding-is-rz", "ptxsmt/sem/convert.py",
      "x = z3.fpRoundToIntegral(rm, x) if v.rnd",
      "x = z3.fpRoundToIntegral(z3.RTZ(), x) if v.rnd", "cvt.rni.f32.f32 truncates"),
    m("cvt-signed-source-unsigned", "ptxsmt/sem/convert.py",
      "(z3.fpSignedToFP if src.kind is Kind.SIGNED else z3.fpUnsignedToFP)",
      "(z3.fpUnsignedToFP if src.kind is Kind.SIGNED else z3.fpSignedToFP)",
      "cvt from .s32 reads the bits unsigned"),
    m("bfe-sign-bit-off-by-one", "ptxsmt/sem/bits.py",
      "top = _resize(_min(pos + length - 1,", "top = _resize(_min(pos + length,",
      "bfe.s replicates the bit after the field"),
    m("prmt-sign-bit-6", "ptxsmt/sem/bits.py",
      "sign = z3.If(z3.Extract(7, 7, byte) == 1", "sign = z3.If(z3.Extract(6, 6, byte) == 1",
      "prmt replicates bit 6, not the sign"),
    m("prmt-ecr-is-ecl", "ptxsmt/sem/bits.py",
      '"ecr": lambda sel, i: min(i, sel),', '"ecr": lambda sel, i: max(i, sel),',
      "prmt.ecr clamps to the left"),
    m("shf-clamp-wraps", "ptxsmt/sem/bits.py",
      'n = _min(c, 32) if v.mode == "clamp" else c & 0x1F', "n = c & 0x1F",
      "shf.clamp wraps the amount"),
    m("clz-off-by-one", "ptxsmt/sem/bits.py",
      "z3.BitVecVal(n - 1 - i, 32), out)", "z3.BitVecVal(n - i, 32), out)", "clz one too many"),
    m("mad-hi-sat-wraps", "ptxsmt/sem/arith.py",
      "return _saturate(z3.SignExt(1, part) + z3.SignExt(1, c), part.size()) if v.sat",
      "return part + c if v.sat", "mad.hi.sat.s32 wraps"),
    m("wide-product-unsigned", "ptxsmt/sem/arith.py",
      "ext = z3.SignExt if signed else z3.ZeroExt", "ext = z3.ZeroExt",
      "mul.wide.s32 zero-extends"),
    m("div-signed-unsigned-swapped", "ptxsmt/sem/arith.py",
      "q = a / b if signed else z3.UDiv(a, b)", "q = z3.UDiv(a, b) if signed else a / b",
      "div.s32 divides unsigned, div.u32 signed"),
    m("rem-unsigned", "ptxsmt/sem/arith.py",
      "r = z3.SRem(a, b) if signed else z3.URem(a, b)", "r = z3.URem(a, b)",
      "rem.s32 is unsigned"),
    m("div-by-zero-defined", "ptxsmt/sem/arith.py",
      'return z3.If(b == 0, free_value(f"{format_variant(v)} by zero", a, a.size()), q)',
      "return q", "division by zero gets Z3's value instead of an open one"),
]


def apply(tree: Path, mutant: Mutant) -> str:
    """Edit the copy; '' or why the mutant no longer applies."""
    if not mutant.edits:
        return ""
    path = tree / mutant.file
    text = path.read_text()
    for old, new in mutant.edits:
        n = text.count(old)
        if n != 1:
            return f"old text found {n} times in {mutant.file}: {old[:50]!r}"
        text = text.replace(old, new)
    path.write_text(text)
    return ""


def run(mutant: Mutant, pytest_args: list[str], timeout: float) -> tuple[str, float, str]:
    """(status, seconds, detail): killed | SURVIVED | STALE | TIMEOUT."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"mut-{mutant.name}-") as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(ROOT, tree, ignore=SKIP)
        why = apply(tree, mutant)
        if why:
            return "STALE", 0.0, why
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *pytest_args]
        try:
            proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return "TIMEOUT", time.perf_counter() - start, ""
    seconds = time.perf_counter() - start
    tail = proc.stdout.strip().splitlines()[-1:] or [""]
    if proc.returncode == 0:
        return "SURVIVED", seconds, tail[0]
    failed = [line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    return "killed", seconds, (failed or tail)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", dest="pattern", help="only mutants whose name contains this")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per mutant")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip checking that the unmutated tree passes first")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest arguments")
    args = parser.parse_args()
    chosen = [x for x in MUTANTS if not args.pattern or args.pattern in x.name]
    if args.list:
        for x in chosen:
            print(f"{x.name:28} {x.file:28} {x.what}")
        return 0
    pytest_args = args.pytest_args or ["-x", "-q"]
    print(f"{len(chosen)} mutants; pytest {' '.join(pytest_args)}", flush=True)
    if not args.no_baseline:  # a failing suite would "kill" every mutant
        status, seconds, detail = run(Mutant("baseline", "", (), "no edit"), pytest_args,
                                      args.timeout)
        print(f"{'(no mutation)':28} {'passes' if status == 'SURVIVED' else 'FAILS':9} "
              f"{seconds:7.1f} s  {detail[:90]}", flush=True)
        if status != "SURVIVED":
            return 2
    bad = 0
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = pool.map(lambda x: (x, *run(x, pytest_args, args.timeout)), chosen)
        for mutant, status, seconds, detail in results:
            bad += status != "killed"
            print(f"{mutant.name:28} {status:9} {seconds:7.1f} s  {detail[:90]}", flush=True)
    print(f"{len(chosen) - bad} of {len(chosen)} killed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
