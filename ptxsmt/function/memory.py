"""Memory: each state space is an array from addresses to bytes.

A `ld`/`st` of an N-bit type reads or writes N/8 consecutive bytes, little-endian (the
lowest address holds the lowest byte), so a load after a store to the same address sees
the stored value and two stores to one address leave the last. Addresses are 64-bit; a
32-bit address (`ld.shared.u32 %r1, [%r2]`) is zero-extended.

Generic addressing is taken to be global addressing: `cvta.to.global`/`cvta.global` are
the identity on the address (see `instructions.py`) and a `ld`/`st` without a state space
reads and writes the global array. nvcc's -O0 code passes kernel pointers to generic
`ld`/`st` where its -O3 code converts them to global ones first; both reach one memory.
ptxsmt does not model the shared and local windows of the generic space.
"""

from __future__ import annotations

import z3

ADDRESS_BITS = 64

# `ld.X`/`st.X` -> the array it reads and writes ("" is generic addressing).
SPACES = {"": "global", "global": "global", "shared": "shared", "local": "local",
          "const": "const", "shared::cta": "shared", "shared::cluster": "shared"}
# Memory that outlives the function and is compared by equiv: a thread's local memory
# dies with it, and constant memory is never written.
OBSERVABLE = ("global", "shared")


def initial(space: str) -> z3.ArrayRef:
    """The memory of `space` when the function starts: an input."""
    return z3.Array(space, z3.BitVecSort(ADDRESS_BITS), z3.BitVecSort(8))


def address(term: z3.BitVecRef) -> z3.BitVecRef:
    return z3.ZeroExt(ADDRESS_BITS - term.size(), term) if term.size() < ADDRESS_BITS else term


def load(memory: z3.ArrayRef, at: z3.BitVecRef, width: int) -> z3.BitVecRef:
    """`width` bits from `at` upwards, the byte at `at` lowest."""
    at = address(at)
    parts = [z3.Select(memory, at + k) for k in reversed(range(width // 8))]
    return parts[0] if len(parts) == 1 else z3.Concat(*parts)


def store(memory: z3.ArrayRef, at: z3.BitVecRef, value: z3.BitVecRef) -> z3.ArrayRef:
    at = address(at)
    for k in range(value.size() // 8):
        memory = z3.Store(memory, at + k, z3.Extract(8 * k + 7, 8 * k, value))
    return memory
