"""A whole function on concrete inputs: the terms of `ptxsmt.function` with the values
substituted and simplified (no second interpreter, as for snippets).

Inputs are named as the function reads them: parameters by name (`k_param_0`, an offset
into one as `k_param_0+8`), special registers without `%` (`tid.x`), the destination
register of an instruction ptxsmt does not model (`r5`, its value after that
instruction), and memory locations `SPACE[ADDRESS]` (`global[0x1000]`), optionally with
a type (`global[0x1000].u32`; without one, the type of the load that reads it).
Every parameter, special register and opaque register the function reads needs a value
(an error names the missing ones); memory nobody gave holds zeros, and each load from it
is shown.

Outputs are the return parameters and each memory location a `st` wrote, with its value
when the function ends. A value the ISA leaves open (a NaN's bits) is unspecified, unless
it is given as `open[NAME of ARGUMENT]` (`open[mul.rn.f32 NaN of 0x000000007fc00000]`:
the NaN mul.rn.f32 gives on those operands, as a counterexample that differs for every
choice of them shows it) or a caller chooses it (`choose`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import z3

from ..isa.errors import PtxError, quote
from ..isa.literals import LiteralError, parse_value
from ..isa.module import Function
from ..isa.source import read_text
from ..isa.types import TYPES, PtxType
from ..sem.options import DEFAULT, Options
from ..sem.sorts import Choose, given_first, open_inputs, register_value, take_open, unreached
from ..sem.unspecified import UNSPECIFIED, OpenValue, Value
from ..solver import check
from ..terms.walk import free_values
from . import read_function
from .encode import Access, FunctionEncoding, encode_function
from .memory import at as location_term
from .memory import empty as empty_memory
from .memory import load, store

_LOCATION = re.compile(r"(\w+)\[\s*(\w+)\s*\](?:\.(\w+))?")


class OpenDependence(PtxError):
    """Whether an instruction runs, or its address, depends on a value the ISA leaves
    open: no run exists on these inputs until a choice of it is given (`choose`)."""

    def __init__(self, function: str, line: int, text: str):
        self.instruction = f"line {line} ({' '.join(text.split())})"
        super().__init__(f"{function}: whether {self.instruction} runs, or where, depends "
                         "on a value the PTX ISA leaves open; ptxsmt cannot run it on these "
                         "inputs unless that value is given (open[NAME of ARGUMENT]=VALUE)")


@dataclass(frozen=True, order=True)
class Location:
    """`global[0x1000]` read or written as a .u32."""

    space: str
    address: int
    type: PtxType

    def __str__(self) -> str:
        return f"{self.space}[{self.address:#x}]"


@dataclass(frozen=True)
class FunctionEvaluation:
    function: str
    types: dict[str, PtxType]  # of the scalar inputs and the return values
    inputs: dict[str, Value]  # scalar inputs
    memory: dict[Location, tuple[Value, bool]]  # loaded locations: initial value, given?
    returns: dict[str, Value]
    stores: dict[Location, Value]  # written locations (and watched ones): final value
    # an unspecified return's bytes that are settled (those written, of a half in a .b32
    # slot): return -> (bits, mask of the settled bits)
    settled: dict[str, tuple[int, int]] = field(default_factory=dict)
    chosen: tuple[OpenValue, ...] = ()  # the open values taken, where a caller chose them

    def outputs(self) -> dict[str, tuple[Value, PtxType]]:
        """Return values and stored locations by name, with their types."""
        return {**{k: (v, self.types[k]) for k, v in self.returns.items()},
                **{str(loc): (v, loc.type) for loc, v in self.stores.items()}}


def parse_location(text: str) -> tuple[str, int, PtxType | None] | None:
    """`global[0x1000].u32` -> ("global", 4096, .u32); not a location -> None."""
    m = _LOCATION.fullmatch(text.strip())
    if not m:
        return None
    try:
        address = int(m.group(2), 0)
    except ValueError:
        raise PtxError(f"{quote(text)}: the address is a number such as 0x1000") from None
    if m.group(3) is not None and m.group(3) not in TYPES:
        raise PtxError(f"{quote(text)}: .{m.group(3)} is not a type")
    return m.group(1), address, TYPES[m.group(3)] if m.group(3) else None


def read_function_file(path: str, name: str | None) -> Function:
    """The function `name` of the PTX file at `path`, read once a run while the file stays
    as it was (a batch names it line after line; a file rewritten in the same process is
    read again, never served stale); raise `PtxError` naming the file and what is wrong."""
    try:
        st = os.stat(path)
        version = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        version = None  # read_text names what is wrong
    return _read_function_file(path, name, version)


@lru_cache(maxsize=64)
def _read_function_file(path: str, name: str | None, version: tuple | None) -> Function:
    text = read_text(path)
    try:
        return read_function(text, name)
    except PtxError as e:
        raise PtxError(f"{path}: {e}") from None


def evaluate_function(fn: Function, inputs: Mapping[str, object], opts: Options = DEFAULT,
                      watch: Iterable[Location] = (), unroll: int = 0,
                      choose: Choose | None = None) -> FunctionEvaluation:
    """Run `fn` on `inputs` (NAME -> value text or bits, see the module docstring).
    `watch` names locations whose final value is wanted even if no `st` writes them;
    `unroll` K runs each loop up to K times (inputs that need more are an error);
    `choose` takes the values the ISA leaves open (each where its operands are known:
    one open NaN may be another's operand), the evaluation lists those it took."""
    enc = encode_function(fn, opts, unmodelled="input", unroll=unroll)
    inputs, opened = open_inputs(inputs)
    choose = given_first(opened, choose)
    scalars, located = _split(inputs, enc)
    pairs = [(enc.inputs[k], register_value(v, enc.types[k])) for k, v in scalars.items()]
    spaces = {*enc.memory, *(s for s, _, _ in located), *(loc.space for loc in watch)}
    empty = {s: empty_memory(s) for s in spaces}

    chosen: dict[OpenValue, None] = {}

    def concrete(term: z3.ExprRef, arrays: dict) -> z3.ExprRef:
        v = z3.simplify(z3.substitute(term, *pairs, *[(a, arrays[s])
                                                        for s, a in enc.memory.items()]))
        if choose is None:
            return v
        v, taken = take_open(v, choose)
        chosen.update(dict.fromkeys(taken))
        return v

    arrays = dict(empty)
    given: set[tuple[str, int]] = set()
    for i in enc.initialised:  # a module variable's initializer (given locations on top)
        if i.data is not None:
            at = concrete(i.address, empty)
            arrays[i.space] = store(arrays[i.space], at,
                                    z3.BitVecVal(int.from_bytes(i.data, "little"), 8 * i.size))
            given.update((i.space, at.as_long() + k) for k in range(i.size))
    for (space, at, t), raw in located.items():
        t = t or _load_type(enc, space, at, lambda x: concrete(x, empty))
        bits = _convert(raw, t, f"{space}[{at:#x}]")
        arrays[space] = store(arrays[space], location_term(space, at),
                              z3.BitVecVal(bits, t.width))
        given.add((space, at))

    def value(term: z3.ExprRef, what: str = "", at=None) -> Value:
        """A concrete value, or one every choice of the open values gives alike (a
        branch on a compare of an open NaN); an output the ISA leaves open (a free NaN, a
        return byte never written) is UNSPECIFIED, and an address or a condition of the
        instruction `at` that is not one is OpenDependence."""
        v = concrete(term, arrays)
        if z3.is_true(v) or z3.is_false(v):
            return z3.is_true(v)
        if z3.is_bv_value(v):
            return v.as_long()
        settled = _settled(v)
        if what or settled is not UNSPECIFIED:
            return settled
        raise OpenDependence(fn.name, at.line, at.text)

    for a in enc.assumed:
        if not value(a.holds, at=a):
            raise PtxError(f"{fn.name}: these inputs break what ptxsmt assumes at line "
                           f"{a.line} ({a.text}): {a.why}")
    for u in (*enc.undefined, *enc.bounded):
        if value(u.when, at=u):
            raise PtxError(f"{fn.name}: line {u.line} ({u.text}) is reached with these "
                           f"inputs, where {u.why}")

    def locations(accesses: list[Access]) -> list[Location]:
        return list(dict.fromkeys(Location(a.space, value(a.address, at=a), a.type)
                                  for a in accesses if value(a.when, at=a)))

    loaded = {loc: (value(load(arrays[loc.space], location_term(loc.space, loc.address),
                                loc.type.width)), (loc.space, loc.address) in given)
              for loc in locations(enc.loads)}
    final = {**arrays, **enc.final}  # a space the function does not write ends as it began
    stores = {loc: value(load(final[loc.space], location_term(loc.space, loc.address),
                              loc.type.width), str(loc))
              for loc in [*locations(enc.stores), *watch]}
    returns = {k: value(v, k) for k, v in enc.returns.items()}
    settled = {k: _settled_bytes(concrete(enc.returns[k], arrays))
               for k, v in returns.items() if v is UNSPECIFIED and z3.is_bv(enc.returns[k])}
    unreached(opened, chosen, fn.name)
    return FunctionEvaluation(fn.name, enc.types, scalars, loaded, returns, stores,
                              {k: v for k, v in settled.items() if v[1]}, tuple(chosen))


def _settled_bytes(term: z3.BitVecRef) -> tuple[int, int]:
    """The bytes of an unspecified value that every choice of the open values gives
    alike (bits, mask): a return of which some bytes were never written."""
    bits = mask = 0
    for k in range(term.size() // 8):
        byte = z3.simplify(z3.Extract(8 * k + 7, 8 * k, term))
        v = byte.as_long() if z3.is_bv_value(byte) else _settled(byte)
        if v is not UNSPECIFIED:
            bits, mask = bits | v << 8 * k, mask | 0xFF << 8 * k
    return bits, mask


def _settled(term: z3.ExprRef) -> Value:
    """An output term over free values only (no input left): its value if every choice
    of them gives the same one (a compare of an open NaN), else UNSPECIFIED."""
    free = free_values(term)  # its inputs substituted: the open values left
    one, two = ([(f, z3.FreshConst(f.sort())) for f in free] for _ in range(2))
    solver = z3.Solver()
    solver.add(z3.substitute(term, *one) != z3.substitute(term, *two))
    if check(solver) != z3.unsat:
        return UNSPECIFIED
    any_choice = z3.Solver()
    check(any_choice)
    v = any_choice.model().eval(term, model_completion=True)
    return z3.is_true(v) if z3.is_bool(v) else v.as_long()


def _split(inputs: Mapping[str, object], enc: FunctionEncoding):
    """Scalar inputs as bits, checked against what the function reads; memory locations
    as written."""
    scalars: dict[str, Value] = {}
    located: dict[tuple[str, int, PtxType | None], object] = {}
    for name, raw in inputs.items():
        if (loc := parse_location(name)) is not None:
            located[loc] = raw
            continue
        key = name.strip().lstrip("%")
        if key not in enc.inputs:
            raise PtxError(f"unknown input {quote(name)}: {enc.function} reads "
                           f"{', '.join(enc.inputs) or 'no parameter or register'}")
        if key in scalars:
            raise PtxError(f"input {quote(name)} is given twice")
        scalars[key] = _convert(raw, enc.types[key], name)
    missing = [f"{k} ({enc.origins[k]})" for k in enc.inputs if k not in scalars]
    if missing:
        raise PtxError(f"{enc.function} needs a value for: {'; '.join(missing)}")
    return scalars, located


def _convert(raw: object, t: PtxType, name: str) -> Value:
    if isinstance(raw, bool | int):
        return raw
    try:
        return parse_value(str(raw), t)
    except LiteralError as e:
        raise PtxError(f"input {quote(name)}: {e}") from None


def _load_type(enc: FunctionEncoding, space: str, at: int, concrete) -> PtxType:
    """The type of the widest load from `space[at]` (a location given without a type)."""
    widths = [a.type for a in enc.loads if a.space == space
              and z3.is_true(concrete(a.when)) and concrete(a.address).as_long() == at]
    if not widths:
        raise PtxError(f"no load reads {space}[{at:#x}] with these inputs: give its type "
                       f"({space}[{at:#x}].u32=...)")
    return max(widths, key=lambda t: t.width)
