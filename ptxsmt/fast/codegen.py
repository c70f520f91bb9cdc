"""Z3 terms -> a straight-line program over whole arrays, written as Python source.

`compile_terms` walks the very terms the prover uses and writes one line per Z3
operator in a small vocabulary (`where`, `u8`..`u64`, `i8`..`i64`, `f16`..`f64`,
`isnan`, ...) that `program.py` binds to numpy. Bit-vectors of width w live in the
narrowest unsigned word that holds them (bits above w zero), Booleans in bool arrays,
floats as their IEEE bits, with a float view (IEEE compares) written where first needed.

What it cannot compile exactly raises `Unsupported` and the slow path answers: SMT-LIB
`=` on floats (all NaNs equal, -0 != +0), FP conversions with a rounding mode, a NaN
constant (no bits), the semantics' named free values (a cvt's NaN).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import z3

from ..isa.types import BF16, F16, F32, F64, FloatFormat, PtxType
from ..program import Program
from ..sem.options import Options
from ..terms import ops
from .program import LOCAL, FastProgram, Unsupported, word_bits

_FORMATS = {(f.ebits, f.sbits): f for f in (F16, BF16, F32, F64)}
_VIEW = {F16: "f16", BF16: "bf16", F32: "f32", F64: "f64"}

# the operator table's numpy spellings (`terms/ops.py`)
_FP_CMP = ops.spellings("fp compare")
_U_CMP, _S_CMP = ops.spellings("unsigned"), ops.spellings("signed")
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_LOGIC = ops.spellings("logic", "bitwise")  # on Booleans, on bit-vectors
_ARITH = ops.spellings("arith")
_FP_CONSTANTS = (z3.Z3_OP_FPA_NUM, z3.Z3_OP_FPA_PLUS_ZERO, z3.Z3_OP_FPA_MINUS_ZERO,
                 z3.Z3_OP_FPA_PLUS_INF, z3.Z3_OP_FPA_MINUS_INF)  # not NaN: it has no bits
_FP_TEST = ops.spellings("fp test")

@dataclass(frozen=True)
class Value:
    """A term's value in the program: an expression (a local's name or a constant),
    with what it holds: "bool", "bv" of `width` bits, or "fp" bits of `fmt`."""

    expr: str
    kind: str
    width: int = 1
    fmt: FloatFormat | None = None
    compare: tuple[str, str, str] | None = None  # (x, op, y): an integer compare, negatable
    const: int | None = None  # the value of a bit-vector constant


def _word(width: int) -> str:
    """The vocabulary's cast to the word of `width` bits (u8 .. u64)."""
    return f"u{word_bits(width)}"


def _mask(width: int) -> int:
    return (1 << width) - 1


class _Node:
    """One term node read through Z3's C API (the Python wrappers cost ~30x more)."""

    __slots__ = ("ctx", "ast", "app", "decl", "kind", "args")

    def __init__(self, ctx, ast):
        self.ctx, self.ast = ctx, ast
        self.app = z3.Z3_to_app(ctx, ast)
        self.decl = z3.Z3_get_app_decl(ctx, self.app)
        self.kind = z3.Z3_get_decl_kind(ctx, self.decl)
        self.args = [z3.Z3_get_app_arg(ctx, self.app, i)
                     for i in range(z3.Z3_get_app_num_args(ctx, self.app))]

    def param(self, i: int) -> int:
        return z3.Z3_get_decl_int_parameter(self.ctx, self.decl, i)

    def name(self) -> str:
        return z3.Z3_get_symbol_string(self.ctx, z3.Z3_get_decl_name(self.ctx, self.decl))

    def width(self) -> int:  # a bit-vector's; 0 for any other sort
        sort = z3.Z3_get_sort(self.ctx, self.ast)
        bv = z3.Z3_get_sort_kind(self.ctx, sort) == z3.Z3_BV_SORT
        return z3.Z3_get_bv_sort_size(self.ctx, sort) if bv else 0

    def fmt(self) -> FloatFormat:
        sort = z3.Z3_get_sort(self.ctx, self.ast)
        return _FORMATS[(z3.Z3_fpa_get_ebits(self.ctx, sort), z3.Z3_fpa_get_sbits(self.ctx, sort))]


def _without_nan_guards(ctx, args: list) -> list:
    """The arguments of an `and`, less each `not (isNaN x or isNaN y)` beside an IEEE
    compare of x and y: the compare is false on a NaN, so the guard (the ISA's
    "!isNaN(a) && !isNaN(b)") adds nothing and costs three passes over the data."""
    nodes = [_Node(ctx, arg) for arg in args]
    compared = {frozenset(z3.Z3_get_ast_id(ctx, x) for x in node.args) for node in nodes
                if node.kind in _FP_CMP}
    return [arg for arg, node in zip(args, nodes) if _nan_guard_of(ctx, node) not in compared]


def _nan_guard_of(ctx, node: _Node) -> frozenset[int] | None:
    """{x, y} for `not (isNaN x or isNaN y)`, else None."""
    inner = _Node(ctx, node.args[0]) if node.kind == z3.Z3_OP_NOT else None
    tests = [_Node(ctx, x) for x in inner.args] if inner and inner.kind == z3.Z3_OP_OR else []
    if len(tests) != 2 or any(t.kind != z3.Z3_OP_FPA_IS_NAN for t in tests):
        return None
    return frozenset(z3.Z3_get_ast_id(ctx, t.args[0]) for t in tests)


class _Compiler:
    """Turns a term DAG into straight-line source lines, one local per shared term."""

    def __init__(self, inputs: tuple[str, ...], ctx: z3.Context):
        self.inputs = inputs
        self.context, self.ctx = ctx, ctx.ref()
        self.lines: list[tuple[str, str]] = []  # (local, expression), in order
        self.values: dict[int, Value] = {}
        self.views: dict[str, str] = {}
        self.parts: dict[str, tuple] = {}  # local -> (word, lo, w, lanes) it is a lane of
        self.lanes: dict[tuple, str] = {}  # (x, op, y, w) -> one compare of all lanes
        self.lane_at: dict[str, tuple[str, int, int]] = {}  # local -> (lanes, k, count)
        self.flag_at: dict[str, tuple[str, int, int]] = {}  # b8 of such a lane

    def visit(self, ast) -> Value:
        key = z3.Z3_get_ast_id(self.ctx, ast)
        if key not in self.values:
            node = _Node(self.ctx, ast)
            if node.kind == z3.Z3_OP_AND:
                node.args = _without_nan_guards(self.ctx, node.args)
                if len(node.args) == 1:  # the compare alone: its value is the and's
                    self.values[key] = self.visit(node.args[0])
                    return self.values[key]
            if node.kind == z3.Z3_OP_CONCAT:  # one concat of all the parts
                node.args = self._concat_parts(node.args)
            self.values[key] = self.step(node, [self.visit(x) for x in node.args])
        return self.values[key]

    def _concat_parts(self, args: list) -> list:
        out = []
        for arg in args:
            node = _Node(self.ctx, arg)
            out += self._concat_parts(node.args) if node.kind == z3.Z3_OP_CONCAT else [arg]
        return out

    def emit(self, expr: str, kind: str, width: int = 1, fmt: FloatFormat | None = None,
             compare=None) -> Value:
        """A new local holding `expr`."""
        name = f"t{len(self.lines)}"
        self.lines.append((name, expr))
        return Value(name, kind, width, fmt, compare)

    def live(self, results: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """The lines the results read (a negated compare leaves the first one unread):
        a line reads only lines before it, so one pass from the last line finds them."""
        needed = set(results)
        for target, expr in reversed(self.lines):
            if target in needed:
                needed.update(LOCAL.findall(expr))
        return tuple(line for line in self.lines if line[0] in needed)

    def view(self, x: Value) -> str:
        """The float view of FP bits, written once."""
        if x.expr not in self.views:
            self.views[x.expr] = self.emit(f"{_VIEW[x.fmt]}({x.expr})", "view").expr
        return self.views[x.expr]

    def step(self, t: _Node, a: list[Value]) -> Value:  # noqa: C901 - one branch per operator
        k = t.kind
        w = t.width()  # the result's width, once (0: not a bit-vector)
        if w > 64:  # mul.hi.u64's 128-bit product
            raise Unsupported("a bit-vector wider than 64 bits")
        if k in (z3.Z3_OP_TRUE, z3.Z3_OP_FALSE):
            return Value(str(k == z3.Z3_OP_TRUE), "bool")
        if k == z3.Z3_OP_BNUM:
            k = int(z3.Z3_get_numeral_string(t.ctx, t.ast))
            return Value(f"{_word(w)}({k})", "bv", w, const=k)
        if k == z3.Z3_OP_UNINTERPRETED:
            if a:
                raise Unsupported(f"{t.name()} is a value the ISA leaves open")
            i = self.inputs.index(t.name())
            return Value(f"s{i}", "bv", w) if w else Value(f"s{i}", "bool")
        if k in _FP_CONSTANTS:
            fmt = t.fmt()
            numeral = z3.z3._to_expr_ref(t.ast, self.context)  # its bits: zeros' too, not NaN's
            bits = z3.simplify(z3.fpToIEEEBV(numeral)).as_long()
            return Value(f"{_word(fmt.width)}({bits})", "fp", fmt.width, fmt)
        if k == z3.Z3_OP_ITE:
            return self._ite(*a)
        if k == z3.Z3_OP_NOT:
            (x,) = a
            return self._negated(x) if x.compare else self.emit(f"lnot({x.expr})", "bool")
        if k in _LOGIC:  # Booleans or bit-vectors of w bits, as its arguments are
            return self.emit(f" {_LOGIC[k]} ".join(x.expr for x in a), a[0].kind, a[0].width)
        if k in _ARITH:  # exact in the word (it wraps above w bits), then cut to w bits
            expr = f" {_ARITH[k]} ".join(x.expr for x in a)
            return self.emit(f"({expr}) & {_mask(w)}", "bv", w)
        if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT):
            x, y = a
            if x.kind == "fp":
                raise Unsupported("= on floating point (all NaNs equal, -0 != +0)")
            op = "!=" if k == z3.Z3_OP_DISTINCT else "=="
            if x.kind == "bv":
                return self._compare(x.expr, op, y.expr)
            return self.emit(f"{x.expr} {op} {y.expr}", "bool")
        if k == z3.Z3_OP_EXTRACT:
            return self._extract(a[0], t.param(0), t.param(1))
        if k == z3.Z3_OP_CONCAT:
            return self._concat(a)
        if k == z3.Z3_OP_ZERO_EXT:
            return self._cast(a[0], w)
        if k == z3.Z3_OP_SIGN_EXT:
            (x,) = a
            wide = self._cast(x, w).expr
            high = _mask(w) & ~_mask(x.width)
            return self.emit(f"where({x.expr} >> {x.width - 1}, {wide} | {high}, {wide})", "bv", w)
        if k in (z3.Z3_OP_BSHL, z3.Z3_OP_BLSHR):  # a shift by w or more leaves 0
            x, n = a
            by = f"minimum({n.expr}, {word_bits(w) - 1})"
            shifted = f"({x.expr} << {by}) & {_mask(w)}" if k == z3.Z3_OP_BSHL \
                else f"{x.expr} >> {by}"
            return self.emit(f"where({n.expr} >= {w}, {_word(w)}(0), {shifted})", "bv", w)
        if k == z3.Z3_OP_BASHR:  # on the signed view of a native word; n's word is x's
            x, n = a
            if w != word_bits(w):
                raise Unsupported("an arithmetic shift of a bit-vector narrower than its word")
            return self.emit(f"u{w}(i{w}({x.expr}) >> i{w}(minimum({n.expr}, {w - 1})))", "bv", w)
        if k == z3.Z3_OP_BNOT:
            return self.emit(f"~{a[0].expr} & {_mask(w)}", "bv", w)
        if k in _U_CMP:
            return self._compare(a[0].expr, _U_CMP[k], a[1].expr)
        if k in _S_CMP:
            x, y = a
            if word_bits(x.width) == x.width:  # a native word: read it as signed, no pass
                signed = [f"i{x.width}({v.expr})" for v in a]
            else:  # flipping the sign bit orders signed values as unsigned ones
                signed = [f"({v.expr} ^ {1 << (x.width - 1)})" for v in a]
            return self._compare(signed[0], _S_CMP[k], signed[1])
        if k == z3.Z3_OP_FPA_TO_FP and len(a) == 1:
            fmt = t.fmt()  # bits -> FP: the same bits (every other form has a rounding mode)
            return Value(a[0].expr, "fp", fmt.width, fmt)
        if k in _FP_TEST:
            return self._fp_test(a[0], _FP_TEST[k])
        if k in _FP_CMP:
            return self.emit(f"{self.view(a[0])} {_FP_CMP[k]} {self.view(a[1])}", "bool")
        raise Unsupported(f"no fast path for Z3 operator {t.name()}")

    def _compare(self, x: str, op: str, y: str) -> Value:
        lane = self._lane_of(x, op, y)
        out = self.emit(f"lane({lane[0]}, {lane[1]})" if lane else f"{x} {op} {y}", "bool",
                        compare=(x, op, y))
        if lane:
            self.lane_at[out.expr] = lane
        return out

    def _negated(self, c: Value) -> Value:
        """not c (an integer compare) as the opposite compare, x > y for x <= y: no extra pass."""
        x, op, y = c.compare
        return self._compare(x, _NEGATED[op], y)

    def _lane_of(self, x: str, op: str, y: str) -> tuple[str, int, int] | None:
        """A compare of lane k of two words (bytes, halves) as lane k of one compare of all
        their lanes, (lanes, k, count): a contiguous pass for every lane, not a strided one."""
        px, py = self.parts.get(x), self.parts.get(y)
        if not px or not py or px[1:] != py[1:]:
            return None
        (wx, lo, w, count), wy = px, py[0]
        key = (wx, op, wy, w)
        if key not in self.lanes:
            self.lanes[key] = self.emit(f"lanes({wx}, {w}, {count}) {op} lanes({wy}, {w}, "
                                        f"{count})", "bool").expr
        return self.lanes[key], lo // w, count

    def _cast(self, x: Value, width: int) -> Value:
        """x as a `width`-bit value (its word changes, its bits do not)."""
        if word_bits(width) == word_bits(x.width):
            return Value(x.expr, "bv", width, const=x.const)
        if x.const is not None:
            return Value(f"{_word(width)}({x.const})", "bv", width, const=x.const)
        return self.emit(f"{_word(width)}({x.expr})", "bv", width)

    def _ite(self, c: Value, x: Value, y: Value) -> Value:
        one, zero = x.const, y.const
        if x.kind == "bv" and zero == 0 and one is not None:  # c ? K : 0 is K times c
            if one == 1 and _word(x.width) == "u8":  # a bool's byte is 0 or 1 already: a view
                flag = self.emit(f"b8({c.expr})", "bv", x.width)
                if c.expr in self.lane_at and x.width == 8:
                    self.flag_at[flag.expr] = self.lane_at[c.expr]
                return flag
            times = "" if one == 1 else f" * {one}"
            return self.emit(f"{_word(x.width)}({c.expr}){times}", "bv", x.width)
        if x.kind == "bv" and one == 0 and zero is not None and c.compare:
            return self._ite(self._negated(c), y, x)
        return self.emit(f"where({c.expr}, {x.expr}, {y.expr})", x.kind, x.width, x.fmt)

    def _extract(self, x: Value, hi: int, lo: int) -> Value:
        w = hi - lo + 1
        if lo == 0 and w == x.width:
            return x
        if w in (8, 16, 32) and lo % w == 0 and w < word_bits(x.width):  # a byte, a half
            part = self.emit(f"part({x.expr}, {lo}, {w})", "bv", w)
            self.parts[part.expr] = (x.expr, lo, w, word_bits(x.width) // w)
            return part
        expr = f"({x.expr} >> {lo})" if lo else x.expr
        if word_bits(w) != word_bits(x.width):
            expr = f"{_word(w)}({expr})"  # the narrower word drops the high bits
        if w != word_bits(w) and hi < x.width - 1:
            expr = f"{expr} & {_mask(w)}"
        return self.emit(expr, "bv", w)

    def _concat(self, parts: list[Value]) -> Value:
        w, n = sum(p.width for p in parts), len(parts)
        flags = [self.flag_at.get(p.expr) for p in parts]
        if flags[0] and flags == [(flags[0][0], k, n) for k in reversed(range(n))]:
            return self.emit(f"flags({flags[0][0]})", "bv", w)  # every lane's flag, in order
        if {p.width for p in parts} in ({8}, {16}) and w == word_bits(w):  # bytes, halves
            return self.emit(f"join({', '.join(p.expr for p in parts)})", "bv", w)
        terms, shift = [], w
        for p in parts:
            shift -= p.width
            wide = self._cast(p, w).expr
            terms.append(f"({wide} << {shift})" if shift else wide)
        return self.emit(" | ".join(terms), "bv", w)

    def _fp_test(self, x: Value, spelling: str) -> Value:
        """A class test, spelled (`ops.OPS`) over the bits, their float view (written
        where the spelling reads it) and the format's masks."""
        f = x.fmt
        sign = 1 << (f.width - 1)
        view = self.view(x) if "{view}" in spelling else ""
        return self.emit(spelling.format(b=x.expr, view=view, sign=sign, sign_less=sign - 1,
                                         inf=_mask(f.ebits) << (f.sbits - 1),
                                         man=_mask(f.sbits - 1)), "bool")

def compile_terms(inputs: Mapping[str, z3.ExprRef], outputs: Mapping[str, z3.ExprRef],
                  types: Mapping[str, PtxType]) -> FastProgram:
    """The vectorised form of output terms over input constants (register -> constant)."""
    terms = list(outputs.values())
    comp = _Compiler(tuple(c.decl().name() for c in inputs.values()),
                     terms[0].ctx if terms else z3.main_ctx())
    results = tuple(comp.visit(term.as_ast()).expr for term in terms)
    return FastProgram(tuple(inputs), tuple(outputs), dict(types), comp.live(results), results)


def compile_snippet(program: Program, opts: Options) -> FastProgram:
    """The vectorised form of a parsed snippet."""
    enc = program.encode(opts)
    # Z3's rewriter first: vset lanes come out of a 64-bit concat, widened to compare as
    # signed; simplified they are bytes of a or b compared unsigned (a third of the steps).
    # Where it writes an operator the fast path lacks, the terms as built.
    try:
        return compile_terms(enc.inputs, {k: z3.simplify(t) for k, t in enc.outputs.items()},
                             program.types)
    except Unsupported:
        return compile_terms(enc.inputs, enc.outputs, program.types)
