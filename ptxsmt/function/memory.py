"""Memory: each state space is an array from addresses to bytes.

A `ld`/`st` of an N-bit type reads or writes N/8 consecutive bytes, little-endian (the
lowest address holds the lowest byte), so a load after a store to the same address sees
the stored value and two stores to one address leave the last. Addresses are 64-bit; a
32-bit address (`ld.shared.u32 %r1, [%r2]`) is zero-extended.

Generic addresses (a `ld`/`st` without a state space): the generic space holds windows
of 2^32 bytes, the shared window (its byte k is shared byte k), the local one and the
const one, whose bases are inputs (`window.shared`, `window.local`, `window.const`;
apart from each other, not wrapping, each 4 KiB-aligned). `cvta.shared a` is `window.shared + a` and
`cvta.to.shared g` is `g - window.shared` (local and const alike: nvcc -G reads
`__constant__` arrays through `cvta.const` and generic `ld`). A generic address computed
from a window's base (its term holds `window.shared`, ...) reaches whichever memory its
value falls in (computed from one base only: in that window, as pointer arithmetic stays
inside the object it starts from); any other generic address is a global one: a pointer
the function receives or loads is taken to point to global memory (nvcc's -O0 code
passes kernel pointers to generic `ld`/`st` where -O3 converts them to global ones
first; both reach one memory).

What the ISA leaves undefined is assumed not to happen (`Execution.assume`):
`cvta.to.global` of a window address, `cvta.to.shared` of an address outside its window,
`cvta.shared` of a shared address past 2^32.
"""

from __future__ import annotations

import z3

from ..terms.walk import subterms

ADDRESS_BITS = 64

# `ld.X`/`st.X` -> the array it reads and writes ("generic": global or a window).
SPACES = {"": "generic", "global": "global", "shared": "shared", "local": "local",
          "const": "const", "shared::cta": "shared", "shared::cluster": "shared"}
# Memory that outlives the function and is compared by equiv: a thread's local memory
# dies with it, and constant memory is never written.
OBSERVABLE = ("global", "shared")


def observable(*kinds: str) -> tuple[str, ...]:
    """The spaces equiv compares for functions of these kinds ("entry", "func"): shared
    memory is an output of a `.func` (its caller reads it after the call) but not of an
    `.entry`, after whose end the CTA's shared memory has no reader that a barrier orders
    after the store (NVVM drops such stores: nvcc -O3 of `s[i] = v; return;`)."""
    return tuple(s for s in OBSERVABLE if s != "shared" or "func" in kinds)


def address_bits(space: str) -> int:
    """Shared and local addresses are 32-bit (a window's offsets); a 64-bit address into
    them keeps its low half."""
    return 32 if space in WINDOWED else ADDRESS_BITS


def initial(space: str) -> z3.ArrayRef:
    """The memory of `space` when the function starts: an input."""
    return z3.Array(space, z3.BitVecSort(address_bits(space)), z3.BitVecSort(8))


def empty(space: str) -> z3.ArrayRef:
    return z3.K(z3.BitVecSort(address_bits(space)), z3.BitVecVal(0, 8))


def at(space: str, address: int) -> z3.BitVecRef:
    return z3.BitVecVal(address, address_bits(space))


def address(term: z3.BitVecRef, bits: int = ADDRESS_BITS) -> z3.BitVecRef:
    """An address of `bits` bits: zero-extended, or its low bits."""
    if term.size() < bits:
        return z3.ZeroExt(bits - term.size(), term)
    return z3.Extract(bits - 1, 0, term) if term.size() > bits else term


def load(memory: z3.ArrayRef, at: z3.BitVecRef, width: int,
         frames: Frames = ()) -> z3.BitVecRef:
    """`width` bits from `at` upwards, the byte at `at` lowest. `frames`: the variables
    of memory's space the function declares (`Execution.variable`), whose bytes a read
    of one of them looks up past the writes to the others (`byte`)."""
    at = address(at, memory.domain().size())
    sizes = {a.get_id(): n for a, n in frames}
    parts = [byte(memory, at + k, sizes) for k in reversed(range(width // 8))]
    return parts[0] if len(parts) == 1 else z3.Concat(*parts)


# (address, bytes) of each .shared or .local variable of one space
Frames = tuple[tuple[z3.BitVecRef, int], ...] | list[tuple[z3.BitVecRef, int]]


def byte(memory: z3.ArrayRef, at: z3.BitVecRef, sizes: dict[int, int]) -> z3.BitVecRef:
    """The byte at `at`, looked up past the writes that cannot reach it: where `at` is
    byte k of a variable A (k < A's size, `frame_byte`), a write to byte j of another
    variable B (j < B's size), or to another byte of A, is skipped; a write to byte k of
    A gives its value. That rests on the assumption each query carries for every .local
    or .shared variable (`Execution.variable`: "a .{space} variable lies in its window,
    apart from the others"): A and B lie below 2^32 - size (so `extract(31, 0, A) + k` is
    A + k, no wrap) and [A, A + size(A)) and [B, B + size(B)) do not overlap; on inputs
    outside it the query asks nothing. A memory that is one of two, `ite(c, M1, M2)` (a
    join of two paths, a guarded write), is read in each: select(ite(c, M1, M2), i) is
    ite(c, select(M1, i), select(M2, i)), one byte where both give it. Any other address
    or write ends the look-up: the write is kept."""
    mine = frame_byte(at, sizes)
    return z3.Select(memory, at) if mine is None else _look_up(memory, at, mine, sizes, {})


def _look_up(memory: z3.ArrayRef, at: z3.BitVecRef, mine: tuple[int, int],
             sizes: dict[int, int], read: dict[int, z3.BitVecRef]) -> z3.BitVecRef:
    """`byte` of byte `mine` of its variable; `read`: the byte of each memory read so
    far (by AST id: both sides of a join mostly share the memory before it)."""
    start = memory.get_id()
    if start in read:
        return read[start]
    found = None
    while found is None and z3.is_store(memory):
        theirs = frame_byte(memory.arg(1), sizes)
        if theirs is None:
            break
        if theirs == mine:
            found = memory.arg(2)
        memory = memory.arg(0)
    if found is None and z3.is_app_of(memory, z3.Z3_OP_ITE):
        c, yes, no = memory.children()
        yes, no = (_look_up(m, at, mine, sizes, read) for m in (yes, no))
        found = yes if yes.eq(no) else z3.If(c, yes, no)
    read[start] = z3.Select(memory, at) if found is None else found
    return read[start]


def frame_byte(at: z3.BitVecRef, sizes: dict[int, int]) -> tuple[int, int] | None:
    """(A's id, k) where `at` is the encoder's address of byte k of variable A and k is
    below A's size: `extract(31, 0, A)` plus constants, as bvadds (a depot's generic
    address less its window's base, simplified: `bvadd(2, extract(31, 0, A))`, then + k),
    or `extract(31, 0, A + c)` (`ld.local [%SPL+c]`); None for any other shape."""
    base, k = _sum(at, sizes)
    return (base, k % (1 << at.size())) if base is not None and \
        k % (1 << at.size()) < sizes[base] else None


def _sum(t: z3.BitVecRef, sizes: dict[int, int]) -> tuple[int | None, int]:
    """(the one variable, the sum of the constants) of a bvadd of constants, of
    `extract(31, 0, ·)` of such, and of exactly one variable of `sizes`; (None, 0) for
    any other term. Only the low 32 bits of the sum count: `extract(31, 0, A + c)` is
    `extract(31, 0, A) + extract(31, 0, c)` modulo 2^32."""
    if z3.is_bv_value(t):
        return None, t.as_long()
    if t.get_id() in sizes:
        return t.get_id(), 0
    if z3.is_app_of(t, z3.Z3_OP_EXTRACT) and t.decl().params() == [31, 0]:
        return _sum(t.arg(0), sizes)
    if not z3.is_app_of(t, z3.Z3_OP_BADD):
        return None, 0
    base, total = None, 0
    for part in t.children():
        b, k = _sum(part, sizes)
        if b is None and not z3.is_bv_value(part):
            return None, 0
        if b is not None and base is not None:
            return None, 0
        base, total = base if b is None else b, total + k
    return base, total


def store(memory: z3.ArrayRef, at: z3.BitVecRef, value: z3.BitVecRef) -> z3.ArrayRef:
    at = address(at, memory.domain().size())
    for k in range(value.size() // 8):
        memory = z3.Store(memory, at + k, z3.Extract(8 * k + 7, 8 * k, value))
    return memory


# the state spaces with a window in the generic space (shared and local always together)
WINDOWED = ("shared", "local", "const")
PAIRED = ("shared", "local")
WINDOW_BYTES = 1 << 32


def windows_in(term: z3.ExprRef) -> list[str]:
    """The windows whose base a term is computed from."""
    names = {f"window.{w}": w for w in WINDOWED}
    found = {names[t.decl().name()] for t in subterms(term)
             if t.num_args() == 0 and t.decl().name() in names}
    return [w for w in WINDOWED if w in found]


def in_window(generic: z3.BitVecRef, base: z3.BitVecRef) -> z3.BoolRef:
    return z3.ULT(generic - base, WINDOW_BYTES)


# Each window's base is a multiple of this: the ISA does not say where the windows lie,
# but a variable's declared `.align` holds of its generic address too (LLVM ORs an
# element's offset into a local depot's `cvta.local` address), and real windows start
# on far coarser boundaries than a page.
WINDOW_ALIGN = 1 << 12


def windows_apart(bases: list[z3.BitVecRef]) -> z3.BoolRef:
    """No window wraps around the address space, no two overlap, each base is aligned
    (WINDOW_ALIGN)."""
    top = (1 << ADDRESS_BITS) - WINDOW_BYTES
    fits = [z3.And(z3.ULT(b, top), z3.URem(b, WINDOW_ALIGN) == 0) for b in bases]
    apart = [z3.Or(z3.ULE(a + WINDOW_BYTES, b), z3.ULE(b + WINDOW_BYTES, a))
             for i, a in enumerate(bases) for b in bases[i + 1:]]
    return z3.And(*fits, *apart)
