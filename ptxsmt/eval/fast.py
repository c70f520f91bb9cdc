"""A vectorised evaluator compiled from the Z3 terms (not a second semantics).

`compile_program` walks the very terms the prover uses and maps each Z3
operator to a numpy operation on whole arrays of operands: bit-vectors are
uint64 arrays, Booleans bool arrays, floating-point values their IEEE bits
plus a lazily taken numpy float view (float16, bf16 via float32, float32,
float64), whose comparisons are IEEE's (NaN unordered, -0 == +0). An
operator the compiler cannot compile exactly raises `Unsupported` (the batch
then takes the slow path), so the fast path never approximates: SMT-LIB `=` on
floating point (all NaNs equal, -0 != +0; no bit operation is that), FP
conversions with a rounding mode, a NaN constant (it has no bits), and the
named free values of the semantics (a cvt's NaN, which only the slow path can
tell apart from a value that does not matter). The tests compare the two paths.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

import numpy as np
import z3

from ..isa.types import BF16, F16, F32, F64, FloatFormat, PtxType
from ..program import Program
from ..sem.options import DEFAULT, Options
from .shape import Shape, shape_of

U64 = np.uint64
_WORDS = {1: np.bool_, 16: np.uint16, 32: np.uint32}


def word_dtype(width: int) -> type:
    """The numpy type that holds `width` bits: bool for a predicate, a native word for
    16 and 32 bits (so a float view is free), else uint64."""
    return _WORDS.get(width, U64)
_FORMATS = {(f.ebits, f.sbits): f for f in (F16, BF16, F32, F64)}


class Unsupported(Exception):
    """A Z3 operator the fast path does not compile (use the slow path)."""


@dataclass
class Float:
    """A floating-point array: IEEE bits, with the float view taken on demand."""

    bits: np.ndarray
    fmt: FloatFormat
    _view: np.ndarray | None = None

    @property
    def view(self) -> np.ndarray:
        """float32 for f16/bf16/f32 (exact), float64 for f64: numpy compares IEEE-wise."""
        if self._view is None:
            raw = word_dtype(self.fmt.width)
            b = np.asarray(self.bits)
            b = b if b.dtype == raw else b.astype(raw)
            if self.fmt is F16:
                self._view = b.view(np.float16).astype(np.float32)
            elif self.fmt is BF16:
                self._view = (b.astype(np.uint32) << np.uint32(16)).view(np.float32)
            else:
                self._view = b.view(np.float32 if self.fmt is F32 else np.float64)
        return self._view

    def field(self, name: str) -> np.ndarray:
        f = self.fmt
        man = f.sbits - 1
        if name == "sign":
            return (self.bits >> U64(f.width - 1)) & U64(1)
        if name == "exp":
            return (self.bits >> U64(man)) & U64((1 << f.ebits) - 1)
        return self.bits & U64((1 << man) - 1)


def _mask(width: int) -> np.uint64:
    return U64((1 << width) - 1) if width < 64 else U64(0xFFFFFFFFFFFFFFFF)


def _signed(x: np.ndarray, width: int) -> np.ndarray:
    """Two's complement value of `width`-bit fields, as int64 (width <= 64)."""
    if width == 64:
        return x.view(np.int64)
    v = x.astype(np.int64)
    return np.where(v >= (1 << (width - 1)), v - (1 << width), v)


def _fp_class(x: Float, what: str) -> np.ndarray:
    if what == "nan":
        return np.isnan(x.view)
    if what == "inf":
        return np.isinf(x.view)
    return _CLASS_BY_FIELDS[what](x.field("exp"), x.field("man"), x.field("sign"),
                                  U64((1 << x.fmt.ebits) - 1))


# Classes the float view cannot tell (f16 subnormals are normal float32s): from the bits.
_CLASS_BY_FIELDS = {
    "zero": lambda exp, man, sign, top: (exp == 0) & (man == 0),
    "subnormal": lambda exp, man, sign, top: (exp == 0) & (man != 0),
    "normal": lambda exp, man, sign, top: (exp != 0) & (exp != top),
    "negative": lambda exp, man, sign, top: (sign == 1) & ~((exp == top) & (man != 0)),
    "positive": lambda exp, man, sign, top: (sign == 0) & ~((exp == top) & (man != 0)),
}


_FP_CLASS = {
    z3.Z3_OP_FPA_IS_NAN: "nan", z3.Z3_OP_FPA_IS_INF: "inf", z3.Z3_OP_FPA_IS_ZERO: "zero",
    z3.Z3_OP_FPA_IS_SUBNORMAL: "subnormal", z3.Z3_OP_FPA_IS_NORMAL: "normal",
    z3.Z3_OP_FPA_IS_NEGATIVE: "negative", z3.Z3_OP_FPA_IS_POSITIVE: "positive",
}
_FP_CMP = {
    z3.Z3_OP_FPA_LT: np.less, z3.Z3_OP_FPA_LE: np.less_equal, z3.Z3_OP_FPA_GT: np.greater,
    z3.Z3_OP_FPA_GE: np.greater_equal, z3.Z3_OP_FPA_EQ: np.equal,
}
_U_CMP = {z3.Z3_OP_ULT: np.less, z3.Z3_OP_ULEQ: np.less_equal, z3.Z3_OP_UGT: np.greater,
          z3.Z3_OP_UGEQ: np.greater_equal}
_S_CMP = {z3.Z3_OP_SLT: np.less, z3.Z3_OP_SLEQ: np.less_equal, z3.Z3_OP_SGT: np.greater,
          z3.Z3_OP_SGEQ: np.greater_equal}
_BOOL = {z3.Z3_OP_AND: np.logical_and, z3.Z3_OP_OR: np.logical_or,
         z3.Z3_OP_XOR: np.logical_xor}
_BITWISE = {z3.Z3_OP_BAND: np.bitwise_and, z3.Z3_OP_BOR: np.bitwise_or,
            z3.Z3_OP_BXOR: np.bitwise_xor}


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

    def size(self, ast=None) -> int:
        return z3.Z3_get_bv_sort_size(self.ctx, z3.Z3_get_sort(self.ctx, ast or self.ast))

    def is_fp(self, ast=None) -> bool:
        sort = z3.Z3_get_sort(self.ctx, ast or self.ast)
        return z3.Z3_get_sort_kind(self.ctx, sort) == z3.Z3_FLOATING_POINT_SORT

    def fmt(self) -> FloatFormat:
        sort = z3.Z3_get_sort(self.ctx, self.ast)
        return _FORMATS[(z3.Z3_fpa_get_ebits(self.ctx, sort), z3.Z3_fpa_get_sbits(self.ctx, sort))]


def _without_nan_guards(ctx, args: list) -> list:
    """The arguments of an `and`, less each `not (isNaN x or isNaN y)` beside an IEEE
    compare of x and y: the compare is false on a NaN, so the guard (the ISA's
    "!isNaN(a) && !isNaN(b)") adds nothing and costs three passes over the data."""
    compared = set()
    for arg in args:
        node = _Node(ctx, arg)
        if node.kind in _FP_CMP:
            compared.add(frozenset(z3.Z3_get_ast_id(ctx, x) for x in node.args))
    return [arg for arg in args if _nan_guard_of(ctx, arg) not in compared] if compared \
        else args


def _nan_guard_of(ctx, ast) -> frozenset[int] | None:
    """{x, y} for `not (isNaN x or isNaN y)`, else None."""
    node = _Node(ctx, ast)
    if node.kind != z3.Z3_OP_NOT:
        return None
    inner = _Node(ctx, node.args[0])
    if inner.kind != z3.Z3_OP_OR or len(inner.args) != 2:
        return None
    tests = [_Node(ctx, x) for x in inner.args]
    if any(t.kind != z3.Z3_OP_FPA_IS_NAN for t in tests):
        return None
    return frozenset(z3.Z3_get_ast_id(ctx, t.args[0]) for t in tests)


class _Compiler:
    """Turns a term DAG into a straight-line list of numpy steps over a value table."""

    def __init__(self, inputs: tuple[str, ...], ctx: z3.Context):
        self.inputs = inputs
        self.ctx = ctx
        self.steps: list[Callable[[list], object]] = []
        self.deps: list[frozenset[int]] = [frozenset([i]) for i in range(len(inputs))]
        self.index: dict[int, int] = {}

    def __call__(self, t: z3.ExprRef) -> int:
        return self.visit(t.as_ast())

    def visit(self, ast) -> int:
        key = z3.Z3_get_ast_id(self.ctx.ref(), ast)
        if key not in self.index:
            node = _Node(self.ctx.ref(), ast)
            if node.kind == z3.Z3_OP_AND:
                node.args = _without_nan_guards(self.ctx.ref(), node.args)
                if len(node.args) == 1:  # the compare alone: its value is the and's
                    self.index[key] = self.visit(node.args[0])
                    return self.index[key]
            args = [self.visit(x) for x in node.args]
            self.steps.append(self.step(node, args))
            self.index[key] = len(self.steps) - 1 + len(self.inputs)
            self.deps.append(frozenset().union(*(self.deps[i] for i in args)) if args
                             else self._leaf_deps(node))
        return self.index[key]

    def _leaf_deps(self, node: _Node) -> frozenset[int]:
        if node.kind == z3.Z3_OP_UNINTERPRETED:
            name = z3.Z3_get_symbol_string(node.ctx, z3.Z3_get_decl_name(node.ctx, node.decl))
            return frozenset([self.inputs.index(name)])
        return frozenset()

    def step(self, t: _Node, a: list[int]):  # noqa: C901 - one branch per Z3 operator
        k = t.kind
        if k in (z3.Z3_OP_TRUE, z3.Z3_OP_FALSE):
            const = np.bool_(k == z3.Z3_OP_TRUE)
            return lambda v: const
        if k == z3.Z3_OP_BNUM:
            const = U64(int(z3.Z3_get_numeral_string(t.ctx, t.ast)))
            return lambda v: const
        if k == z3.Z3_OP_UNINTERPRETED:
            name = z3.Z3_get_symbol_string(t.ctx, z3.Z3_get_decl_name(t.ctx, t.decl))
            if a:
                raise Unsupported(f"{name} is a value the ISA leaves open")
            i = self.inputs.index(name)
            return lambda v: v[i]
        if k in _FP_CONSTANTS:
            fmt = t.fmt()
            const = Float(np.asarray(U64(_fp_bits(z3.z3._to_expr_ref(t.ast, self.ctx), fmt))), fmt)
            return lambda v: const
        if k == z3.Z3_OP_ITE:
            c, x, y = a
            if t.is_fp():
                return lambda v: Float(np.where(v[c], v[x].bits, v[y].bits), v[x].fmt)
            return lambda v: np.where(v[c], v[x], v[y])
        if k == z3.Z3_OP_NOT:
            (x,) = a
            return lambda v: np.logical_not(v[x])
        if k in _BOOL or k in _BITWISE or k == z3.Z3_OP_BADD:
            fn = _BOOL.get(k) or _BITWISE.get(k) or np.add
            mask = _mask(t.size()) if k == z3.Z3_OP_BADD else None

            def fold(v, fn=fn, mask=mask):
                out = v[a[0]]
                for i in a[1:]:
                    out = fn(out, v[i])
                return out & mask if mask is not None else out
            return fold
        if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT):
            if t.is_fp(t.args[0]):
                raise Unsupported("= on floating point (all NaNs equal, -0 != +0)")
            x, y = a
            fn = np.not_equal if k == z3.Z3_OP_DISTINCT else np.equal
            return lambda v: fn(v[x], v[y])
        if k == z3.Z3_OP_EXTRACT:
            hi, lo = t.param(0), t.param(1)
            (x,) = a
            shift, mask = U64(lo), _mask(hi - lo + 1)
            return lambda v: (v[x] >> shift) & mask
        if k == z3.Z3_OP_CONCAT:
            sizes = [U64(t.size(x)) for x in t.args]

            def concat(v):
                out = U64(0)
                for i, size in zip(a, sizes):
                    out = (out << size) | v[i]
                return out
            return concat
        if k == z3.Z3_OP_ZERO_EXT:
            (x,) = a
            return lambda v: v[x]
        if k == z3.Z3_OP_SIGN_EXT:
            (x,) = a
            n, w = t.param(0), t.size(t.args[0])
            ext, top = _mask(w + n) & ~_mask(w), U64(w - 1)
            return lambda v: np.where((v[x] >> top) & U64(1), v[x] | ext, v[x])
        if k == z3.Z3_OP_BSUB:
            x, y = a
            mask = _mask(t.size())
            return lambda v: (v[x] - v[y]) & mask
        if k == z3.Z3_OP_BSHL:
            x, n = a
            w = t.size()
            return lambda v: np.where(v[n] >= U64(w), U64(0),
                                      (v[x] << np.minimum(v[n], U64(63))) & _mask(w))
        if k == z3.Z3_OP_BNOT:
            (x,) = a
            mask = _mask(t.size())
            return lambda v: ~v[x] & mask
        if k in _U_CMP:
            x, y = a
            fn = _U_CMP[k]
            return lambda v: fn(v[x], v[y])
        if k in _S_CMP:
            x, y = a
            fn, w = _S_CMP[k], t.size(t.args[0])
            return lambda v: fn(_signed(v[x], w), _signed(v[y], w))
        if k == z3.Z3_OP_FPA_TO_FP and len(a) == 1:
            (x,) = a  # bits -> FP: a view (every other form has a rounding mode, refused)
            fmt = t.fmt()
            return lambda v: Float(np.asarray(v[x]), fmt)  # its own width: no copy
        if k in _FP_CLASS:
            (x,) = a
            what = _FP_CLASS[k]
            return lambda v: _fp_class(v[x], what)
        if k in _FP_CMP:
            x, y = a
            fn = _FP_CMP[k]
            return lambda v: fn(v[x].view, v[y].view)
        name = z3.Z3_get_symbol_string(t.ctx, z3.Z3_get_decl_name(t.ctx, t.decl))
        raise Unsupported(f"no fast path for Z3 operator {name}")


_FP_CONSTANTS = (z3.Z3_OP_FPA_NUM, z3.Z3_OP_FPA_PLUS_ZERO, z3.Z3_OP_FPA_MINUS_ZERO,
                 z3.Z3_OP_FPA_PLUS_INF, z3.Z3_OP_FPA_MINUS_INF)  # not NaN: it has no bits


def _fp_bits(t: z3.ExprRef, fmt: FloatFormat) -> int:
    """The IEEE bits of an FP numeral other than NaN (zeros, infinities, numbers)."""
    if t.decl().kind() == z3.Z3_OP_FPA_PLUS_ZERO:
        return 0
    if t.decl().kind() == z3.Z3_OP_FPA_MINUS_ZERO:
        return 1 << (fmt.width - 1)
    return z3.simplify(z3.fpToIEEEBV(t)).as_long()


@dataclass(frozen=True)
class FastProgram:
    slots: tuple[str, ...]  # the inputs of the value table, in order
    outputs: tuple[str, ...]
    types: dict[str, PtxType]
    steps: tuple[Callable[[list], object], ...]
    results: tuple[int, ...]
    deps: tuple[frozenset[int], ...]  # per value-table slot: the inputs it depends on
    spelling: dict[str, str] = field(default_factory=dict)  # register -> as written
    bound: Mapping[str, int | bool] = field(default_factory=dict)  # slots the text fixes

    @property
    def inputs(self) -> tuple[str, ...]:
        """The inputs a caller gives: every slot but the text's own immediates."""
        return tuple(s for s in self.slots if s not in self.bound)

    def renamed(self, shape: Shape, program: Program) -> FastProgram:
        """This program, compiled for `shape`, as the program of a text of that shape."""
        back = {s: r for r, s in shape.registers.items()}
        back |= {k: f"#{k}" for k in shape.constants}  # no register is spelled `#k0`
        return replace(self, slots=tuple(back[s] for s in self.slots),
                       outputs=tuple(back[o] for o in self.outputs),
                       types={back[k]: t for k, t in self.types.items()},
                       spelling=program.spelling,
                       bound={back[k]: v for k, v in shape.constants.items()})

    def __call__(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Outputs for whole arrays of inputs (uint64 bits; bool for predicates)."""
        return self._run(arrays)

    def run_slots(self, columns: list[np.ndarray], rows: int) -> list[np.ndarray]:
        """The outputs, in order, for `rows` rows of every slot given by position, bound
        ones too: texts of one shape (which differ only in names and bound values) run as
        one program."""
        values: list = [_as_array(c, self.types[n]) for c, n in zip(columns, self.slots)]
        for step in self.steps:
            values.append(step(values))
        return [np.broadcast_to(np.asarray(values[i].bits if isinstance(values[i], Float)
                                           else values[i]), (rows,)) for i in self.results]

    @cached_property
    def _run(self) -> Callable:
        return self.specialize({})  # what depends on the text alone, computed once

    def specialize(self, fixed: Mapping[str, np.ndarray]) -> Callable:
        """Partial evaluation: the steps that read only `fixed` inputs run once, here;
        the returned function takes the other inputs (a sweep fixes b, varies a)."""
        n_in = len(self.slots)
        fixed = {**self.bound, **fixed}
        known = {self.slots.index(k) for k in fixed}
        pre: list = [_as_array(fixed[name], self.types[name]) if i in known else None
                     for i, name in enumerate(self.slots)]
        todo = []
        for j, step in enumerate(self.steps):
            if self.deps[n_in + j] <= known:
                pre.append(step(pre))
            else:
                pre.append(None)
                todo.append((n_in + j, step))

        def run(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            values = list(pre)
            for i, name in enumerate(self.slots):
                if i not in known:
                    values[i] = _as_array(arrays[name], self.types[name])
            for j, step in todo:
                values[j] = step(values)
            size = max((np.size(values[i]) for i in range(n_in)), default=1)
            out = {}
            for name, i in zip(self.outputs, self.results):
                value = values[i].bits if isinstance(values[i], Float) else values[i]
                out[name] = np.broadcast_to(np.asarray(value), (size,))
            return out

        return run


def _as_array(values, t: PtxType) -> np.ndarray:
    return np.asarray(values, dtype=word_dtype(t.width))


@lru_cache(maxsize=16384)
def compile_program(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The vectorised form of a snippet (raises PtxError on bad text, Unsupported where it
    cannot be exact). Texts of one shape, differing in register names or immediates,
    share one compilation."""
    program = Program.parse(text)  # the text's own errors, places and spellings
    shape = shape_of(program)
    return _compile_shape(shape.text, opts).renamed(shape, program)


@lru_cache(maxsize=4096)
def _compile_shape(text: str, opts: Options) -> FastProgram:
    program = Program.parse(text)
    enc = program.encode(opts)
    # Z3's rewriter first: vset lanes come out of a 64-bit concat, widened to compare as
    # signed; simplified they are bytes of a or b compared unsigned (a third of the steps).
    # Where it writes an operator the fast path lacks (bvmul in a vset .add), the terms as
    # built.
    try:
        return compile_terms(enc.inputs, {k: z3.simplify(t) for k, t in enc.outputs.items()},
                             program.types)
    except Unsupported:
        return compile_terms(enc.inputs, enc.outputs, program.types)


def compile_terms(inputs: Mapping[str, z3.ExprRef], outputs: Mapping[str, z3.ExprRef],
                  types: Mapping[str, PtxType], spelling: Mapping[str, str] | None = None
                  ) -> FastProgram:
    """The vectorised form of output terms over input constants (register -> constant)."""
    terms = list(outputs.values())
    comp = _Compiler(tuple(str(c) for c in inputs.values()),
                     terms[0].ctx if terms else z3.main_ctx())
    results = tuple(comp(term) for term in terms)
    return FastProgram(tuple(inputs), tuple(outputs), dict(types), tuple(comp.steps), results,
                       tuple(comp.deps), dict(spelling or {}))
