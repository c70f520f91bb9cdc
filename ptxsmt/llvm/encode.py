"""One IR function as terms: walk its blocks in topological order (loops unrolled K
times, `loops.py`), keep a path condition per block copy and per edge, give every
instruction its value lanes, and collect undefined behaviour as a condition of the inputs.

Memory is bytes, little-endian, one array per address space (as function/ models PTX
state spaces), with a parallel array saying which bytes hold poison. A load or store
through a poison or null (address space 0) or misaligned pointer is undefined.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import z3

from ..isa.types import F32, FloatFormat
from . import floating as fl
from . import integer as it
from . import intrinsics as intr
from . import nvvm, reader
from .errors import Unsupported
from .floating import IEEE
from .loops import Copy, Unrolled
from .module import NVPTX64_DATALAYOUT, IrFunction, IrType, address, ir_function, ir_type
from .values import FALSE, Choices, Lane, Value, any_poison, bool_bits, float_lane, pick

ADDRESS = z3.BitVecSort(64)


@dataclass(frozen=True)
class Memory:
    bytes: z3.ArrayRef
    poison: z3.ArrayRef

    @staticmethod
    def initial(space: int) -> Memory:
        """The memory the function starts with: free bytes, none of them poison."""
        return Memory(z3.Array(f"mem.{space}", ADDRESS, z3.BitVecSort(8)),
                      z3.K(ADDRESS, FALSE))


@dataclass
class Encoding:
    """The terms of one IR function: `params` are its inputs by name (bits), `result`
    the returned lanes (None for void), `ub` when it is undefined, `memory` the memory
    it leaves by address space, `sregs` the special registers it reads, `choices` the
    values the IR leaves open (undef, freeze of poison, NaN bits, nsz signs)."""

    function: IrFunction
    params: dict[str, z3.BitVecRef]
    result: Value | None
    ub: z3.BoolRef
    memory: dict[int, Memory]
    initial_memory: dict[int, Memory]
    sregs: dict[str, z3.BitVecRef] = field(default_factory=dict)
    choices: list[z3.ExprRef] = field(default_factory=list)
    # where a loop would run an unroll+1st time: (the branch back, on which inputs)
    bounded: list[tuple[str, z3.BoolRef]] = field(default_factory=list)


def lanes_of(bits: z3.BitVecRef, t: IrType) -> Value:
    """The lanes of a value whose bits are `bits`: a vector's side by side, lane 0 in the
    low bits; an aggregate's from its memory image (each at its offset, padding unread)."""
    if t.kind == "struct":
        if not t.offsets:
            raise Unsupported("calling convention", f"{t.text}: lanes that are not whole "
                              "bytes (a vector of i1)")
        return tuple(Lane(z3.Extract(8 * at + x.width - 1, 8 * at, bits))
                     for at, x in zip(t.offsets, t.leaves, strict=True))
    return tuple(Lane(z3.Extract(i * t.width + t.width - 1, i * t.width, bits))
                 for i in range(t.lanes)) if t.lanes > 1 else (Lane(bits),)


def image_width(t: IrType) -> int:
    """Bits of a parameter of type `t`: an aggregate's memory image, padding included."""
    return 8 * t.size if t.kind == "struct" else t.width * t.lanes


def concat(value: Value) -> z3.BitVecRef:
    """A value's bits as one bit-vector, lane 0 in the low bits (little-endian order)."""
    return z3.Concat(*[x.bits for x in reversed(value)]) if len(value) > 1 else value[0].bits


def encode_function(fn: IrFunction, unroll: int = 0) -> Encoding:
    """`unroll` K: each loop runs at most K times (`loops.py`); 0: a loop is refused."""
    if fn.refused is not None:
        raise fn.refused
    return _Encoder(fn, unroll=unroll).run()


INLINE_DEPTH = 8  # calls of this module's functions nested deeper are refused (recursion)


class _Encoder:
    def __init__(self, fn: IrFunction, caller: _Encoder | None = None,
                 args: list[Value] | None = None, unroll: int = 0):
        """`fn` alone (its parameters are inputs), or called by `caller` with `args`
        (sharing its choices, special registers and unrolling)."""
        self.fn = fn
        self.unroll = caller.unroll if caller else unroll
        self.choices = caller.choices if caller else Choices()
        self.depth = caller.depth + 1 if caller else 0
        self.values: dict[int, Value] = {}
        # values computed inside a loop, one instance per iteration: those the current
        # block copy sees, address -> (instance, lanes); `parts`: an instance that joins
        # others (after a loop) -> (edge, instance) pairs, so each keeps its own choices
        self.local: dict[int, tuple[object, Value]] = {}
        self.parts: dict[object, list[tuple[z3.BoolRef, tuple[object, Value]]]] = {}
        # by value instance (`_instance`): values whose "any NaN" bits, whose flushing
        # were chosen
        self.exposed: dict[object, Value] = {}
        self.unflushed: dict[object, Value] = {}
        self.defs: dict[int, object] = {}  # the instruction that computed each value
        self.ub: list[z3.BoolRef] = []
        self.sregs: dict[str, z3.BitVecRef] = caller.sregs if caller else {}
        self.params = {}
        for k, ((name, t), arg) in enumerate(zip(fn.params, fn.value.arguments, strict=True)):
            if args is not None:
                self.values[address(arg)] = args[k]
                continue
            bits = z3.BitVec(f"%{name}", image_width(t))  # apart from PTX names
            self.params[name] = bits
            self.values[address(arg)] = lanes_of(bits, t)

    # ---- the CFG ------------------------------------------------------------------------

    def _order(self) -> list[Copy]:
        """Block copies in topological order, each loop unrolled `self.unroll` times."""
        self.blocks = {address(b): b for b in self.fn.value.blocks}
        succs = {k: [address(o) for o in _terminator(b).operands
                     if o.value_kind.name == "basic_block"] for k, b in self.blocks.items()}
        entry = address(next(iter(self.fn.value.blocks)))
        self.unrolled = Unrolled(entry, succs, self.unroll, self.fn.name)
        self.looped = {address(ins) for body in self.unrolled.bodies.values() for b in body
                       for ins in self.blocks[b].instructions}
        return self.unrolled.order

    def run(self) -> Encoding:
        self.denormal = _fp_environment(self.fn)
        copies = self._order()
        reached = {self.blocks[b] for b, _ in copies}
        spaces = sorted({reader.address_space(str(o.type)) for b in reached
                         for ins in b.instructions
                         if ins.opcode in ("load", "store") for o in ins.operands
                         if o.type.is_pointer})
        initial = {s: Memory.initial(s) for s in spaces}
        self.edges: dict[tuple[Copy, Copy | None], z3.BoolRef] = {}  # None: past the bound
        self.mem_out: dict[Copy, dict[int, Memory]] = {}
        self.local_out: dict[Copy, dict[int, tuple[object, Value]]] = {}
        returns: list[tuple[z3.BoolRef, Value | None, dict[int, Memory]]] = []
        for n, key in enumerate(copies):
            incoming = [(p, c) for (p, s), c in self.edges.items() if s == key]
            self.path = z3.BoolVal(True) if n == 0 else z3.Or(*[c for _, c in incoming])
            self.block = key
            self.memory = initial if n == 0 else {
                s: _join([(c, self.mem_out[p][s]) for p, c in incoming]) for s in spaces}
            self.local = self._joined(incoming)
            for ins in self.blocks[key[0]].instructions:
                out = self._instruction(ins)
                if ins.opcode == "ret":
                    returns.append((self.path, out, self.memory))
                elif out is not None:
                    if address(ins) in self.looped:  # one instance per iteration
                        self.local[address(ins)] = ((address(ins), key), out)
                    else:
                        self.values[address(ins)] = out
                    self.defs[address(ins)] = ins
            self.mem_out[key] = self.memory
            self.local_out[key] = self.local
        bounded = [(f"%{self.blocks[p[0]].name}: {str(_terminator(self.blocks[p[0]])).strip()}",
                    c) for (p, s), c in self.edges.items() if s is None]
        if not returns:  # every path ends in `unreachable` (already UB) or UB
            return Encoding(self.fn, self.params, None, z3.BoolVal(True), initial, initial,
                            self.sregs, self.choices.made, bounded)
        result = None
        if self.fn.returns.kind != "void":
            result = returns[-1][1]
            for path, value, _ in reversed(returns[:-1]):
                result = tuple(pick(path, a, b) for a, b in zip(value, result, strict=True))
        final = {s: _join([(p, m[s]) for p, _, m in returns]) for s in spaces}
        return Encoding(self.fn, self.params, result, z3.Or(FALSE, *self.ub), final, initial,
                        self.sregs, self.choices.made, bounded)

    def _joined(self, incoming: list[tuple[Copy, z3.BoolRef]]
                ) -> dict[int, tuple[object, Value]]:
        """The loop values a block copy sees: its predecessors' (a value one of them lacks
        does not dominate the block: no use reads it); one that differs by edge, as that
        edge's (after a loop: the iteration that left it)."""
        seen = [(c, self.local_out[p]) for p, c in incoming]
        if len(seen) <= 1:
            return dict(seen[0][1]) if seen else {}
        out = {}
        for a in set.intersection(*(set(m) for _, m in seen)):
            each = [(c, m[a]) for c, m in seen]
            if all(x[0] == each[0][1][0] for _, x in each):
                out[a] = each[0][1]
                continue
            lanes = each[-1][1][1]
            for c, (_, v) in reversed(each[:-1]):
                lanes = tuple(pick(c, x, y) for x, y in zip(v, lanes, strict=True))
            key = (a, self.block)
            self.parts[key] = each
            out[a] = (key, lanes)
        return out

    def _instance(self, o) -> object:
        """The key of the value `o` stands for here: its address, or inside a loop the
        instance this block copy sees."""
        a = address(o)
        return self.local[a][0] if a in self.local else a

    def _chosen(self, cache: dict, key: object, value: Value, make: Callable) -> Value:
        """`make(value)`, made once per value instance; an instance that joins others is
        theirs by edge (each iteration's value keeps the choices its other uses saw)."""
        if key not in cache:
            if key in self.parts:
                *rest, (_, last) = self.parts[key]
                out = self._chosen(cache, *last, make)
                for c, part in reversed(rest):
                    out = tuple(pick(c, x, y) for x, y in
                                zip(self._chosen(cache, *part, make), out, strict=True))
                cache[key] = out
            else:
                cache[key] = make(value)
        return cache[key]

    # ---- operands -------------------------------------------------------------------------

    def operand(self, o) -> Value:
        """An operand whose bits are seen: an "any NaN" lane becomes a chosen NaN, a lane
        that may be flushed flushed or not (the same choices at every such use)."""
        value = self.settled(o)
        if all(z3.is_false(x.nan) for x in value):
            return value
        leaves = ir_type(o.type).leaves
        return self._chosen(self.exposed, self._instance(o), value, lambda v: tuple(
            self.choices.exposed(x, t.fmt) for x, t in zip(v, leaves, strict=True)))

    def settled(self, o) -> Value:
        """An operand with "flushed or not" (`Lane.flushed`) decided: one choice per
        value, shared by all its uses that tell the two apart."""
        value = self.raw(o)
        if all(x.flushed is None for x in value):
            return value
        return self._chosen(self.unflushed, self._instance(o), value,
                            lambda v: tuple(self.choices.unflushed(x) for x in v))

    def float_operand(self, o) -> Value:
        """An operand of a floating-point operation: where this function reads a denormal
        as the same zero its results flush to, flushed or not reads the same (raw);
        otherwise settled."""
        value = self.raw(o)
        if all(x.flushed is None for x in value):
            return value
        mode = self.denormal(ir_type(o.type).fmt)
        return value if mode.input == mode.output else self.settled(o)

    def raw(self, o) -> Value:
        """An operand as its lanes are, for uses that only ask whether it is a NaN."""
        kind = o.value_kind.name
        if kind in ("argument", "instruction"):
            a = address(o)
            return self.local[a][1] if a in self.local else self.values[a]
        if not o.is_constant or kind == "constant_expr":
            raise Unsupported("operand", str(o).strip())
        return self._constant(o, ir_type(o.type))

    def _constant(self, o, t: IrType) -> Value:
        if t.kind == "struct":
            return self._aggregate_constant(reader.aggregate_constant(str(o)), t)
        words = reader.constant_words(str(o), str(o.type))
        if len(words) == 1 and t.lanes > 1:
            words = words * t.lanes
        return tuple(self._constant_lane(w, t.scalar) for w in words)

    def _aggregate_constant(self, tree: str | list, t: IrType) -> Value:
        """A struct, array or vector constant from reader.aggregate_constant's tree: one
        word (poison, undef, zeroinitializer) for all its lanes, else one per field."""
        if isinstance(tree, str):
            if t.kind == "struct" and tree not in (reader.POISON, reader.UNDEF,
                                                    "zeroinitializer"):
                raise Unsupported("constant", f"{t.text} {tree}")
            return tuple(self._constant_lane(tree, x) for x in t.leaves)
        if t.kind != "struct":  # a vector's lanes
            if len(tree) != t.lanes or not all(isinstance(w, str) for w in tree):
                raise Unsupported("constant", f"{t.text} {tree}")
            return tuple(self._constant_lane(w, t.scalar) for w in tree)
        if len(tree) != len(t.fields):
            raise Unsupported("constant", f"{t.text} with {len(tree)} fields")
        return tuple(x for sub, f in zip(tree, t.fields, strict=True)
                     for x in self._aggregate_constant(sub, f))

    def _constant_lane(self, word: str, t: IrType) -> Lane:
        if word == reader.POISON:
            return Lane(z3.BitVecVal(0, t.width), z3.BoolVal(True))
        if word == reader.UNDEF:  # "undef ... may be a different value for every use"
            return Lane(self.choices.bits("undef", t.width))
        if word in ("zeroinitializer", "null", "false"):
            return Lane(z3.BitVecVal(0, t.width))
        if word == "true":
            return Lane(z3.BitVecVal(1, t.width))
        if t.kind == "float":
            fmt = t.fmt
            return Lane(z3.BitVecVal(reader.float_literal(word, fmt.width, fmt.ebits, fmt.sbits),
                                     fmt.width))
        try:
            return Lane(z3.BitVecVal(int(word), t.width))
        except ValueError:
            raise Unsupported("constant", word) from None

    def _input(self, bits: z3.BitVecRef, fmt) -> z3.FPRef:
        """An operand of a floating-point operation as it reads it: a denormal is zero
        where the function's denormal mode says inputs are flushed."""
        return fl.view(fl.flush_input(bits, fmt, self.denormal(fmt)), fmt)

    def _ub(self, cond: z3.BoolRef) -> None:
        self.ub.append(z3.And(self.path, cond))

    # ---- instructions ---------------------------------------------------------------------

    def _instruction(self, ins) -> Value | None:
        op = ins.opcode
        printed = reader.instruction(str(ins))
        if op in it.BINARY:
            return self._int_binary(ins, printed)
        if op in fl.BINARY or op == "fneg":
            return self._float_arith(ins, printed)
        handler = getattr(self, f"_{op}", None)
        if handler is None:
            raise Unsupported("instruction", op)
        return handler(ins, printed)

    def _lanewise(self, fn, *values: Value) -> Value:
        n = max(len(v) for v in values)
        return tuple(fn(*[v[i] if len(v) > 1 else v[0] for v in values]) for i in range(n))

    def _int_binary(self, ins, p: reader.Printed) -> Value:
        op = ins.opcode
        a, b = (self.operand(o) for o in ins.operands)

        def lane(x: Lane, y: Lane) -> Lane:
            poison = [x.poison, y.poison]
            poison += [it.FLAG_POISON[op, f](x.bits, y.bits) for f in sorted(p.flags)
                       if (op, f) in it.FLAG_POISON]
            if op in it.SHIFTS:
                poison.append(it.shift_poison(x.bits, y.bits))
            if op in it.DIVISIONS:
                self._ub(it.division_ub(op, x.bits, y.bits, x.poison, y.poison))
            return Lane(it.BINARY[op](x.bits, y.bits), z3.Or(*poison))
        return self._lanewise(lane, a, b)

    def _fast_math(self, p: reader.Printed, compare: bool = False) -> frozenset[str]:
        """The flags; those that license rewrites are refused, except on a compare, a
        select or a phi, whose value they cannot change."""
        refused = p.flags & fl.FAST_MATH_REFUSED if not compare else frozenset()
        if refused:
            raise Unsupported("fast-math", f"{' '.join(sorted(refused))} on {p.opcode}")
        return p.flags

    def _contractions(self, ins, p: reader.Printed) -> list[tuple[int, list[Value], bool]]:
        """The operands of a `contract` fadd/fsub that a `contract` fmul (or its fneg)
        computes: (operand index, the fmul's operands, whether the product is negated)."""
        if ins.opcode not in ("fadd", "fsub") or "contract" not in p.flags:
            return []
        out = []
        for k, o in enumerate(ins.operands):
            src, negated = self.defs.get(address(o)), False
            if src is not None and src.opcode == "fneg":
                src, negated = self.defs.get(address(next(iter(src.operands)))), True
            if src is not None and src.opcode == "fpext":
                inner = self.defs.get(address(next(iter(src.operands))))
                if inner is not None and inner.opcode == "fmul" and \
                        "contract" in reader.instruction(str(inner)).flags:
                    raise Unsupported("fast-math", "contract through fpext")
            if src is not None and src.opcode == "fmul" and \
                    "contract" in reader.instruction(str(src)).flags:
                out.append((k, [self.float_operand(x) for x in src.operands], negated))
        return out

    def _float_arith(self, ins, p: reader.Printed) -> Value:
        t = ir_type(ins.type)
        fmt, flags = t.fmt, self._fast_math(p)
        args = [(self.raw if ins.opcode == "fneg" else self.float_operand)(o)
                for o in ins.operands]
        contractions = self._contractions(ins, p)

        mode = self.denormal(fmt)

        def fusions(i: int, views: list[z3.FPRef]) -> list[z3.FPRef]:
            """The fused results of lane i, one per contractible product."""
            out = []
            for k, (x, y), negated in contractions:
                u, v = (self._input((x[i] if len(x) > 1 else x[0]).bits, fmt),
                        self._input((y[i] if len(y) > 1 else y[0]).bits, fmt))
                if negated != (ins.opcode == "fsub" and k == 1):
                    u = z3.fpNeg(u)
                other = views[1 - k]
                if ins.opcode == "fsub" and k == 0:
                    other = z3.fpNeg(other)
                out.append(fl.fused(u, v, other))
            return out

        def lane(i: int, *xs: Lane) -> Lane:
            if ins.opcode == "fneg":  # the negation of any NaN is any NaN; a bit operation
                bits, nan = fl.fneg(xs[0].bits), xs[0].nan
                flushed = None if xs[0].flushed is None else fl.fneg(xs[0].flushed)
                views, r = [fl.view(xs[0].bits, fmt)], fl.view(bits, fmt)
            else:
                views = [self._input(x.bits, fmt) for x in xs]
                r = fl.BINARY[ins.opcode](*views)
                for alternative in fusions(i, views):
                    r = z3.If(self.choices.flag("contract"), alternative, r)
                bits = fl.result_bits(r, fmt)
                flushed, nan = fl.flushed_output(bits, fmt, mode), z3.fpIsNaN(r)
            if "nsz" in flags:
                bits, flushed = self._nsz(bits, flushed)
            poison = z3.Or(any_poison(*xs), fl.fast_math_poison(flags, [*views, r]))
            return Lane(bits, poison, nan, flushed)
        n = max(len(a) for a in args)
        return tuple(lane(i, *[a[i] if len(a) > 1 else a[0] for a in args]) for i in range(n))

    def _nsz(self, bits, flushed):
        """`nsz` on a result and on the zero it may flush to: one sign for both."""
        sign = self.choices.bits("nsz", 1)
        return fl.nsz(bits, sign), None if flushed is None else fl.nsz(flushed, sign)

    def _moved(self, flags: frozenset[str], fmt: FloatFormat, out: Lane) -> Lane:
        """The fast-math flags of an instruction that passes a float on (select, phi, a
        call's result): `nnan`/`ninf` make a NaN/infinite value poison, and under `nsz`
        a zero is either zero."""
        poison = z3.Or(out.poison, fl.fast_math_poison(flags, [fl.view(out.bits, fmt)]))
        bits, flushed = self._nsz(out.bits, out.flushed) if "nsz" in flags else \
            (out.bits, out.flushed)
        return Lane(bits, poison, out.nan, flushed)

    def _icmp(self, ins, p: reader.Printed) -> Value:
        a, b = (self.operand(o) for o in ins.operands)

        def lane(x: Lane, y: Lane) -> Lane:
            poison = [x.poison, y.poison]
            if "samesign" in p.flags:
                poison.append(it.samesign_poison(x.bits, y.bits))
            return Lane(bool_bits(it.ICMP[p.predicate](x.bits, y.bits)), z3.Or(*poison))
        return self._lanewise(lane, a, b)

    def _fcmp(self, ins, p: reader.Printed) -> Value:
        fmt = ir_type(next(iter(ins.operands)).type).fmt
        flags = self._fast_math(p, compare=True)
        a, b = (self.float_operand(o) for o in ins.operands)

        def lane(x: Lane, y: Lane) -> Lane:
            u, v = self._input(x.bits, fmt), self._input(y.bits, fmt)
            poison = z3.Or(x.poison, y.poison, fl.fast_math_poison(flags, [u, v]))
            return Lane(bool_bits(fl.fcmp(p.predicate, u, v)), poison)
        return self._lanewise(lane, a, b)

    def _select(self, ins, p: reader.Printed) -> Value:
        """"If the condition is an i1 and it evaluates to 1, the instruction returns the
        first value argument; otherwise, it returns the second value argument." Poison
        only from the condition and the chosen arm."""
        c, a, b = (self.raw(o) for o in ins.operands)

        def lane(k: Lane, x: Lane, y: Lane) -> Lane:
            out = pick(k.bits == 1, x, y)
            return replace(out, poison=z3.Or(k.poison, out.poison))
        return self._moved_value(ins, p, self._lanewise(lane, c, a, b))

    def _moved_value(self, ins, p: reader.Printed, value: Value, only_moves: bool = True) -> Value:
        """`_moved` on each lane of a float result; where the instruction only moves a
        value (select, phi) any flag is allowed: one that licenses rewrites cannot change
        it."""
        t = ir_type(ins.type) if p.flags else None
        if t is None or t.kind != "float":
            return value
        flags = self._fast_math(p, compare=only_moves)
        return tuple(self._moved(flags, t.fmt, x) for x in value)

    def _freeze(self, ins, p: reader.Printed) -> Value:
        """"If the argument is undef or poison, 'freeze' returns an arbitrary, but fixed,
        value of type 'ty'. Otherwise, this instruction is a no-op." """
        (a,) = (self.operand(o) for o in ins.operands)
        return tuple(Lane(z3.If(x.poison, self.choices.bits("freeze", x.bits.size()), x.bits))
                     for x in a)

    def _phi(self, ins, p: reader.Printed) -> Value:
        """"the value specified by the pair corresponding to the predecessor basic block
        that executed just prior to the current block" """
        pairs = []
        for o, blk in zip(ins.operands, ins.incoming_blocks, strict=True):
            for (source, dest), cond in self.edges.items():  # each copy of that block
                if dest == self.block and source[0] == address(blk):
                    pairs.append((cond, self._read_at(source, o)))
        out = pairs[-1][1]
        for cond, v in reversed(pairs[:-1]):
            out = tuple(pick(cond, x, y) for x, y in zip(v, out, strict=True))
        return self._moved_value(ins, p, out)

    def _read_at(self, copy: Copy, o) -> Value:
        """`o` as block copy `copy` left it (a phi reads its operand on the edge)."""
        here, self.local = self.local, self.local_out[copy]
        try:
            return self.raw(o)
        finally:
            self.local = here

    # ---- terminators ----------------------------------------------------------------------

    def _br(self, ins, p: reader.Printed) -> None:
        ops = list(ins.operands)
        if len(ops) == 1:
            self.edges[self.block, self._to(ops[0])] = self.path
            return
        (c,), false, true = self.operand(ops[0]), self._to(ops[1]), self._to(ops[2])
        self._ub(c.poison)  # "Branching on poison is undefined behavior"
        taken = c.bits == 1
        self.edges[self.block, true] = z3.And(self.path, taken)
        self.edges[self.block, false] = z3.Or(
            self.edges.get((self.block, false), FALSE), z3.And(self.path, z3.Not(taken)))

    def _switch(self, ins, p: reader.Printed) -> None:
        """"the specified value is compared against each case value; if a match is found,
        control flows to the corresponding destination, otherwise to the default
        destination. ... If 'value' is poison, the behavior is undefined." """
        value, default, *dests = list(ins.operands)
        (x,) = self.operand(value)
        self._ub(x.poison)
        taken = []
        for case, dest in zip(reader.switch_cases(str(ins)), dests, strict=True):
            hit = x.bits == z3.BitVecVal(case, x.bits.size())
            taken.append(hit)
            self._edge(self._to(dest), hit)
        self._edge(self._to(default), z3.Not(z3.Or(FALSE, *taken)))

    def _to(self, block) -> Copy | None:
        """The copy of `block` a branch from here goes to (None: past the bound)."""
        return self.unrolled.target(self.block, address(block))

    def _edge(self, dest: Copy | None, when: z3.BoolRef) -> None:
        """One more way from this block to `dest` (cases may share a destination)."""
        key = (self.block, dest)
        self.edges[key] = z3.Or(self.edges.get(key, FALSE), z3.And(self.path, when))

    def _ret(self, ins, p: reader.Printed) -> Value | None:
        ops = list(ins.operands)
        return self.raw(ops[0]) if ops else None

    def _unreachable(self, ins, p: reader.Printed) -> None:
        self._ub(z3.BoolVal(True))  # "the behavior is undefined" when executed

    # ---- casts ----------------------------------------------------------------------------

    def _int_cast(self, ins, p: reader.Printed) -> Value:
        op, t = ins.opcode, ir_type(ins.type)
        (a,) = (self.operand(o) for o in ins.operands)
        to = {"trunc": it.trunc, "zext": it.zext, "sext": it.sext,
              "ptrtoint": _resize, "inttoptr": _resize}[op]

        def lane(x: Lane) -> Lane:
            poison = [x.poison] + [it.CAST_FLAG_POISON[op, f](x.bits, t.width)
                                   for f in sorted(p.flags) if (op, f) in it.CAST_FLAG_POISON]
            return Lane(to(x.bits, t.width), z3.Or(*poison))
        return self._lanewise(lane, a)

    _trunc = _zext = _sext = _ptrtoint = _inttoptr = _int_cast

    def _float_cast(self, ins, p: reader.Printed) -> Value:
        op, t = ins.opcode, ir_type(ins.type)
        src = ir_type(next(iter(ins.operands)).type)
        flags = self._fast_math(p)
        (a,) = ((self.float_operand if src.kind == "float" else self.raw)(o)
                for o in ins.operands)

        def lane(x: Lane) -> Lane:
            poison, flushed = [x.poison], None
            if op in ("fptosi", "fptoui"):
                bits, out_of_range = fl.fptoi(self._input(x.bits, src.fmt), t.width,
                                              op == "fptosi")
                return Lane(bits, z3.Or(x.poison, out_of_range))
            if op in ("sitofp", "uitofp"):  # no integer converts to a denormal: no flush
                r = fl.itofp(x.bits, t.fmt, op == "sitofp")
                poison += [it.CAST_FLAG_POISON[op, f](x.bits, t.width)
                           for f in sorted(p.flags) if (op, f) in it.CAST_FLAG_POISON]
                bits = fl.result_bits(r, t.fmt)
            else:
                read = fl.flush_input(x.bits, src.fmt, self.denormal(src.fmt))
                v = fl.view(read, src.fmt)
                r = fl.fptrunc(v, t.fmt) if op == "fptrunc" else fl.fpext(read, src.fmt, t.fmt)
                poison.append(fl.fast_math_poison(flags, [v]))
                bits = fl.result_bits(r, t.fmt)
                flushed = fl.flushed_output(bits, t.fmt, self.denormal(t.fmt))
                if "nsz" in flags:
                    bits, flushed = self._nsz(bits, flushed)
            poison.append(fl.fast_math_poison(flags, [r]))
            return float_lane(bits, z3.Or(*poison), t.fmt, flushed)
        return self._lanewise(lane, a)

    _fptrunc = _fpext = _fptosi = _fptoui = _sitofp = _uitofp = _float_cast

    def _bitcast(self, ins, p: reader.Printed) -> Value:
        """"converts value to type ty2 without changing any bits"; lanes that do not line
        up share their poison (a poison lane poisons every lane it overlaps: all of them)."""
        t = ir_type(ins.type)
        (a,) = (self.operand(o) for o in ins.operands)
        if len(a) == t.lanes:
            return a
        poison = any_poison(*a)
        return tuple(Lane(x.bits, poison) for x in lanes_of(concat(a), t))

    # ---- vectors ----------------------------------------------------------------------------

    def _extractelement(self, ins, p: reader.Printed) -> Value:
        """"The result is a scalar of the same type as the element type of val. Its value
        is the value at position idx of val. If idx exceeds the length of val for a
        fixed-length vector, the result is a poison value." """
        vec, (idx,) = (self.raw(o) for o in ins.operands)
        out = Lane(vec[0].bits, z3.BoolVal(True))
        for i in reversed(range(len(vec))):
            out = pick(idx.bits == i, vec[i], out)
        return (Lane(out.bits, z3.Or(idx.poison, out.poison), out.nan, out.flushed),)

    def _insertelement(self, ins, p: reader.Printed) -> Value:
        """"a vector of the same type as val. Its element values are those of val except
        at position idx, where it gets the value elt. If idx exceeds the length of val ...
        the result is a poison value." """
        vec, (elt,), (idx,) = (self.raw(o) for o in ins.operands)
        bad = z3.Or(idx.poison, z3.UGE(idx.bits, len(vec)))
        lanes = [pick(idx.bits == i, elt, x) for i, x in enumerate(vec)]
        return tuple(Lane(x.bits, z3.Or(bad, x.poison), x.nan, x.flushed) for x in lanes)

    def _shufflevector(self, ins, p: reader.Printed) -> Value:
        """"The elements of the two input vectors are numbered from left to right across
        both of the vectors. ... A poison element in the mask vector specifies that the
        resulting element is poison." """
        a, b = (self.raw(o) for o in list(ins.operands)[:2])
        both = a + b
        width = both[0].bits.size()
        return tuple(Lane(z3.BitVecVal(0, width), z3.BoolVal(True)) if m is None else both[m]
                     for m in reader.shuffle_mask(str(ins)))

    # ---- aggregates ---------------------------------------------------------------------------

    def _field(self, t: IrType, indices: list[int]) -> tuple[int, int, IrType]:
        """(first lane, lanes, type) of the field that `indices` name in an aggregate of
        type t (a field of a field ... for more than one index)."""
        start = 0
        for k in indices:
            if t.kind != "struct" or not 0 <= k < len(t.fields):
                raise Unsupported("instruction", f"index {k} into {t.text}")
            first, _ = t.field_lanes(k)
            start, t = start + first, t.fields[k]
        return start, len(t.leaves), t

    def _extractvalue(self, ins, p: reader.Printed) -> Value:
        """"The result is the value at the position in the aggregate specified by the
        index operands." """
        (agg,) = list(ins.operands)
        value = self.raw(agg)
        start, n, t = self._field(ir_type(agg.type), reader.aggregate_indices(str(ins)))
        if t.text != ir_type(ins.type).text:  # the indices read wrong: never guess
            raise Unsupported("instruction", f"extractvalue: {t.text} at the indices, "
                              f"{ir_type(ins.type).text} in the result")
        return value[start:start + n]

    def _insertvalue(self, ins, p: reader.Printed) -> Value:
        """"The result is an aggregate of the same type as val. Its value is that of val
        except that the value at the position specified by the indices is that of elt."
        Each field keeps its own poison: an aggregate is poison field by field."""
        agg, elt = list(ins.operands)
        value, new = self.raw(agg), self.raw(elt)
        start, n, t = self._field(ir_type(agg.type), reader.aggregate_indices(str(ins)))
        if t.text != ir_type(elt.type).text or len(new) != n:
            raise Unsupported("instruction", f"insertvalue: {t.text} at the indices, "
                              f"{ir_type(elt.type).text} inserted")
        return value[:start] + new + value[start + n:]

    # ---- memory ---------------------------------------------------------------------------

    def _pointer(self, ins, ptr, t: IrType, p: reader.Printed) -> tuple[int, z3.BitVecRef]:
        """The address space and address a load or store of type t goes through (its UB:
        a poison, null or misaligned pointer, taken where the instruction runs)."""
        if p.flags & reader.MEMORY_FLAGS:
            raise Unsupported("memory", f"{' '.join(sorted(p.flags & reader.MEMORY_FLAGS))} "
                              f"{ins.opcode}")
        if any(x.width % 8 for x in t.leaves) or (t.kind == "struct" and not t.offsets):
            raise Unsupported("memory", f"{ins.opcode} of {t.text}")
        space = reader.address_space(str(ptr.type))
        (lane,) = self.operand(ptr)
        align = reader.alignment(str(ins)) or 1
        bad = [lane.poison]
        if align > 1:  # "Overestimating the alignment results in undefined behavior."
            bad.append(z3.URem(lane.bits, align) != 0)
        if space == 0:
            bad.append(lane.bits == 0)
        self._ub(z3.Or(*bad))
        return space, lane.bits

    def _memory_type(self, tref) -> tuple[IrType, list[int]]:
        """A loaded or stored type and the byte offset of each of its lanes: a vector's
        side by side, a struct's or array's fields where the module's datalayout puts
        them (padding neither read nor written)."""
        t = ir_type(tref, self.fn.module.data_layout or NVPTX64_DATALAYOUT)
        if t.kind == "struct":
            return t, list(t.offsets)
        return t, [i * (t.width // 8) for i in range(t.lanes)]

    def _load(self, ins, p: reader.Printed) -> Value:
        t, offsets = self._memory_type(ins.type)
        space, base = self._pointer(ins, next(iter(ins.operands)), t, p)
        mem = self.memory[space]
        out = []
        for leaf, at in zip(t.leaves, offsets, strict=True):
            where = [base + (at + k) for k in range(leaf.width // 8)]
            data = [z3.Select(mem.bytes, a) for a in where]
            bits = z3.Concat(*reversed(data)) if len(data) > 1 else data[0]
            out.append(Lane(bits, z3.Or(*[z3.Select(mem.poison, a) for a in where])))
        return tuple(out)

    def _store(self, ins, p: reader.Printed) -> None:
        value_op, ptr = list(ins.operands)
        t, offsets = self._memory_type(value_op.type)
        space, base = self._pointer(ins, ptr, t, p)
        value = self.operand(value_op)
        data, poison = self.memory[space].bytes, self.memory[space].poison
        for x, at in zip(value, offsets, strict=True):
            for k in range(x.bits.size() // 8):
                where = base + (at + k)
                data = z3.Store(data, where, z3.Extract(8 * k + 7, 8 * k, x.bits))
                poison = z3.Store(poison, where, x.poison)
        self.memory = {**self.memory, space: Memory(data, poison)}

    def _getelementptr(self, ins, p: reader.Printed) -> Value:
        """"the address of a subelement": base + index * (size of the source element
        type); the index is sign-extended or truncated to 64 bits. One index only."""
        ops = list(ins.operands)
        if len(ops) != 2:
            raise Unsupported("getelementptr", "more than one index")
        (base,), (idx,) = self.operand(ops[0]), self.operand(ops[1])
        size = reader.gep_element_size(str(ins))
        offset = _resize(idx.bits, 64, signed=True) * size
        return (Lane(base.bits + offset, z3.Or(base.poison, idx.poison)),)

    # ---- calls ----------------------------------------------------------------------------

    def _call(self, ins, p: reader.Printed) -> Value | None:
        """The callee's value; fast-math flags on a float result as on any moved value
        (the float intrinsics read their operands' NaNs and infinities themselves)."""
        value = self._callee_value(ins, p)
        if "nsz" in p.flags and \
                reader.intrinsic_base(list(ins.operands)[-1].name) in intr.MINMAX:
            p = replace(p, flags=p.flags - {"nsz"})  # its own meaning there (intrinsics.py)
        return value if value is None else self._moved_value(ins, p, value, only_moves=False)

    def _callee_value(self, ins, p: reader.Printed) -> Value | None:
        callee = list(ins.operands)[-1]
        name = callee.name
        if not name.startswith("llvm."):
            target = self._defined(name)
            if target is None:
                raise Unsupported("call", f"@{name}")
            return self._inline(target, list(ins.operands)[:-1])
        base = reader.intrinsic_base(name)
        args = list(ins.operands)[:-1]
        if base.startswith("nvvm.read.ptx.sreg."):
            reg = base.removeprefix("nvvm.read.ptx.sreg.")
            width = ir_type(ins.type).width
            self.sregs.setdefault(reg, z3.BitVec(f"sreg.{reg}", width))
            return (Lane(self.sregs[reg]),)
        if base == "assume":  # "the optimizer may assume the condition is true": else UB
            (c,) = self.operand(args[0])
            self._ub(z3.Or(c.poison, c.bits == 0))
            return None
        if base in it.WITH_OVERFLOW:  # { result, overflow bit }: field 0's lanes, then 1's
            op, signed = it.WITH_OVERFLOW[base]
            a, b = (self.operand(o) for o in args)
            pairs = self._lanewise(lambda x, y: (x, y), a, b)
            return tuple(Lane(it.BINARY[op](x.bits, y.bits), any_poison(x, y))
                         for x, y in pairs) + \
                tuple(Lane(bool_bits(it.overflows(it.BINARY[op], x.bits, y.bits, signed)),
                           any_poison(x, y)) for x, y in pairs)
        if base in nvvm.PTX:  # one PTX instruction: its terms, on the operands' bits
            values, t = [self.operand(o) for o in args], ir_type(ins.type)
            if any(len(v) != 1 for v in values):
                raise Unsupported("intrinsic", f"@{name} on vectors")
            bits = nvvm.apply(base, [v[0].bits for v in values])
            if bits.size() != t.width * t.lanes:
                raise Unsupported("intrinsic", f"@{name}: not the PTX instruction's width")
            poison = any_poison(*[v[0] for v in values])  # a packed result: lane 0 low
            return tuple(Lane(x.bits, poison) for x in lanes_of(bits, t))
        if base in intr.INTEGER:
            k = intr.IMMEDIATE.get(base, 0)
            values = [self.operand(o) for o in args[:len(args) - k]]
            imm = [o.get_constant_value() for o in args[len(args) - k:]]

            def int_lane(*xs: Lane) -> Lane:
                bits, poison = intr.INTEGER[base](*[x.bits for x in xs], *imm)
                return Lane(bits, z3.Or(any_poison(*xs), poison))
            return self._lanewise(int_lane, *values)
        if base in intr.FLOAT_TO_INT_SAT:  # never poison of its own: every float has a value
            (o,) = args
            src, t = ir_type(o.type), ir_type(ins.type)

            def sat_lane(x: Lane) -> Lane:
                return Lane(fl.fptoi_sat(self._input(x.bits, src.fmt), t.width,
                                         intr.FLOAT_TO_INT_SAT[base]), x.poison)
            return self._lanewise(sat_lane, self.float_operand(o))
        if base in intr.FLOAT:
            t = ir_type(ins.type)
            flags = self._fast_math(p)
            bitwise = base in intr.FLOAT_BITWISE  # they see the bits: exposed operands
            values = [(self.operand if bitwise else self.float_operand)(o) for o in args]

            mode = IEEE if bitwise else self.denormal(t.fmt)  # fabs, copysign: bit operations

            def lane(*xs: Lane) -> Lane:
                ins_ = [fl.flush_input(x.bits, t.fmt, mode) for x in xs]
                bits = intr.FLOAT[base](*ins_, t.fmt, self.choices)
                if base in intr.MINMAX and "nsz" in flags:
                    bits = intr.nsz_either_zero(*ins_, bits, t.fmt, self.choices)
                flushed = fl.flushed_output(bits, t.fmt, mode)
                views = [fl.view(x.bits, t.fmt) for x in xs]
                poison = z3.Or(any_poison(*xs), fl.fast_math_poison(flags, views))
                return Lane(bits, poison) if bitwise else \
                    float_lane(bits, poison, t.fmt, flushed)
            return self._lanewise(lane, *values)
        raise Unsupported("intrinsic", f"@{name}")


    def _defined(self, name: str):
        """The function `name` if this module defines it (a body to inline), else None."""
        try:
            fn = self.fn.module.get_function(name)
        except NameError:
            return None
        return None if fn.is_declaration else fn

    def _inline(self, callee, args: list) -> Value | None:
        """A call of a function this module defines: its body, with the arguments as
        its parameters (lanes, poison and all); its UB is the caller's where the call
        runs. Callees that touch memory are refused (their memory is not threaded)."""
        if self.depth >= INLINE_DEPTH:
            raise Unsupported("call", f"@{callee.name}: calls nested more than "
                              f"{INLINE_DEPTH} deep (recursion?)")
        fn = ir_function(callee, self.fn.module)
        if fn.refused is not None:
            raise fn.refused
        inner = _Encoder(fn, self, [self.settled(o) for o in args]).run()
        if inner.initial_memory:
            raise Unsupported("call", f"@{callee.name} reads or writes memory")
        self._ub(inner.ub)
        # flushed or not settled where a value crosses: the two functions' modes may differ
        return None if inner.result is None else \
            tuple(self.choices.unflushed(x) for x in inner.result)


# Function attributes that license unsafe rewrites: the encoding models the default
# environment only. The denormal modes are modelled (floating.Denormal).
FP_ENVIRONMENT = {"unsafe-fp-math": "false", "no-nans-fp-math": "false",
                  "no-infs-fp-math": "false", "no-signed-zeros-fp-math": "false",
                  "approx-func-fp-math": "false", "nvptx-f32ftz": "false"}
DENORMAL_ATTRIBUTES = ("denormal-fp-math", "denormal-fp-math-f32")


def _fp_environment(fn: IrFunction) -> Callable[[FloatFormat], fl.Denormal]:
    """The denormal mode of each float format in `fn` ("denormal-fp-math-f32" for float,
    else "denormal-fp-math"); other environments are refused."""
    attrs = {}
    for text in fn.value.attributes:
        attrs |= reader.string_attributes(text.decode() if isinstance(text, bytes) else text)
    for key, default in FP_ENVIRONMENT.items():
        if key in attrs and attrs[key] != default:
            raise Unsupported("fp environment", f'"{key}"="{attrs[key]}" on @{fn.name}')
    modes = {}
    for key in DENORMAL_ATTRIBUTES:
        mode = fl.denormal_mode(attrs.get(key, ""))
        if mode is None:
            raise Unsupported("fp environment", f'"{key}"="{attrs[key]}" on @{fn.name}')
        modes[key] = mode
    general = modes["denormal-fp-math"]
    f32 = modes["denormal-fp-math-f32"] if "denormal-fp-math-f32" in attrs else general
    return lambda fmt: f32 if fmt == F32 else general


def _resize(x: z3.BitVecRef, width: int, signed: bool = False) -> z3.BitVecRef:
    if x.size() > width:
        return z3.Extract(width - 1, 0, x)
    return (z3.SignExt if signed else z3.ZeroExt)(width - x.size(), x)


def _terminator(block):
    *_, last = block.instructions
    return last


def _join(pairs: list[tuple[z3.BoolRef, Memory]]) -> Memory:
    """The memory after a join: the predecessor's whose edge was taken."""
    out = pairs[-1][1]
    for cond, m in reversed(pairs[:-1]):
        out = Memory(z3.If(cond, m.bytes, out.bytes), z3.If(cond, m.poison, out.poison))
    return out
