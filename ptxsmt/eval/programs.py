"""A snippet's compiled program: from memory, else the on-disk cache, else the code
generator (the only step that needs Z3).

Texts of one shape (differing in register names or immediates) share one program;
the cache keys it by the shape's text and the options. A shape the fast path cannot
take exactly is remembered too, so a warm run does not try it again.
"""

from __future__ import annotations

from functools import lru_cache

from ..program import Program
from ..sem.options import DEFAULT, Options
from . import cache
from .fast import FastProgram, Unsupported
from .shape import Shape, shape_of

_UNSUPPORTED = "unsupported: "


@lru_cache(maxsize=16384)
def compile_program(text: str, opts: Options = DEFAULT) -> FastProgram:
    """The vectorised form of a snippet (raises PtxError on bad text, Unsupported where it
    cannot be exact)."""
    shape = _shape(text)
    return compile_shape(shape.text, opts).renamed(shape)


def _shape(text: str) -> Shape:
    """The text's shape; a warm cache knows it without parsing (a text that parses
    once parses the same way under the same fingerprint; an error is never cached)."""
    store = cache.store()
    if store and (hit := store.get(f"text {text}")):
        return Shape.from_json(hit[0])
    shape = shape_of(Program.parse(text))  # the text's own errors, places and spellings
    if store:
        store.put(f"text {text}", shape.to_json())
    return shape


@lru_cache(maxsize=4096)
def compile_shape(text: str, opts: Options) -> FastProgram:
    store = cache.store()
    key = f"shape {opts!r} {text}"
    hit = store.get(key) if store else None
    record, code = hit if hit else _generate(text, opts)
    if store and not hit:
        store.put(key, record, code)
    if record.startswith(_UNSUPPORTED):
        raise Unsupported(record.removeprefix(_UNSUPPORTED))
    return FastProgram.from_json(record, code)


def _generate(text: str, opts: Options) -> tuple[str, bytes | None]:
    from .codegen import compile_snippet  # imports Z3: only where a program is new

    try:
        fast = compile_snippet(Program.parse(text), opts)
    except Unsupported as e:
        return _UNSUPPORTED + str(e), None
    return fast.to_json(), fast.compiled()
