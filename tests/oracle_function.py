"""A whole PTX `.func` on concrete parameter bits, instruction by instruction through the
independent oracle (tests/oracle.py, tests/oracle_rounding.py).

Test-only, as the oracle: plain Python, no z3, no ``ptxsmt`` (it reads the PTX text
itself). It runs one thread of the straight-line and branching code the generators of
scripts/heldout_corpus.py, scripts/sweep_corpus.py and scripts/nvcc_heldout.py produce:
ld.param/st.param on the parameters' bytes (`.v2`/`.v4` too: consecutive elements), mov,
bra/@p bra/ret, predicate logic, every instruction the oracle knows (its descriptor is
built from the opcode's dotted modifiers), and what nvcc's unoptimised code adds: `call`
of a function of the same module (its arguments and return through `.param` buffers, as
the ABI passes them), a local stack (`__local_depotN`, `cvta.local`, generic ld/st on it;
a byte read before it is written is open), and inline assembly's registers declared
without `%`.

    run(function, params, free) -> Run(returns={name: bits}, lanes={name: (Lane, ...)}, opened=bool)

``params`` maps each parameter to its bits (the little-endian value of its bytes).
``free`` chooses the values the ISA leaves open (oracle.unspecified by default: raise);
``Run.opened`` says whether one was asked for. ``lanes`` cuts each return into what its
stores wrote, each with the float format it was stored as (``st.param.f32``, or the bits
a float instruction of one format wrote), as docs/spec-notes.md note 14 reads a
float-typed return lane by lane (llc-14 stores an f16 with ``st.param.b16`` into a
``.b32`` return); the bytes no store wrote are lanes of their own, compared as bits.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import oracle
from oracle import TYPES, unspecified

_FUNCTION = re.compile(r"\.func\s+(?:\((?P<ret>[^)]*)\)\s*)?(?P<name>[\w$]+)\s*"
                       r"\((?P<params>[^)]*)\)\s*\{")
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)(?:\[(\d+)\])?")
_STATEMENT = re.compile(r"(?:@(?P<neg>!?)%(?P<guard>\w+)\s+)?(?P<op>[a-z][\w.]*)\s*(?P<args>.*)")
_ADDRESS = re.compile(r"\[\s*(%?[\w$]+)\s*(?:\+\s*(\d+))?\s*\]")
_ARGUMENT = re.compile(r"\{[^}]*\}|[^,\s][^,]*")  # `{%a, %b}` is one operand
_LOCAL = re.compile(r"\.local\s+(?:\.align\s+\d+\s+)?\.\w+\s+([\w$]+)(?:\[(\d+)\])?")
# `call.uni (retval0), callee, (param0, param1);` (nvcc spreads it over lines)
_CALL = re.compile(r"call(?:\.uni)?\s+(?:\((?P<rets>[^)]*)\)\s*,\s*)?(?P<callee>[\w$]+)"
                   r"\s*(?:,\s*\((?P<args>[^)]*)\))?\s*;")

COMPARISONS = {*oracle.ORDERED, *oracle.UNSIGNED_ALIAS, *(c + "u" for c in oracle.ORDERED),
               "num", "nan"}
ROUNDINGS = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"}
MODES = {"lo", "hi", "wide"}
VECTORS = {"v2": 2, "v4": 4, "v8": 8}  # ld/st's vector forms: elements per access
FLAGS = {"ftz": "ftz", "sat": "sat", "NaN": "nan", "relu": "relu"}
# bra.uni: a hint; ld/st's state space: an address says which buffer it is in
IGNORED = {"uni", "param", "local"}
# operand slots read as predicates, and the width of a shift amount, by opcode
PREDICATE_SLOTS = {"selp": {"c"}}
FIXED_WIDTH = {"shl": {"b": "b32"}, "shr": {"b": "b32"}, "bfi": {"c": "b32", "e": "b32"}}
STEP_LIMIT = 100_000


class OracleError(ValueError):
    """PTX outside what this interpreter reads."""


@dataclass
class Function:
    name: str
    params: dict[str, int]  # name -> bytes
    returns: dict[str, int]
    code: list[tuple]  # (guard register, negated, opcode, operands)
    labels: dict[str, int]  # label -> index into code
    local: dict[str, int] = dataclasses.field(default_factory=dict)  # depot -> bytes
    module: dict[str, Function] = dataclasses.field(default_factory=dict)  # callees by name


@dataclass(frozen=True)
class Lane:
    """Bytes of a return one store wrote (or one byte no store wrote)."""
    offset: int
    size: int
    fmt: str | None  # the float format it was stored as; None: bits
    written: bool = True  # False: the open value's byte, the same term on both sides

    def bits(self, whole: int) -> int:
        return (whole >> 8 * self.offset) & ((1 << 8 * self.size) - 1)


@dataclass
class Run:
    returns: dict[str, int]
    lanes: dict[str, tuple[Lane, ...]]  # each return's, low bytes first
    opened: bool
    activated: bool = False  # the probed statement would have written something else


def _size(typ: str, count: str | None) -> int:
    """Bytes of a `.param .b32 p` or `.param .b8 p[4]`."""
    return int(typ[1:]) // 8 * int(count or 1)


def _body(text: str, start: int) -> str:
    """The text inside the braces opened at ``start`` (inline assembly nests its own)."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1:i]
    raise OracleError("a function body without its closing brace")


def _statements(body: str) -> list[str]:
    """The body's statements and labels, a `call` spread over lines made one."""
    body = _CALL_SPREAD.sub(lambda m: " ".join(m[0].split()), body)
    return body.replace("\n", ";").split(";")


_CALL_SPREAD = re.compile(r"\bcall(?:\.uni)?\s[^;]*;")


def _function(m: re.Match, text: str) -> Function:
    body = _body(text, m.end() - 1)
    params = {p: _size(t, n) for t, p, n in _PARAM.findall(m.group("params"))}
    returns = {p: _size(t, n) for t, p, n in _PARAM.findall(m.group("ret") or "")}
    local = {d: int(n or 1) for d, n in _LOCAL.findall(body)}  # .b8 depots: bytes
    code: list[tuple] = []
    labels: dict[str, int] = {}
    for part in _statements(body):
        part = part.strip()
        while lab := re.match(r"([\w$]+):\s*", part):
            labels[lab.group(1)] = len(code)
            part = part[lab.end():]
        part = part.lstrip("{ \t")  # a `{ .reg ...; mov ...; }` scope: its statements
        if not part or part.startswith((".", "}")):
            continue
        s = _STATEMENT.fullmatch(part)
        if not s:
            raise OracleError(f"unreadable statement {part!r}")
        if s.group("op").split(".")[0] == "call":
            c = _CALL.fullmatch(part[s.start("op"):] + ";")
            if not c:
                raise OracleError(f"unreadable call {part!r}")
            args = [c["callee"], *([x.strip() for x in (c[k] or "").split(",") if x.strip()]
                                   for k in ("rets", "args"))]
        else:
            args = [a.strip() for a in _ARGUMENT.findall(s.group("args"))]
        code.append((s.group("guard"), bool(s.group("neg")), s.group("op"), args))
    return Function(m.group("name"), params, returns, code, labels, local)


def read(text: str, name: str | None = None) -> Function:
    """The `.func` called ``name`` (the first one without a name) of a PTX module's text,
    the module's other functions beside it (``Function.module``) for its calls."""
    text = re.sub(r"//[^\n]*", "", text)
    module: dict[str, Function] = {}
    for m in _FUNCTION.finditer(text):
        module.setdefault(m.group("name"), _function(m, text))
    for fn in module.values():
        fn.module = module
    if name is None and module:
        return next(iter(module.values()))
    if name not in module:
        raise OracleError(f"no .func {name!r}")
    return module[name]


def describe(opcode: str) -> tuple[dict, list[str]]:
    """The oracle's descriptor of a dotted opcode, and its types in order."""
    op, *mods = opcode.split(".")
    desc: dict = {"opcode": op}
    types: list[str] = []
    for m in mods:
        if m in TYPES:
            types.append(m)
        elif m in COMPARISONS and op in ("setp", "set"):
            desc["cmp"] = m
        elif m in ("and", "or", "xor") and op in ("setp", "set"):
            desc["boolop"] = m
        elif m in ROUNDINGS:
            desc["rnd"] = m
        elif m in MODES:
            desc["mode"] = m
        elif m in VECTORS and op in ("ld", "st"):
            desc["vector"] = VECTORS[m]
        elif m in FLAGS:
            desc[FLAGS[m]] = True
        elif m not in IGNORED:
            raise OracleError(f"unknown modifier .{m} of {opcode}")
    if op == "set":  # set.CmpOp.dtype.stype
        desc["dtype"], desc["stype"] = types
        desc["type"] = desc["stype"]
    elif op == "cvt":
        desc["dtype"], desc["atype"] = types
        kinds = {TYPES[t][0] for t in types}
        if desc.get("rnd") or ("f" in kinds and kinds & {"s", "u"}):
            desc["family"] = "convert"
    elif types:
        desc["type"] = types[-1]
    return desc, types


def _immediate(text: str, typ: str) -> int:
    w = 1 if typ == "pred" else TYPES[typ][1]
    if re.fullmatch(r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}", text):
        return int(text[2:], 16)
    try:
        return int(text, 0) % (1 << w)
    except ValueError:
        raise OracleError(f"unreadable operand {text!r}") from None


def _float_format(typ: str) -> str | None:
    return typ if TYPES.get(typ, ("",))[0] == "f" else None


class Memory:
    """What an address may name, shared by a run and the calls it makes (a callee reads
    its caller's stack through a pointer): 64 KiB slots from PARAM_SPACE up, each a
    buffer and the offsets written into it."""

    def __init__(self):
        self.slots: dict[int, tuple[bytearray, set[int]]] = {}

    def allocate(self, data: bytes, written: bool) -> int:
        address = PARAM_SPACE + (len(self.slots) << 16)
        self.slots[address] = (bytearray(data), set(range(len(data))) if written else set())
        return address


def run(fn: Function, params: dict[str, int], free=unspecified,
        probe: tuple[int, tuple] | None = None, memory: Memory | None = None) -> Run:
    """One run; ``probe`` (index into ``fn.code``, another statement) also evaluates that
    statement in place of the one at the index, without taking its result, and
    ``Run.activated`` says whether it would have written something else (NaNs alike).
    ``memory``: the caller's, for a call."""
    regs: dict[str, int | bool] = {}
    written_as: dict[str, str | None] = {}  # register -> float format of its last writer
    memory = memory or Memory()
    # the parameters' and the local depots' addresses (mov.u64 %SPL, __local_depot0)
    address_of = {p: memory.allocate(params[p].to_bytes(n, "little"), True)
                  for p, n in fn.params.items()}
    address_of |= {d: memory.allocate(bytes(n), False) for d, n in fn.local.items()}
    ret_bytes = {r: bytearray(n) for r, n in fn.returns.items()}
    unwritten = {r: set(range(n)) for r, n in fn.returns.items()}
    # the `.param` buffers of the calls made, by name: bytes, and those written
    named: dict[str, tuple[bytearray, set[int]]] = {}
    # per return byte: the store that wrote it last, as (offset, size, float format)
    writer: dict[str, dict[int, tuple]] = {r: {} for r in fn.returns}
    opened = False

    def chooser(key, fmt):
        nonlocal opened
        opened = True
        return free(key, fmt)

    def value(text: str, typ: str):
        if text.startswith("%") or text.startswith("!%") or text.lstrip("!") in regs:
            neg, reg = text.startswith("!"), text.lstrip("!%")
            if reg not in regs:
                raise OracleError(f"{reg} read before written")
            v = regs[reg]
            if typ == "pred":
                return (not v) if neg else v
            return v & ((1 << TYPES[typ][1]) - 1)
        if text in address_of:  # `mov.b64 %rd, k_param_0`: the parameter's address
            return address_of[text]
        if typ == "pred":
            return bool(_immediate(text, "b32"))
        return _immediate(text, typ)

    def location(text: str) -> tuple[int | str, int]:
        """`[k_param_0+4]`, `[%rd3]`, `[%SP+2]`: the slot (or a return's or a call's
        buffer, by name) and the offset into it."""
        m = _ADDRESS.fullmatch(text)
        if not m:
            raise OracleError(f"unreadable address {text!r}")
        base, off = m.group(1), int(m.group(2) or 0)
        if base.startswith("%") or base in regs:
            address = value(base, "b64") + off
        elif base in address_of:
            address = address_of[base] + off
        else:
            return base, off
        if address & ~0xFFFF not in memory.slots:
            raise OracleError(f"{text} is no parameter's or depot's address")
        return address & ~0xFFFF, address & 0xFFFF

    def buffer(key: int | str) -> tuple[bytearray, set[int]]:
        return memory.slots[key] if isinstance(key, int) else named.setdefault(
            key, (bytearray(), set()))

    def load(key: int | str, off: int, n: int) -> int:
        """n bytes of a parameter, a depot or a call's `.param` buffer (a byte not yet
        written is open)."""
        data, written = buffer(key)
        got = bytes(data[i] if i in written else chooser(("unwritten", key, i), "int8")
                    for i in range(off, off + n))
        return int.from_bytes(got, "little")

    def store(key: int | str, off: int, data: bytes) -> None:
        held, written = buffer(key)
        held.extend(bytes(max(0, off + len(data) - len(held))))
        held[off:off + len(data)] = data
        written.update(range(off, off + len(data)))

    def call(callee: str, rets: list[str], arguments: list[str]) -> None:
        """The callee run on its arguments' `.param` buffers; its returns stored in
        `rets`' (the ABI's `call (retval0), f, (param0, ...)`)."""
        if callee not in fn.module:
            raise OracleError(f"a call of {callee}, which has no body in the module")
        target = fn.module[callee]
        if len(arguments) != len(target.params) or len(rets) != len(target.returns):
            raise OracleError(f"a call of {callee} with other arguments than it takes")
        inputs = {p: load(a, 0, n) for a, (p, n) in zip(arguments, target.params.items(),
                                                       strict=True)}
        done = run(target, inputs, chooser, memory=memory)
        for r, (name, n) in zip(rets, target.returns.items(), strict=True):
            store(r, 0, done.returns[name].to_bytes(n, "little"))

    def compute(desc: dict, args: list[str]) -> list[tuple[str, object, str | None]]:
        """(register, value, float format) written by one computing instruction."""
        op = desc["opcode"]
        dests, srcs = args[0].split("|"), args[1:]
        inputs = {}
        for slot, text in zip("abce", srcs, strict=False):  # e: bfi's length (the ISA's d)
            if slot in PREDICATE_SLOTS.get(op, ()) or (op in LOGIC_OPS and desc["type"] == "pred"):
                inputs[slot] = value(text, "pred")
            elif op == "cvt":
                inputs[slot] = value(text, desc["atype"])
            else:
                inputs[slot] = value(text, FIXED_WIDTH.get(op, {}).get(slot, desc["type"]))
        out = {"d": inputs["a"]} if op == "mov" else oracle.evaluate(desc, inputs, chooser)
        dtype = desc["dtype"] if op in ("cvt", "set") else desc["type"]
        fmt = None if op == "setp" else _float_format(dtype)
        if op == "mov" and fmt is None and srcs[0].startswith("%"):  # mov.b32 passes a float on
            fmt = written_as.get(srcs[0].lstrip("%"))
        return [(reg.strip().lstrip("%"), out[key], fmt)
                for reg, key in zip(dests, ["p", "q"] if op == "setp" else ["d"], strict=False)]

    pc, steps, activated = 0, 0, False
    while pc < len(fn.code):
        steps += 1
        if steps > STEP_LIMIT:
            raise OracleError("step limit: a loop that does not end?")
        guard, negated, opcode, args = fn.code[pc]
        pc += 1
        if guard is not None and (not regs[guard]) != negated:
            continue
        op = opcode.split(".")[0]
        if op == "ret":
            break
        if op == "bra":
            pc = fn.labels[args[0]]
            continue
        desc, types = describe(opcode)
        if op == "call":
            call(*args)
            continue
        if op == "cvta":  # a local address is its generic address here: one numbering
            regs[args[0].lstrip("%")] = value(args[1], "b64")
            written_as[args[0].lstrip("%")] = None
            continue
        if op in ("ld", "st"):  # `.v2`/`.v4`: the elements at consecutive addresses
            typ = desc["type"]
            base, off = location(args[1] if op == "ld" else args[0])
            n = TYPES[typ][1] // 8
            elements = _elements(args[0] if op == "ld" else args[1], desc.get("vector", 1))
            for at, elem in zip(range(off, off + n * len(elements), n), elements, strict=True):
                if op == "ld":
                    regs[elem.lstrip("%")] = load(base, at, n)
                    written_as[elem.lstrip("%")] = _float_format(typ)
                elif base in ret_bytes:
                    ret_bytes[base][at:at + n] = value(elem, typ).to_bytes(n, "little")
                    unwritten[base] -= set(range(at, at + n))
                    fmt = _float_format(typ) or (written_as.get(elem.lstrip("%"))
                                                 if elem.startswith("%") else None)
                    store_lane = (at, n, fmt if fmt and TYPES[fmt][1] // 8 == n else None)
                    writer[base] |= dict.fromkeys(range(at, at + n), store_lane)
                else:
                    store(base, at, value(elem, typ).to_bytes(n, "little"))
            continue
        if op == "mov" and "{" in args[0] + args[1]:  # mov.b32 {lo, hi}, r / r, {lo, hi}
            for reg in _vector_mov(args, desc["type"], regs, value):
                written_as[reg] = None
            continue
        written = compute(desc, args)
        if probe and pc - 1 == probe[0] and not activated:
            _, _, other, other_args = probe[1]
            alternative = compute(describe(other)[0], other_args)
            activated = any(not same(v, w, f) for (_, v, f), (_, w, _) in
                            zip(written, alternative, strict=True))
        for reg, v, fmt in written:
            regs[reg], written_as[reg] = v, fmt
    for r, positions in unwritten.items():  # a return byte never written is open too
        for i in positions:
            ret_bytes[r][i] = chooser(("unwritten", r, i), "int8")
    return Run({r: int.from_bytes(b, "little") for r, b in ret_bytes.items()},
               {r: _lanes(writer[r], n) for r, n in fn.returns.items()}, opened, activated)


def _lanes(writer: dict[int, tuple], size: int) -> tuple[Lane, ...]:
    """A return's lanes from the store that wrote each byte last: a store's bytes that no
    later store overwrote in part are its lane; any other byte is a lane of bits."""
    lanes, i = [], 0
    while i < size:
        at, n, fmt = writer.get(i, (i, 1, None))
        whole = at == i and all(writer.get(j) == (at, n, fmt) for j in range(i, i + n))
        lanes.append(Lane(i, n, fmt, i in writer) if whole else Lane(i, 1, None, i in writer))
        i += n if whole else 1
    return tuple(lanes)


LOGIC_OPS = ("and", "or", "xor", "not", "mov")
PARAM_SPACE = 0x7000_0000_0000  # where parameter addresses lie (one 64 KiB slot each)


def _elements(operand: str, count: int) -> list[str]:
    """A vector ld/st's `{%a, %b}` (count elements), or a scalar's one operand."""
    lanes = [t.strip() for t in operand.strip("{}").split(",")]
    if len(lanes) != count or ("{" in operand) != (count > 1):
        raise OracleError(f"{operand!r} is not {count} element(s)")
    return lanes


def _vector_mov(args: list[str], typ: str, regs: dict, value) -> list[str]:
    """Pack `{lo, hi}` into one register, or unpack one into `{lo, hi}` (lane 0 low)."""
    lanes = [t.strip() for t in args[0 if "{" in args[0] else 1].strip("{}").split(",")]
    w = TYPES[typ][1] // len(lanes)
    if "{" in args[0]:
        whole = value(args[1], typ)
        for i, reg in enumerate(lanes):
            regs[reg.lstrip("%")] = (whole >> (w * i)) & ((1 << w) - 1)
        return [reg.lstrip("%") for reg in lanes]
    regs[args[0].lstrip("%")] = sum(value(r, f"b{w}") << (w * i) for i, r in enumerate(lanes))
    return [args[0].lstrip("%")]


# ---------------------------------------------------------------- open values
OPEN_NANS = {  # per chooser: the NaN it gives, by format (positive/negative, quiet/signalling)
    "f16": (0x7FFF, 0xFE01, 0x7C01),
    "bf16": (0x7FFF, 0xFF81, 0x7F81),
    "f32": (0x7FFFFFFF, 0xFFC00001, 0x7F800001),
    "f64": (0x7FFFFFFFFFFFFFFF, 0xFFF8000000000001, 0x7FF0000000000001),
}
CHOOSERS = range(3)


def chooser(k: int):
    """The k-th way of filling the values the ISA leaves open (a NaN per format; an
    integer or predicate left open: all zeros, all ones, alternating bits)."""
    def free(key, fmt):
        if fmt in OPEN_NANS:
            return OPEN_NANS[fmt][k]
        w = int(fmt[3:])
        return (0, (1 << w) - 1, int("01" * 32, 2) % (1 << w))[k]
    return free


def nan_bits(bits: int, fmt: str | None) -> bool:
    return fmt is not None and oracle.is_nan(bits, fmt)


def same(a: int, b: int, fmt: str | None) -> bool:
    """Returns compared as ptxsmt's default (--nan payload-free) does: bit for bit, any
    NaN equal to any NaN at a float-typed return."""
    return a == b or (nan_bits(a, fmt) and nan_bits(b, fmt))


def same_return(a: int, b: int, lanes_a: tuple[Lane, ...], lanes_b: tuple[Lane, ...],
                written_only: bool = False) -> bool:
    """Two values of a return compared lane by lane: as its float where both sides stored
    that lane as one format (any NaN equal to any NaN, --nan payload-free), else as bits
    (bytes the two sides cut otherwise: byte by byte); ``written_only``: the bytes no
    store wrote on either side left out."""
    shared = set(lanes_a) & set(lanes_b)
    lanes = [*shared, *(Lane(i, 1, None, lane.written) for lane in {*lanes_a, *lanes_b} - shared
                        for i in range(lane.offset, lane.offset + lane.size))]
    return all(same(lane.bits(a), lane.bits(b), lane.fmt) for lane in lanes
               if lane.written or not written_only)


def unwritten(run_: Run, r: str) -> set[int]:
    """The bytes of return ``r`` no store wrote."""
    return {lane.offset for lane in run_.lanes[r] if not lane.written}


def outcome(fn: Function, params: dict[str, int], probe=None) -> Run | None:
    """One run with what the ISA leaves open ruled out: None where a return's written
    bytes depend on which open value is chosen (three choosers tried), else the first
    chooser's run. The bytes no store wrote are the chooser's by construction: the same
    open value on both sides of a pair, compared as bits."""
    first = run(fn, params, chooser(0), probe)
    if not first.opened:
        return first
    for k in CHOOSERS[1:]:
        other = run(fn, params, chooser(k))
        if any(not same_return(first.returns[r], other.returns[r], first.lanes[r],
                               other.lanes[r], written_only=True) for r in first.returns):
            return None
    return first


def byte_choices(fn: Function, params: dict[str, int]) -> dict[str, list[set[int]]]:
    """Per return, per byte: the values it takes under each chooser of the open values
    (one value: a settled byte; more: a byte the ISA leaves open)."""
    runs = [run(fn, params, chooser(k)).returns for k in CHOOSERS]
    return {r: [{(one[r] >> 8 * i) & 0xFF for one in runs} for i in range(n)]
            for r, n in fn.returns.items()}
