"""The vectorised evaluator: programs compiled from the Z3 terms (not a second semantics),
run with numpy and without Z3, from their source lines or their bytecode
(`compiled`). Bit-vectors live in the narrowest unsigned word that holds them, Booleans
in bool arrays, floats as IEEE bits whose numpy float views compare IEEE-wise.
"""

from __future__ import annotations

import marshal
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from operator import methodcaller
from types import CodeType

import numpy as np

from ..isa.types import PtxType
from .shape import Shape


class Unsupported(Exception):
    """A Z3 operator the fast path does not compile (use the slow path)."""


def word_bits(width: int) -> int:
    """The bits of the narrowest unsigned word that holds `width` bits."""
    return next(w for w in (8, 16, 32, 64) if width <= w)


@cache
def word_dtype(width: int) -> type:
    """The numpy type of a register of `width` bits: bool for a predicate."""
    return np.bool_ if width == 1 else getattr(np, f"uint{word_bits(width)}")


LOCAL = re.compile(r"\b[st]\d+\b")  # a program's locals: s<i> an input slot, t<j> a line


def _part(x, lo: int, w: int) -> np.ndarray:
    """Bits lo.. lo+w-1 of x (w of 8, 16 or 32, lo a multiple of w): lane lo/w of its
    lanes (a strided view of a little-endian column's bytes)."""
    a = np.asarray(x)
    return _lanes(a, w, a.itemsize * 8 // w)[..., lo // w]


def _join(*parts) -> np.ndarray:
    """The concatenation of equal words (8 or 16 bits; the first the highest) into one
    word: one pass, where shifting and or-ing each part costs three."""
    low_first = np.broadcast_arrays(*parts[::-1])
    if not _LITTLE:
        low_first = [p.byteswap() for p in low_first[::-1]]
    stacked = np.stack(low_first, axis=-1)
    width = stacked.itemsize * 8 * len(parts)
    return stacked.view(getattr(np, f"uint{width}")).reshape(stacked.shape[:-1])


def _lanes(x, w: int, count: int) -> np.ndarray:
    """x's `count` lanes of w bits, lowest first, along a last axis: on a little-endian
    column a view (no pass); `lanes(a) < lanes(b)` compares every lane in one pass."""
    a = np.asarray(x)
    word = getattr(np, f"uint{w}")
    if _LITTLE and a.ndim == 1 and a.flags.c_contiguous:
        return a.view(word).reshape(-1, count)
    return np.stack([word(a >> (i * w)) for i in range(count)], axis=-1)


def _flags(lanes) -> np.ndarray:
    """Byte lanes of bools (lowest first, along the last axis) as one word of 0/1 bytes:
    on a little-endian machine the bools' own bytes, viewed."""
    a = np.ascontiguousarray(lanes)
    word = getattr(np, f"uint{8 * a.shape[-1]}")
    if _LITTLE:
        return a.view(np.uint8).view(word)[..., 0]
    return sum(word(a[..., k]) << (8 * k) for k in range(a.shape[-1]))


_LITTLE = sys.byteorder == "little"

# The vocabulary of the generated programs (see codegen.py), bound to numpy.
NUMPY: dict[str, object] = {
    "part": _part, "join": _join, "lanes": _lanes, "lane": lambda x, k: x[..., k],
    "b8": lambda c: np.asarray(c).view(np.uint8), "flags": _flags,
    "where": np.where, "lnot": np.logical_not, "minimum": np.minimum,
    "isnan": np.isnan, "isinf": np.isinf,
    **{f"u{b}": getattr(np, f"uint{b}") for b in (8, 16, 32, 64)},
    **{f"i{b}": methodcaller("view", getattr(np, f"int{b}")) for b in (8, 16, 32, 64)},
    # float32 holds every f16 and bf16 exactly, and numpy compares it IEEE-wise
    "f16": lambda x: x.view(np.float16).astype(np.float32),
    "bf16": lambda x: (np.uint32(x) << 16).view(np.float32),
    "f32": lambda x: x.view(np.float32), "f64": lambda x: x.view(np.float64),
}


Lines = tuple  # a program's steps, (local, expression) pairs reading its slots as s0, s1..


def _code(params: tuple[str, ...], lines: Lines, results: tuple[str, ...]) -> CodeType:
    """The lines as the code of one Python function, `program(*params)` -> `results`."""
    return compile("".join([f"def program({', '.join(params)}):\n",
                            *(f"    {target} = {expr}\n" for target, expr in lines),
                            f"    return ({''.join(r + ', ' for r in results)})\n"]),
                   "<ptxsmt program>", "exec")


@lru_cache(maxsize=8192)
def _function(params: tuple[str, ...], lines: Lines, results: tuple[str, ...]) -> Callable:
    return _defined(_code(params, lines, results))


@lru_cache(maxsize=8192)
def _loaded(code: bytes) -> Callable:
    """The function a program's marshalled code (as the cache keeps it) defines."""
    return _defined(marshal.loads(code))


def _defined(compiled: CodeType) -> Callable:
    namespace = dict(NUMPY)
    exec(compiled, namespace)  # noqa: S102 - our own program
    return namespace["program"]


@dataclass(frozen=True)
class FastProgram:
    slots: tuple[str, ...]  # the inputs of the value table, in order
    outputs: tuple[str, ...]
    types: dict[str, PtxType]
    lines: Lines
    results: tuple[str, ...]  # per output: the local (or constant) that holds it
    spelling: dict[str, str] = field(default_factory=dict)  # register -> as written
    bound: Mapping[str, int | bool] = field(default_factory=dict)  # slots the text fixes
    code: bytes | None = None  # the whole program, compiled and marshalled (from the cache)
    inputs: tuple[str, ...] = field(init=False)  # what a caller gives: all slots but bound

    def __post_init__(self) -> None:
        # set here, not as a cached property: a warm batch makes a program per text
        object.__setattr__(self, "inputs", tuple(s for s in self.slots if s not in self.bound))

    def compiled(self) -> bytes:
        """The whole program as marshalled bytecode (for the cache: Python's own format,
        so the cache's fingerprint names the Python version)."""
        return marshal.dumps(_code(self._params, self.lines, self.results))

    @property
    def _params(self) -> tuple[str, ...]:
        return tuple(f"s{i}" for i in range(len(self.slots)))

    def renamed(self, shape: Shape) -> FastProgram:
        """This program, compiled for `shape`, as the program of a text of that shape."""
        back = {s: r for r, s in shape.registers.items()}
        back |= {k: f"#{k}" for k in shape.constants}  # no register is spelled `#k0`
        return replace(self, slots=tuple(back[s] for s in self.slots),
                       outputs=tuple(back[o] for o in self.outputs),
                       types={back[k]: t for k, t in self.types.items()},
                       spelling=shape.spelling,
                       bound={back[k]: v for k, v in shape.constants.items()})

    def __call__(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Outputs for whole arrays of inputs (uint64 bits; bool for predicates)."""
        return self.specialize({})(arrays)

    def run_slots(self, columns: list, rows: int) -> list[np.ndarray]:
        """The outputs, in order, for `rows` rows of every slot given by position, bound
        ones too: texts of one shape (which differ only in names and bound values) run as
        one program. Words wrap by design (a sum is cut to w bits): the caller silences
        numpy's warnings, once for all its runs."""
        program = _loaded(self.code or self.compiled())  # a text's program has its code
        outputs = program(*(_as_array(c, self.types[n]) for c, n in zip(columns, self.slots)))
        return [x if type(x) is np.ndarray and x.shape == (rows,)
                else np.broadcast_to(np.asarray(x), (rows,)) for x in outputs]

    def specialize(self, fixed: Mapping[str, np.ndarray]) -> Callable:
        """Partial evaluation: the lines that read only `fixed` inputs run once, here;
        the returned function takes the other inputs (a sweep fixes b, varies a)."""
        fixed = {**self.bound, **fixed}
        given = [_as_array(fixed[name], self.types[name]) if name in fixed else None
                 for name in self.slots]
        known = {f"s{i}" for i, value in enumerate(given) if value is not None}
        early, late = [], []
        for target, expr in self.lines:  # a line reads only slots and the lines before it
            ready = known.issuperset(LOCAL.findall(expr))
            (early if ready else late).append((target, expr))
            if ready:
                known.add(target)
        names = tuple(target for target, _ in early)
        with np.errstate(all="ignore"):
            done = _function(self._params, tuple(early), names)(*given)
        program = _function(self._params + names, tuple(late), self.results)

        def run(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            values = [_as_array(arrays[name], self.types[name]) if value is None else value
                      for name, value in zip(self.slots, given)]
            with np.errstate(all="ignore"):
                outputs = program(*values, *done)
            size = max((np.size(v) for v in values), default=1)
            return {name: np.broadcast_to(np.asarray(x), (size,))
                    for name, x in zip(self.outputs, outputs)}

        return run


def _as_array(values, t: PtxType) -> np.ndarray:
    return np.asarray(values, dtype=word_dtype(t.width))
