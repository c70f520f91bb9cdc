"""The state of one pass over a function body (`encode.py` drives it): the inputs it
has met, the path it is on, and what reading and writing registers, parameters and
memory do to that path. The instructions (`instructions.py`) act through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import z3

from ..isa.body import Directive, Generic
from ..isa.errors import PtxError, quote
from ..isa.literals import LiteralError, parse_immediate
from ..isa.module import Function, Param, read_variable
from ..isa.types import PRED, TYPES, Kind, PtxType
from ..sem.contraction import Products
from ..sem.options import Options
from ..sem.prims import guard_holds, guarded
from ..sem.sorts import register
from . import memory
from .state import State


def resize(term: z3.ExprRef, width: int, signed: bool) -> z3.ExprRef:
    """A value of an instruction's type in a register of `width` bits (ld.u8 into a .b16
    register extends; st.u8 of a .b16 register keeps the low byte)."""
    if z3.is_bool(term) or term.size() == width:
        return term
    if term.size() > width:
        return z3.Extract(width - 1, 0, term)
    extend = z3.SignExt if signed else z3.ZeroExt
    return extend(width - term.size(), term)


# Special registers' values (PTX ISA, Special Registers): %tid in 0..%ntid-1, %ntid.x/y
# at most 1024 and %ntid.z 64, %laneid below the warp size, %ctaid below %nctaid, whose
# x is at most 2^31-1 and y/z 65535.
SPECIAL_RANGES = {
    **{f"tid.{d}": (0, 1023) for d in "xy"}, "tid.z": (0, 63),
    **{f"ntid.{d}": (1, 1024) for d in "xy"}, "ntid.z": (1, 64),
    "laneid": (0, 31),
    "ctaid.x": (0, 2**31 - 2), **{f"ctaid.{d}": (0, 65534) for d in "yz"},
    "nctaid.x": (1, 2**31 - 1), **{f"nctaid.{d}": (1, 65535) for d in "yz"},
}


def param_type(p: Param) -> PtxType:
    """A parameter as one value of its whole size: its own type if scalar, else bits
    (`.b8 p[12]` -> a 96-bit value, byte 0 lowest)."""
    if p.array is None:
        return p.type
    width = p.type.width * p.array
    return TYPES.get(f"b{width}") or PtxType(f"b{width}", Kind.BIT, width)


def _widened(t: PtxType, width: int) -> PtxType:
    """A parameter compared with a wider one of the other function (a half passed as
    `.b8 [2]` there and `.b32` here): one input of the wider size, whose low bytes this
    side reads."""
    return t if width <= t.width else TYPES.get(f"b{width}") or PtxType(f"b{width}",
                                                                         Kind.BIT, width)


def param_spelling(p: Param) -> str:
    return f".{p.type.name}" + (f" [{p.array}]" if p.array is not None else "")


def _bytes(whole: z3.BitVecRef, offset: int, width: int) -> z3.BitVecRef:
    """`width` bits of `whole` from byte `offset` up (little-endian)."""
    if offset == 0 and width == whole.size():
        return whole
    return z3.Extract(8 * offset + width - 1, 8 * offset, whole)


def _with_bytes(whole: z3.BitVecRef, offset: int, value: z3.BitVecRef) -> z3.BitVecRef:
    """`whole` with the bytes from `offset` replaced by `value`."""
    lo, hi = 8 * offset, 8 * offset + value.size()
    parts = [z3.Extract(whole.size() - 1, hi, whole)] if hi < whole.size() else []
    parts.append(value)
    if lo:
        parts.append(z3.Extract(lo - 1, 0, whole))
    return parts[0] if len(parts) == 1 else z3.Concat(*parts)


@dataclass(frozen=True)
class Undefined:
    """A place where the ISA leaves the behaviour open (a `brx.idx` index past its
    targets) or the function stops (`trap`), and the condition under which it is met."""

    when: z3.BoolRef
    line: int
    text: str
    why: str


@dataclass(frozen=True)
class Assumption:
    """What the ISA leaves undefined, assumed not to happen where a path meets it
    (`memory.py`): `holds` is true on every input the verdicts speak of."""

    holds: z3.BoolRef
    line: int
    text: str
    why: str


@dataclass(frozen=True)
class Initialised:
    """A module variable's bytes when the function starts (its initializer: `.const`, or a
    `.global` no other module can name), at its address in `space`."""

    space: str
    address: z3.BitVecRef
    size: int
    data: bytes | None  # None: not known (no initializer ptxsmt reads, or linked)
    name: str


@dataclass(frozen=True)
class Access:
    """One ld or st of memory, with the condition under which it runs."""

    space: str
    address: z3.BitVecRef  # 64-bit, the offset included
    type: PtxType
    when: z3.BoolRef
    line: int
    text: str
    register: str = ""  # the register loaded to or stored from (its values' type: `halves`)


@dataclass(frozen=True)
class Decision:
    """A compare on a path: its predicates' terms and the condition that the path runs
    (the cases `ptxsmt vectors FILE.ptx` covers)."""

    line: int
    text: str
    when: z3.BoolRef
    predicates: dict[str, z3.BoolRef]  # register (without `%`) -> its value after the compare


@dataclass
class FunctionEncoding:
    function: str
    inputs: dict[str, z3.ExprRef] = field(default_factory=dict)  # scalar inputs by name
    types: dict[str, PtxType] = field(default_factory=dict)  # of inputs and returns
    origins: dict[str, str] = field(default_factory=dict)  # input -> what it is
    memory: dict[str, z3.ArrayRef] = field(default_factory=dict)  # initial, per space used
    final: dict[str, z3.ArrayRef] = field(default_factory=dict)  # at the function's end
    returns: dict[str, z3.ExprRef] = field(default_factory=dict)
    loads: list[Access] = field(default_factory=list)
    stores: list[Access] = field(default_factory=list)
    uninterpreted: dict[str, int] = field(default_factory=dict)  # instruction text -> line
    opaque: dict[str, z3.ExprRef] = field(default_factory=dict)  # the input name `eval`
    # gives an opaque result (`r5`, `r5@12`) -> its term (equiv: an uninterpreted
    # application), to replay a counterexample
    undefined: list[Undefined] = field(default_factory=list)
    assumed: list[Assumption] = field(default_factory=list)
    bounded: list[Undefined] = field(default_factory=list)  # paths past --unroll K
    # registers an instruction reads or writes as half values (f16, bf16, f16x2 ...), and
    # the register each return parameter was last stored from: `encode.py` types the
    # inputs, locations and returns they hold as halves, so that they show as floats
    halves: dict[str, PtxType] = field(default_factory=dict)
    read_only: list[Access] = field(default_factory=list)  # ld.global.nc: see encode.py
    return_registers: dict[str, str] = field(default_factory=dict)
    # the offset and type of each st.param to a return parameter (the function's own,
    # not a callee's): a float type throughout makes it a float-typed observation point
    return_stores: dict[str, list[tuple[int, PtxType]]] = field(default_factory=dict)
    reached: z3.BoolRef | None = None  # some path reaches the end
    decisions: list[Decision] = field(default_factory=list)  # each setp met, in order
    initialised: list[Initialised] = field(default_factory=list)  # module variables met
    # the body's .shared and .local variables met (an inlined callee's too): (space,
    # address, bytes), each apart from the others of its space
    windowed: list[tuple[str, z3.BitVecRef, int]] = field(default_factory=list)


def _variables(fn: Function):
    """(name, (state space, declaration)) of the variables the body declares."""
    for d in fn.body.items:
        if isinstance(d, Directive) and d.name in (".shared", ".local", ".global", ".const"):
            space, v = read_variable(d.text, d.line, d.col)
            yield v.name, (space, v)


Reach = tuple[str, z3.BitVecRef, z3.BoolRef | None]


class Execution:
    """One pass over the body. `unmodelled="function"` (equiv) or `"input"` (eval) says what
    an instruction ptxsmt does not model gives (see `instructions.py`); `rename` names
    parameters and return parameters after another function's (equiv of two names)."""

    def __init__(self, fn: Function, opts: Options, unmodelled: str, rename: dict[str, str],
                 caller: Execution | None = None, bound: dict[str, z3.BitVecRef] | None = None,
                 site: int = 0, unroll: int = 0, widths: dict[str, int] | None = None):
        self.fn, self.opts, self.mode, self.rename = fn, opts, unmodelled, rename
        self.widths = widths or {}
        self.unroll = unroll  # each loop's body runs at most this many times
        self.declared = {r.key: r.type for r in fn.body.registers}
        self.variables = dict(_variables(fn))
        self.params = {p.name: p for p in (*fn.params, *fn.returns)}
        # written with st.param: return parameters, and a call's arguments and results
        # (`.param` in the body, declared anew by each call sequence: `declare`)
        self.returns = {p.name for p in fn.returns}
        # an inlined callee (`encode.py`) shares its caller's inputs and memory, names
        # its registers' inputs after itself, and reads its parameters from `bound`
        self.enc = caller.enc if caller else FunctionEncoding(fn.name)
        # plain mul results an add may be fused with (sem/contraction.py), also in a callee
        self.products = caller.products if caller else Products()
        self.stack: tuple[str, ...] = (*caller.stack, fn.name) if caller else (fn.name,)
        self.prefix = f"{caller.prefix}{fn.name}@{site}/" if caller else ""
        self.bound = bound or {}
        self.state: State | None = State(caller.state.live, {}, caller.state.memory, {}) \
            if caller else State(z3.BoolVal(True), {}, {}, {})

    # ---- inputs -------------------------------------------------------------------------

    def input(self, name: str, t: PtxType, origin: str) -> z3.ExprRef:
        if name not in self.enc.inputs:
            self.enc.inputs[name] = register(name, t)
            self.enc.types[name], self.enc.origins[name] = t, origin
        return self.enc.inputs[name]

    def parameter(self, name: str, offset: int, t: PtxType, g: Generic) -> z3.ExprRef:
        """`ld.param.T [p+offset]`: bytes offset.. of the parameter (or of a return
        parameter as the function has written it so far), little-endian. A parameter is
        one input of its whole size, so a `.b32` read as two `.b16` halves, or passed as
        `.b8 p[4]` by the other side, is the same four bytes."""
        key = self._param_key(name, offset, t, g)
        p = self.params[name]
        if name in self.returns:
            whole = self.state.returns.get(key)
            if whole is None:
                whole = z3.BitVec(f"{self.prefix}{key} unwritten", param_type(p).width)
        elif name in self.bound:
            whole = self.bound[name]
        else:
            whole = self.input(key, _widened(param_type(p), self.widths.get(key, 0)),
                               f"parameter {param_spelling(p)}")
        return _bytes(whole, offset, t.width)

    def param_address(self, name: str) -> z3.BitVecRef:
        """The address of a parameter in the param space (`mov.b64 %rd1, f_param_0`, which
        LLVM writes to select between two parameters and then `ld.param [%rd1]`): the k-th
        at (k + 1) * 2^16 (a parameter has at most 32764 bytes), apart from the
        parameters of any function it calls (2^32 * depth). Nothing else is in this space."""
        k = [p.name for p in self.fn.params].index(name)
        return z3.BitVecVal((len(self.stack) << 32) + ((k + 1) << 16), memory.ADDRESS_BITS)

    def parameter_at(self, at: z3.BitVecRef, t: PtxType, g: Generic) -> z3.BitVecRef:
        """`ld.param.T d, [%rd1+off]` through a register: the bytes of the parameter whose
        address (`param_address`) it holds; reading outside every parameter is assumed
        not to happen."""
        space = z3.K(z3.BitVecSort(memory.ADDRESS_BITS), z3.BitVecVal(0, 8))
        inside = []
        for p in self.fn.params:
            base, whole = self.param_address(p.name), param_type(p)
            space = memory.store(space, base, self.parameter(p.name, 0, whole, g))
            inside.append(z3.And(z3.UGE(at, base),
                                 z3.ULE(at + t.width // 8, base + whole.width // 8)))
        self.assume(z3.Or(inside), g, "the address is inside one parameter")
        return memory.load(space, at, t.width)

    def declare(self, d: Directive) -> None:
        """A `.param` the body declares (a call's argument or result): fresh bytes."""
        if d.name == ".param":
            _, p = read_variable(d.text, d.line, d.col)
            self.params[p.name] = p
            self.returns.add(p.name)
            if self.state is not None and p.name in self.state.returns:
                self.state = replace(self.state, returns={
                    k: v for k, v in self.state.returns.items() if k != p.name})

    def argument(self, name: str, p: Param, g: Generic) -> z3.BitVecRef:
        """The bytes the caller stored to its argument `name`, for the callee's parameter
        `p` (of the same size)."""
        if name not in self.params or name not in self.returns:
            raise PtxError(f"{quote(name)} in {quote(g.spelled)} is not a "
                           ".param the caller declares", g.line, g.col)
        mine = param_type(self.params[name]).width
        if mine != param_type(p).width:
            raise PtxError(f"{quote(g.spelled)}: {name} has {mine // 8} bytes, "
                           f"{p.name} {param_type(p).width // 8}", g.line, g.col)
        whole = self.state.returns.get(name)
        return whole if whole is not None else \
            z3.BitVec(f"{self.prefix}{name} unwritten", mine)

    def result(self, name: str, p: Param, value: z3.BitVecRef | None,
               g: Generic) -> z3.BitVecRef:
        """A callee's return value `value` (of its return parameter p) as the bytes of
        the caller's `.param` `name`."""
        if name not in self.params or name not in self.returns or \
                param_type(self.params[name]).width != param_type(p).width:
            raise PtxError(f"{quote(g.spelled)}: {name} is no .param of "
                           f"{p.name}'s size the caller declares", g.line, g.col)
        return value if value is not None else \
            z3.BitVec(f"{self.prefix}{name} unwritten", param_type(p).width)

    def width(self, operand: str, g: Generic) -> int:
        key = operand.strip().lstrip("%")
        if key not in self.declared:
            raise PtxError(f"{quote(operand)} in {quote(g.text)} is not a declared register",
                           g.line, g.col)
        return self.declared[key].width

    def value(self, text: str, t: PtxType, g: Generic, negated: bool = False) -> z3.ExprRef:
        """A source operand: a register, a special register, a variable's address or an
        immediate, as a value of `t`."""
        text = text.strip()
        key = text.lstrip("%")
        if key in self.declared:
            v = self.register(key)
            return z3.Not(v) if negated else v if z3.is_bool(v) else \
                resize(v, t.width, False)
        if text.startswith("%"):
            new = key not in self.enc.inputs
            special = self.input(key, t, "special register")
            if new and key in SPECIAL_RANGES:
                low, high = SPECIAL_RANGES[key]
                self.enc.assumed.append(Assumption(
                    z3.And(z3.UGE(special, low), z3.ULE(special, high)), g.line, f"%{key}",
                    f"%{key} is in {low}..{high} (the ISA's special registers)"))
            return resize(special, t.width, False)
        if text[:1].isalpha() or text[:1] in "_$":
            return self.variable(text, g)
        try:
            bits = parse_immediate(text, t)
        except LiteralError as e:
            raise PtxError(f"{quote(text)} in {quote(g.text)}: {e}", g.line, g.col) from None
        return z3.BoolVal(bits) if t is PRED else z3.BitVecVal(bits, t.width)

    def variable(self, name: str, g: Generic) -> z3.ExprRef:
        """The address of a variable (an input). One the body declares in shared or local
        memory lies in its state space, below 2^32 (the window) and aligned as declared;
        a module's variable (`_module_variable`) holds its initializer."""
        if name in (p.name for p in self.fn.params):
            return self.param_address(name)
        new = name not in self.enc.inputs
        address = self.input(name, TYPES["u64"], "the address of a variable")
        if new and name in self.variables:
            space, v = self.variables[name]
            if space in memory.WINDOWED:
                size = param_type(v).width // 8
                fits = z3.ULE(address, memory.WINDOW_BYTES - size)
                aligned = z3.URem(address, v.align or 1) == 0
                # a caller's frame and an inlined callee's are two frames, and two
                # variables two allocations: none overlaps another of its space
                apart = [z3.Or(z3.ULE(address + size, at), z3.ULE(at + n, address))
                         for where, at, n in self.enc.windowed if where == space]
                self.enc.windowed.append((space, address, size))
                self.enc.assumed.append(Assumption(
                    z3.And(fits, aligned, *apart), g.line, name,
                    f"a .{space} variable lies in its window, apart from the others"))
        elif new and name in self.fn.variables:
            self._module_variable(name, address, g)
        return address

    def _module_variable(self, name: str, address: z3.BitVecRef, g: Generic) -> None:
        """A `.global`/`.const` variable of the module lies whole in its space, aligned as
        declared, apart from the module's other variables there; its bytes at entry are
        its initializer (zeros without one) where nothing can have written them: always
        for `.const` (read-only), for a `.global` that no other module and no host code
        can name (not `.visible`, `.extern`, `.weak`, `.common`) and that no instruction
        of the module may write (`isa.module.written_variables`): a switch's lookup
        table, a private constant."""
        mv = self.fn.variables[name]
        size = param_type(mv.declaration).width // 8
        if mv.space not in ("global", "const") or size == 0:
            return
        bits = memory.address_bits(mv.space)
        at = memory.address(address, bits)
        placed = [i for i in self.enc.initialised if i.space == mv.space]
        apart = [z3.Or(z3.ULE(at + size, i.address), z3.ULE(i.address + i.size, at))
                 for i in placed]
        self.enc.assumed.append(Assumption(
            z3.And(z3.ULE(at, (1 << bits) - size), z3.URem(at, mv.declaration.align or 1) == 0,
                   *apart), g.line, name, f"a .{mv.space} variable of the module lies whole "
            "in its space, apart from the others"))
        known = None if mv.space == "global" and (mv.linked or mv.written) else mv.initial
        self.enc.initialised.append(Initialised(mv.space, at, size, known, name))
        if known is None:
            return
        self.enc.memory.setdefault(mv.space, memory.initial(mv.space))
        start = self.enc.memory[mv.space]
        self.enc.assumed.append(Assumption(
            z3.And([z3.Select(start, at + k) == b for k, b in enumerate(mv.initial)]),
            g.line, name, f"the .{mv.space} variable holds its initializer at entry"))

    def register(self, key: str) -> z3.ExprRef:
        if key not in self.state.registers:  # read before written: an input
            value = self.input(self.prefix + key, self.declared[key],
                               "register read before it is written")
            self._update(registers={key: value})
        return self.state.registers[key]

    def opaque_value(self, g: Generic, key: str, dest: str, args: list) -> z3.ExprRef:
        """The result an instruction ptxsmt does not model writes to `dest`. In `eval`, an
        input named by the register (`r5`; `r5@12` if that name is taken, 12 the line);
        in `equiv`, the uninterpreted function `key` (the instruction's text with its
        registers left out: same instruction, same register values, same result on both
        sides) of the values of its source registers."""
        reg = dest.lstrip("%")
        t = self.declared[reg]
        text = g.spelled
        self.enc.uninterpreted.setdefault(text, g.line)
        name = self.prefix + reg
        if name in self.enc.inputs or name in self.enc.opaque:
            name = f"{name}@{g.line}"
        if self.mode == "input":
            value = self.input(name, t, f"written by {quote(text)} (line {g.line}), which "
                               "ptxsmt does not model")
        else:
            sort = z3.BoolSort() if t is PRED else z3.BitVecSort(t.width)
            value = z3.Function(key, *(a.sort() for a in args), sort)(*args) if args else \
                z3.Const(key, sort)
        self.enc.opaque[name] = value
        return value

    # ---- effects ------------------------------------------------------------------------

    def guard(self, g: Generic) -> z3.BoolRef | None:
        """The guard `@p`/`@!p` as a condition (None: none); p must be a .pred register."""
        if g.guard is None:
            return None
        if self.declared.get(g.guard.register) is not PRED:
            raise PtxError(f"the guard {quote(g.guard.spelled or g.guard.register)} of "
                           f"{quote(g.spelled)} is not a declared .pred "
                           "register", g.line, g.col)
        return guard_holds(self.register(g.guard.register), g.guard.negated)

    def guarded(self, g: Generic, new: z3.ExprRef, old: z3.ExprRef) -> z3.ExprRef:
        """`new` where g's guard holds, `old` elsewhere (sem.prims.guarded)."""
        return guarded(self.guard(g), new, lambda: old)

    def write(self, dest: str, value: z3.ExprRef, g: Generic) -> None:
        key = dest.strip().lstrip("%")
        self.width(dest, g)
        old = self.register(key) if g.guard is not None else value
        self._update(registers={key: self.guarded(g, value, old)})

    def load(self, space: str, base: z3.BitVecRef, offset: int, t: PtxType,
             g: Generic, register: str = "") -> z3.BitVecRef:
        at = memory.address(base) + offset
        value = None
        for where, local_at, inside in reversed(self._reach(space, at, g)):
            when = self._when(g) if inside is None else z3.And(self._when(g), inside)
            self._aligned(local_at, t, when, g)
            self.enc.loads.append(Access(where, local_at, t, when, g.line, g.text,
                                         self.prefix + register.lstrip("%")))
            if "nc" in g.modifiers:
                self.enc.read_only.append(self.enc.loads[-1])
            frames = [(a, n) for space_of, a, n in self.enc.windowed if space_of == where]
            loaded = memory.load(self.memory(where), local_at, t.width, frames)
            value = loaded if value is None else z3.If(inside, loaded, value)
        return value

    def store(self, space: str, base: z3.BitVecRef, offset: int, t: PtxType,
              value: z3.BitVecRef, g: Generic, register: str = "") -> None:
        at = memory.address(base) + offset
        for where, local_at, inside in self._reach(space, at, g):
            when = self._when(g) if inside is None else z3.And(self._when(g), inside)
            self._aligned(local_at, t, when, g)
            self.enc.stores.append(Access(where, local_at, t, when, g.line, g.text,
                                          self.prefix + register.lstrip("%")))
            old = self.memory(where)
            stored = memory.store(old, local_at, value)
            if inside is not None:
                stored = z3.If(inside, stored, old)
            self._update(memory={where: self.guarded(g, stored, old)})

    def _aligned(self, at: z3.BitVecRef, t: PtxType, when: z3.BoolRef, g: Generic) -> None:
        """"All addresses must be naturally aligned to a multiple of the access size. If an
        address is not properly aligned, the resulting behavior is undefined" (PTX ISA,
        Addresses as Operands): assumed, so no access wraps around memory either."""
        if t.width > 8:
            size = t.width // 8
            self.enc.assumed.append(Assumption(
                z3.Implies(when, z3.URem(at, size) == 0), g.line, g.spelled,
                f"the address is a multiple of {size}"))

    def _reach(self, space: str, at: z3.BitVecRef, g: Generic) -> list[Reach]:
        """The memories an access of `space` at `at` may reach: (space, address in it,
        the condition that it does it, None: always), the catch-all last."""
        if space != "generic":
            return [(space, memory.address(at, memory.address_bits(space)), None)]
        windows = memory.windows_in(at)
        if not windows:
            return [("global", at, None)]
        if len(windows) == 1:
            base = self.window(windows[0])
            self.assume(memory.in_window(at, base), g, f"an address computed from the "
                        f"{windows[0]} window stays in it")
            return [(windows[0], z3.simplify(memory.address(at - base, 32)), None)]
        bases = {w: self.window(w) for w in self._windows()}
        out = [(w, memory.address(at - b, 32), memory.in_window(at, b))
               for w, b in bases.items()]
        outside = z3.Not(z3.Or([inside for _, _, inside in out]))
        return [*out, ("global", at, outside)]

    def window(self, space: str) -> z3.BitVecRef:
        """The generic address of byte 0 of `space`'s window (an input; the shared and
        local ones come together, the const one where a `cvta.const` needs it), apart
        from the other windows."""
        name = f"window.{space}"
        if name not in self.enc.inputs:
            before = [self.enc.inputs[f"window.{w}"] for w in self._windows()]
            group = memory.PAIRED if space in memory.PAIRED else (space,)
            new = [self.input(f"window.{w}", TYPES["u64"], f"the generic address of {w} byte 0")
                   for w in group]
            self.enc.assumed.append(Assumption(
                memory.windows_apart([*before, *new]), self.fn.line, self.fn.name,
                "the windows of the generic space do not overlap and are aligned"))
        return self.enc.inputs[name]

    def _windows(self) -> list[str]:
        """The windows of the generic space this pass has met so far."""
        return [w for w in memory.WINDOWED if f"window.{w}" in self.enc.inputs]

    def outside_windows(self, at: z3.BitVecRef) -> z3.BoolRef:
        return z3.And([z3.Not(memory.in_window(memory.address(at), self.window(w)))
                       for w in self._windows()])

    def assume(self, condition: z3.BoolRef, g: Generic, why: str) -> None:
        self.enc.assumed.append(Assumption(z3.Implies(self._when(g), condition), g.line,
                                           g.spelled, why))

    def set_return(self, name: str, offset: int, t: PtxType, value: z3.ExprRef,
                   g: Generic, register: str = "") -> None:
        """`st.param.T [r+offset], v`: bytes offset.. of the return parameter r. A byte
        no path writes is a value of its own that neither side chooses (`r unwritten`):
        a difference only there is no difference anyone can rely on."""
        if name not in self.returns:
            raise PtxError(f"{quote(g.text)} stores to {quote(name)}, which is not a return "
                           f"parameter of {self.fn.name}", g.line, g.col)
        key = self._param_key(name, offset, t, g)
        p = self.params[name]
        self.enc.types[key] = param_type(p)
        if not self.stack[1:]:
            self.enc.return_registers[key] = register.lstrip("%")
            self.enc.return_stores.setdefault(key, []).append((offset, t))
        old = self.state.returns.get(key)
        if old is None:
            old = z3.BitVec(f"{self.prefix}{key} unwritten", param_type(p).width)
        self._update(returns={key: self.guarded(g, _with_bytes(old, offset, value), old)})

    def _param_key(self, name: str, offset: int, t: PtxType, g: Generic) -> str:
        if name not in self.params:
            raise PtxError(f"{quote(name)} in {quote(g.text)} is not a parameter of "
                           f"{self.fn.name}", g.line, g.col)
        size = param_type(self.params[name]).width // 8
        if not 0 <= offset <= size - t.width // 8:
            raise PtxError(f"{quote(g.spelled)} reads or writes bytes "
                           f"{offset}..{offset + t.width // 8 - 1} of {name}, which has "
                           f"{size}", g.line, g.col)
        return self.rename.get(name, name)

    def memory(self, space: str) -> z3.ArrayRef:
        if space not in self.enc.memory:
            self.enc.memory[space] = memory.initial(space)
        return self.state.memory.get(space, self.enc.memory[space])

    def _when(self, g: Generic) -> z3.BoolRef:
        guard = self.guard(g)
        return self.state.live if guard is None else z3.And(self.state.live, guard)

    def _update(self, **parts: dict) -> None:
        self.state = self.state.updated(**parts)


