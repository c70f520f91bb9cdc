"""Does a PTX function refine the IR function it was compiled from? Alive2's definition:
for every input on which the IR has no undefined behaviour, and whatever the IR's open
choices (undef, NaN bits, ...) are taken to be, the PTX's outputs equal the IR's wherever
the IR's are not poison; where the IR is poison the PTX may do anything.

The NVPTX calling convention links the two: IR parameter N is the PTX function's Nth
`.param` (LLVM names it FUNC_param_N), read at any offset and width (a `<2 x half>` as
one .b32 or two .b16, an i8 from a .b32 param by `ld.param.b8`); the return value is
`func_retval0`. Bits the PTX reads or writes beyond the IR value's width are free unless
the IR says `zeroext`/`signext` (an i1/i8 return is extended only then), and then free
from bit 32 on: LLVM extends a narrow integer to 32 bits (`ABI_EXTENT`). Memory: IR
address spaces 0 (generic) and 1 are PTX's global space (function/ takes generic
addressing as global), 3 shared, 4 const, 5 local.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import z3

from ...function.encode import encode_function as encode_ptx
from ...function.unroll import DEFAULT_UNROLL
from ...isa.errors import PtxError
from ...isa.module import Function, Param
from ...llvm.encode import Encoding, concat, encode_function
from ...llvm.errors import LlvmError, Unsupported
from ...llvm.module import IrFunction
from ...llvm.values import FALSE
from ...sem import observe
from ...sem.contraction import is_choice
from ...sem.options import DEFAULT_NAN
from ...sem.sorts import is_nan, is_open_nan_application
from ...solver import check  # check: a Ctrl-C is never an answer
from ..solving import budget as budgets
from ..solving.decide import Query, decide
from ..solving.smt2 import subterms

PTX_SPACE = {0: "global", 1: "global", 3: "shared", 4: "const", 5: "local"}
OBSERVABLE = ("global", "shared")
RETURN = "func_retval0"
# Pointer parameters to memory the call provides (a byval copy is the PTX parameter's own
# bytes, read with ld.param): not modelled; a pointer is otherwise an address in memory.
BY_MEMORY = frozenset({"byval", "byref", "inalloca", "preallocated"})
# The bits a zeroext/signext value is extended to: NVPTX's LowerReturn extends an integer
# narrower than 32 bits to i32 and no further, and its callers pass such arguments as a
# .b32 (what `llc -march=nvptx64` writes); bits above are promised by neither side.
ABI_EXTENT = 32


@dataclass
class Refinement:
    """"refines" (proved), "bounded" (refines for every input on which each loop runs
    at most `unroll` times), "different" (a counterexample, replayed), or "unknown"."""

    verdict: str
    reason: str = ""
    inputs: dict[str, int] = field(default_factory=dict)  # IR parameter -> bits
    # the IR's result as func_retval0 must hold it (a zeroext/signext one extended to the
    # bits compared: `extension` then says how, ("signext", 8))
    ir_result: int | None = None
    ptx_result: int | None = None
    # the PTX function's inputs (parameter reads, special registers) by the names
    # `ptxsmt eval` takes; None when the PTX touches memory (the model's bytes are not kept)
    ptx_inputs: dict[str, int] | None = None
    extension: tuple[str, int] | None = None
    nan: str = DEFAULT_NAN  # the NaN policy compared under (sem.observe)
    up_to_nan_payloads: bool = False  # refines payload-free, not proved bit for bit
    only_nan_payloads: bool = False  # different only in which NaN a float result is
    unroll: int = 0  # --unroll K: each loop ran at most K times
    # the PTX's value is a NaN the ISA leaves open (`sorts.free_nan`), which the PTX may
    # return and the IR forbids; another choice of it would agree
    open_nan: bool = False


def _split(key: str) -> tuple[str, int]:
    base, _, offset = key.partition("+")
    return base, int(offset or 0)


EXTENSIONS = {"zeroext": z3.ZeroExt, "signext": z3.SignExt}


def _extension_kind(attrs: frozenset[str]) -> str | None:
    return next((kind for kind in EXTENSIONS if kind in attrs), None)


def _extension(attrs: frozenset[str], bits: z3.BitVecRef, width: int) -> z3.BitVecRef | None:
    """The IR value widened as zeroext/signext say, to `width` bits but not past
    ABI_EXTENT (never narrowed); None if neither attribute is there."""
    kind = _extension_kind(attrs)
    if kind is None:
        return None
    return EXTENSIONS[kind](max(0, min(width, ABI_EXTENT) - bits.size()), bits)


def linked_params(ir_fn: IrFunction, ptx_fn: Function) -> list[tuple[str, frozenset[str], Param]]:
    """IR parameter N is passed in the PTX function's Nth `.param` (the NVPTX calling
    convention): each IR parameter's name and attributes, and its PTX parameter;
    LlvmError where the two functions have not as many."""
    if len(ptx_fn.params) != len(ir_fn.params):
        raise LlvmError(f"@{ir_fn.name} has {len(ir_fn.params)} parameters, the PTX function "
                        f"{ptx_fn.name} {len(ptx_fn.params)}")
    return [(name, attrs, param) for (name, _), attrs, param
            in zip(ir_fn.params, ir_fn.param_attributes, ptx_fn.params, strict=True)]


def _link_params(ir: Encoding, ir_fn: IrFunction, ptx, ptx_fn: Function
                 ) -> tuple[list[z3.BoolRef], list[tuple[z3.ExprRef, z3.ExprRef]]]:
    """PTX parameter reads equal the IR arguments' bits (extended where the IR says): the
    links, and each read as the IR's terms (its bits above the IR value stay the read's
    own), to put in its place in the query so that the two sides share their terms (a
    `cvt.rn.f64.s64` of the IR's own bits is then the very term of `sitofp`: z3 need not
    show two conversion circuits equal). The links stay in the query: the model still
    gives each read a value, and each substitution holds under them."""
    links, same = [], []
    for name, attrs, param in linked_params(ir_fn, ptx_fn):
        if attrs & BY_MEMORY:  # the IR's pointer to a copy is the PTX's .param bytes
            raise Unsupported("calling convention", f"{' '.join(sorted(attrs & BY_MEMORY))} "
                              f"parameter %{name} of @{ir_fn.name}")
        bits = ir.params[name]
        for key, read in ptx.inputs.items():
            base, offset = _split(key)
            if base != param.name:
                continue
            lo, hi = 8 * offset, 8 * offset + read.size()
            wide = _extension(attrs, bits, max(hi, bits.size())) if hi > bits.size() else bits
            top = min(hi, (wide if wide is not None else bits).size())
            if lo < top:
                source = wide if wide is not None else bits
                links.append(z3.Extract(top - lo - 1, 0, read) == z3.Extract(top - 1, lo, source))
                known = source if (lo, top) == (0, source.size()) else \
                    z3.Extract(top - 1, lo, source)
                same.append((read, known if top - lo == read.size() else z3.Concat(
                    z3.Extract(read.size() - 1, top - lo, read), known)))
    for reg, term in ir.sregs.items():
        if reg in ptx.inputs:
            links.append(ptx.inputs[reg] == term)
            same.append((ptx.inputs[reg], term))
    return links, same


def _return_mismatch(ir: Encoding, ir_fn: IrFunction, ptx, nan: str) -> z3.BoolRef:
    """The PTX's return differs where the IR's lane is not poison: it differs under the
    NaN policy `nan` (a float lane of the IR's return type is a float-typed observation
    point; from both values where the lane may be flushed), or, where the IR's lane is
    any NaN, the PTX's is not a NaN."""
    if ir.result is None:
        return z3.BoolVal(False)
    t = ir_fn.returns
    if t.kind == "struct" and not t.offsets:
        raise Unsupported("calling convention", f"{t.text}: lanes that are not whole bytes")
    # where each lane's bits are in func_retval0: a vector's side by side, an aggregate's
    # fields at their offsets (padding, and a field's bits above its width, are free)
    at_bit = [8 * o for o in t.offsets] if t.kind == "struct" else \
        [i * x.bits.size() for i, x in enumerate(ir.result)]
    wanted = {at + b for at, x in zip(at_bit, ir.result, strict=True)
              for b in range(x.bits.size())}
    bits = concat(ir.result)
    wide = _extension(ir_fn.return_attributes, bits, ABI_EXTENT) if len(ir.result) == 1 \
        else None
    returned: dict[int, z3.BitVecRef] = {}  # bit position -> the PTX's bit there
    out = []
    for key, value in ptx.returns.items():
        base, offset = _split(key)
        if base != RETURN:
            continue
        for b in range(value.size()):
            at = 8 * offset + b
            if at in wanted:
                returned[at] = z3.Extract(b, b, value)
            elif wide is not None and bits.size() <= at < wide.size():  # the extension
                source = z3.Extract(at, at, wide)
                out.append(z3.And(z3.Not(ir.result[0].poison), z3.Extract(b, b, value) != source))
            # above the IR value otherwise: free
    if len(returned) < len(wanted):
        raise Unsupported("calling convention", f"the PTX does not return all of @{ir_fn.name}'s "
                          f"{len(wanted)}-bit result in {RETURN}")
    for lo, lane, leaf in zip(at_bit, ir.result, t.leaves, strict=True):
        fmt, lane_width = leaf.fmt, lane.bits.size()
        got = z3.Concat(*[returned[at] for at in reversed(range(lo, lo + lane_width))]) \
            if lane_width > 1 else returned[lo]
        differs = observe.differ(got, lane.bits, fmt, nan)
        if lane.flushed is not None:  # a denormal result the IR lets flush: either value
            differs = z3.And(differs, observe.differ(got, lane.flushed, fmt, nan))
        if fmt is not None and not z3.is_false(lane.nan):
            differs = z3.If(lane.nan, z3.Not(is_nan(got, fmt)), differs)
        out.append(z3.And(z3.Not(lane.poison), differs))
    return z3.Or(*out)


def _memory(ir: Encoding, ptx) -> tuple[list[z3.BoolRef], z3.BoolRef]:
    """Initial memories linked; a byte of observable memory that differs at the end,
    where the IR's byte is not poison."""
    spaces: dict[str, int] = {}
    for s in ir.initial_memory:
        if s not in PTX_SPACE:
            raise Unsupported("address space", f"addrspace({s})")
        if PTX_SPACE[s] in spaces:
            raise Unsupported("address space", f"addrspace({spaces[PTX_SPACE[s]]}) and "
                              f"addrspace({s}) both map to PTX {PTX_SPACE[s]} memory")
        spaces[PTX_SPACE[s]] = s
    links, out = [], []
    at = z3.BitVec("refine.address", 64)
    for space in sorted(set(spaces) | set(ptx.memory)):
        if space not in OBSERVABLE and space in ptx.memory and space not in spaces:
            continue
        ir_start = ir.initial_memory[spaces[space]].bytes if space in spaces else None
        ptx_start = ptx.memory.get(space)
        if ir_start is not None and ptx_start is not None:
            if ir_start.domain() != ptx_start.domain():
                raise Unsupported("address space", f"addrspace({spaces[space]}) addresses "
                                  f"are {ir_start.domain().size()}-bit in the IR and "
                                  f"{ptx_start.domain().size()}-bit in PTX {space} memory")
            links.append(ir_start == ptx_start)
        if space not in OBSERVABLE:
            continue
        start = ir_start if ir_start is not None else ptx_start
        ir_end = ir.memory[spaces[space]] if space in spaces else None
        ptx_end = ptx.final.get(space, start)
        ir_bytes = ir_end.bytes if ir_end is not None else start
        poison = z3.Select(ir_end.poison, at) if ir_end is not None else z3.BoolVal(False)
        out.append(z3.And(z3.Not(poison), z3.Select(ir_bytes, at) != z3.Select(ptx_end, at)))
    return links, z3.Or(z3.BoolVal(False), *out)


def _ptx_undefined(ptx) -> tuple[list[z3.BoolRef], z3.BoolRef]:
    """What the PTX encoding assumes of its inputs, and when the PTX itself is undefined
    (a `trap`, a jump-table index out of range): that refines no defined IR behaviour."""
    assumed = [a.holds for a in ptx.assumed]
    undefined = [u.when for u in ptx.undefined]
    return assumed, z3.Or(z3.BoolVal(False), *undefined)


def ir_refines(ir_fn: IrFunction, ptx_fn: Function, timeout_ms: int = 30_000,
               solver: str = "z3",
               emit: Callable[[list[z3.BoolRef]], None] | None = None,
               nan: str = DEFAULT_NAN, unroll: int = 0) -> Refinement:
    """Decided by the verifier core's one policy (`smt.decide`; `solver` is its `how`:
    "auto" hands a quantifier-free query z3 has not answered alone to bitwuzla, often
    far quicker on floats and on memory's arrays). `emit` receives the query's
    assertions before it is asked (`--emit-smt2`); `nan`: the NaN policy at the IR's
    float return lanes (`sem.observe`). Payload-free, a proof
    is "refines up to NaN payloads" unless the bits are proved equal too; exact, a
    counterexample that vanishes payload-free is "different" only in NaN payloads.
    `unroll` K: each loop of either side runs at most K times, and a proof is "bounded"
    where some input would run one more often; 0: up to DEFAULT_UNROLL times, and such
    a proof "unknown"."""
    asked, unroll = unroll, unroll or DEFAULT_UNROLL
    ir = encode_function(ir_fn, unroll)
    try:
        ptx = encode_ptx(ptx_fn, unroll=unroll)
    except PtxError as e:  # PTX ptxsmt cannot follow (yet): no verdict
        return Refinement("unknown", f"PTX: {e}", nan=nan)
    # where a loop would run once more than unrolled: no verdict speaks of those inputs
    beyond = [*ir.bounded, *((f"line {u.line} ({u.text})", u.when) for u in ptx.bounded)]
    compared = z3.Not(z3.Or(FALSE, *[when for _, when in beyond]))
    links, same = _link_params(ir, ir_fn, ptx, ptx_fn)
    mem_links, mem_mismatch = _memory(ir, ptx)
    assumed, ptx_undefined = _ptx_undefined(ptx)
    links += assumed

    def shared(term: z3.BoolRef) -> z3.BoolRef:
        return z3.substitute(term, *same) if same else term
    def under(policy: str) -> z3.BoolRef:
        return shared(z3.And(z3.Not(ir.ub), compared,
                             z3.Or(_return_mismatch(ir, ir_fn, ptx, policy), mem_mismatch,
                                   ptx_undefined)))
    body = under(nan)
    # a counterexample must hold for every choice the IR leaves open
    bad = _for_every_choice(ir.choices, body)
    links += mem_links
    decision = decide(Query((*links, bad), solver, timeout_ms / 1000), emit)
    answer, model = decision.result, decision.model
    if answer == z3.unsat:
        reached = {where: None for where, when in beyond
                   if _reachable([*links, when], timeout_ms)}
        at = f"(at {', '.join(reached)})"
        if reached and not asked:
            return Refinement("unknown", f"refines up to {unroll} iterations of each loop {at}, "
                              "not beyond; give --unroll K to compare up to K", nan=nan)
        proved = Refinement("bounded", f"loops that run more than {unroll} times {at} are "
                            "not compared", nan=nan, unroll=unroll) if reached else \
            Refinement("refines", nan=nan)
        if nan == "exact" or not _float_return(ir_fn):
            return proved
        # proved payload-free; bit for bit too? (a timeout keeps the weaker claim)
        exact = _for_every_choice(ir.choices, under("exact"))
        bits = decide(Query((*links, exact), solver,
                            min(timeout_ms / 1000, observe.BIT_FOR_BIT_SECONDS))).result
        proved.up_to_nan_payloads = bits != z3.unsat
        return proved
    if answer == z3.unknown:
        return Refinement("unknown", f"solver: {decision.reason}", nan=nan)
    inputs = {n: model.eval(b, model_completion=True).as_long() for n, b in ir.params.items()}
    if ptx.uninterpreted:  # the counterexample may rest on a meaning they do not have
        return Refinement("unknown", "the PTX uses instructions ptxsmt does not model: "
                          + "; ".join(sorted(ptx.uninterpreted)[:3]), inputs, nan=nan)
    # the IR's own open NaNs (an NVVM intrinsic means a PTX instruction: llvm/nvvm.py)
    # are the IR's choice: never held
    free = _open_nan_names(ir)
    if not _replayed(model, links, body, ir.choices, timeout_ms, free):
        return Refinement("unknown", "a counterexample did not replay", inputs, nan=nan)
    # exact: a difference that vanishes payload-free is only in which NaN the result is
    # (the PTX ISA leaves NaN bits open in places: abs/neg "yield an unspecified NaN")
    only_nans = nan == "exact" and not _replayed(model, links, under("payload-free"),
                                                 ir.choices, timeout_ms, free)
    # one that vanishes when the open NaNs are free again rests on the ISA leaving them
    # open: the PTX may return that NaN (a refinement's counterexample), and may not
    open_nan = not _replayed(model, links, body, ir.choices, timeout_ms, None)

    def value(term):
        v = model.eval(term, model_completion=True)
        return v.as_long() if z3.is_bv_value(v) else None
    ptx_ret = ptx.returns.get(RETURN)
    # a zeroext/signext return is compared extended to the bits the PTX writes: shown so,
    # a difference only in the extension bits is seen in the numbers printed
    extended = _extension(ir_fn.return_attributes, concat(ir.result), ptx_ret.size()) \
        if ir.result and len(ir.result) == 1 and ptx_ret is not None else None
    extension = None if extended is None or extended.size() == ir.result[0].bits.size() \
        else (_extension_kind(ir_fn.return_attributes), ir.result[0].bits.size())

    def ir_value() -> int | None:
        """The IR's result as func_retval0 holds it: an aggregate's fields at their
        offsets (padding 0), a vector's lanes side by side, a zeroext/signext value
        extended."""
        t = ir_fn.returns
        if t.kind != "struct":
            return value(concat(ir.result) if extended is None else extended)
        lanes = [value(x.bits) for x in ir.result]
        return None if None in lanes else \
            sum(v << 8 * at for v, at in zip(lanes, t.offsets, strict=True))
    ptx_inputs = None if ptx.memory else {k: value(v) for k, v in ptx.inputs.items()}
    if ptx_inputs is not None and None in ptx_inputs.values():
        ptx_inputs = None
    return Refinement("different", "", inputs, ir_value() if ir.result else None,
                      value(ptx_ret) if ptx_ret is not None else None, ptx_inputs, extension,
                      nan, only_nan_payloads=only_nans, open_nan=open_nan)


def _reachable(assertions: list, timeout_ms: int) -> bool:
    """Some input takes a branch past the unrolling bound (an unknown counts as yes)."""
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*assertions)
    return check(s) != z3.unsat


def _float_return(ir_fn: IrFunction) -> bool:
    """Some lane of the IR's return value is a float: the NaN policy matters."""
    t = ir_fn.returns
    return t is not None and any(leaf.fmt is not None for leaf in t.leaves)


EXPANDED_FLAGS = 3  # at most this many Boolean choices are expanded, not quantified


def _for_every_choice(choices: list, body: z3.BoolRef) -> z3.BoolRef:
    """`body` for every choice: a few Boolean choices (a denormal flushed or not,
    fmuladd fused or not) are expanded, ForAll c. B = B[c:=true] and B[c:=false]; the
    others are quantified (a quantified query is z3's alone: `portfolio.unreadable`)."""
    flags = [c for c in choices if z3.is_bool(c)][:EXPANDED_FLAGS]
    for c in flags:
        body = z3.And(z3.substitute(body, (c, z3.BoolVal(True))),
                      z3.substitute(body, (c, z3.BoolVal(False))))
    rest = [c for c in choices if not any(c.eq(f) for f in flags)]
    return z3.ForAll(rest, body) if rest else body


def _open_nan_names(ir: Encoding) -> frozenset[str]:
    """The names of the open NaNs (`sorts.free_nan`) in the IR's own terms."""
    terms = [ir.ub, *(m.bytes for m in ir.memory.values())]
    for lane in ir.result or ():
        terms += [t for t in (lane.bits, lane.poison, lane.nan, lane.flushed) if t is not None]
    return frozenset(t.decl().name() for term in terms for t in subterms(term)
                     if is_open_nan_application(t))


def _replayed(model: z3.ModelRef, links: list, body: z3.BoolRef, choices: list,
              timeout_ms: int, free_nans: frozenset[str] | None) -> bool:
    """The counterexample again, every input fixed to its value, and each value the PTX
    leaves to ptxas and the hardware as the model made it: no choice of the IR's open
    values may make it UB or agree. The PTX's open values are the target's nondeterminism
    (Alive2): a PTX that may give a value the IR forbids does not refine it. They are a
    fused-or-not choice (a Boolean function of the operands, sem/contraction.py) and
    each NaN the ISA leaves open (`sorts.free_nan`: "yields an unspecified NaN") but
    those named in `free_nans` (the IR's too: its choice, which may agree); with None,
    no NaN is held. Other uninterpreted values (an unmodelled instruction's) never reach
    here."""
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    chosen = {c.decl().name() for c in choices}
    for d in model.decls():
        if d.arity() == 0 and d.name() not in chosen:
            s.add(d() == model[d])
    for t in subterms(body):
        if is_choice(t) or free_nans is not None and is_open_nan_application(t) and \
                t.decl().name() not in free_nans:
            s.add(t == model.eval(t, model_completion=True))
    s.add(*links, z3.Not(body))
    return check(s) == z3.unsat


@dataclass
class Validated:
    """One IR function of a module and its verdict: a Refinement, or why it was refused."""

    name: str
    refinement: Refinement | None
    refused: Unsupported | None = None
    ptx: Function | None = None  # the PTX function checked, where it was read

    @property
    def verdict(self) -> str:
        return self.refinement.verdict if self.refinement else "refused"


def validate_module(text: str, cpu: str = "sm_80", opt: int = 2,
                    timeout_ms: int = 30_000, only: str | None = None,
                    solver: str = "z3",
                    nan: str = DEFAULT_NAN, features: str = "", unroll: int = 0
                    ) -> tuple[list[str], Iterator[Validated]]:
    """Compile IR `text` with llvmlite's NVPTX backend (`features`: llc's -mattr): the
    functions it defines (or `only` that one) in file order, and their verdicts against
    the PTX they became, each decided when it is asked for. IR that defines no function
    is an error: there is nothing to check."""
    from ...function import read_function
    from ...llvm.module import compile_to_ptx, function_names, parse_module, read_ir
    functions = read_ir(text, only=only)  # with `only`, what it needs alone
    if only is not None and only not in functions:
        defined = function_names(text)
        if defined:
            raise LlvmError(f"no function @{only} in the IR (it defines "
                            f"{', '.join('@' + n for n in defined)})")
    if not functions:
        raise LlvmError("the IR defines no function: nothing to check")
    try:
        ptx = compile_to_ptx(text, cpu=cpu, opt=opt, features=features)
    except LlvmError:
        parse_module(text)  # IR that does not parse: its error, as the reader gives it
        raise
    names = [n for n in functions if only in (None, n)]

    def verdicts() -> Iterator[Validated]:
        for name in names:  # each a pair, answering within its wall cap (`budget.pair`)
            ptx_fn = read_function(ptx, name)
            try:
                with budgets.pair(timeout_ms / 1000):
                    refinement = budgets.bounded(ir_refines, functions[name], ptx_fn,
                                                 timeout_ms, solver, nan=nan, unroll=unroll)
            except budgets.OutOfTime:
                refinement = Refinement("unknown", budgets.OUT_OF_TIME, nan=nan)
            except Unsupported as e:
                yield Validated(name, None, e, ptx=ptx_fn)
                continue
            yield Validated(name, refinement, ptx=ptx_fn)
    return names, verdicts()
