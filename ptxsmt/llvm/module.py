"""IR text in, through llvmlite (parse and verify), and the IR's types as ptxsmt sees them.

llvmlite is imported here and only here, on first use, so ptxsmt installs and runs
without it; `read_ir` says in one line how to get it.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import re
import tempfile
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..isa.errors import quote
from ..isa.types import BF16, F16, F32, F64, FloatFormat
from . import outline, reader
from .errors import LlvmError, Unsupported

FLOAT_FORMATS = {"half": F16, "bfloat": BF16, "float": F32, "double": F64}


@cache
def binding() -> Any:
    try:
        import llvmlite.binding as llvm
    except ImportError:
        raise LlvmError("reading LLVM IR needs llvmlite: pip install 'ptxsmt[llvm]'") from None
    return llvm


# nvptx64's datalayout (LLVM 14's; LLVM 22 adds only types ptxsmt does not read): where
# a struct's or array's fields lie, for the calling convention. A module's own
# datalayout, where it gives one, is used instead.
NVPTX64_DATALAYOUT = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"


@dataclass(frozen=True)
class IrType:
    """One IR value's type: `lanes` elements of a scalar kind ("int", "float", "ptr"),
    each `width` bits; "void" for no value. An aggregate (kind "struct": a struct or an
    array) has `fields`, and its value is the lanes of its fields one after the other
    (`leaves`); `offsets` are where those lanes lie in its memory image of `size` bytes
    (the datalayout's: padding between fields, a vector's elements side by side)."""

    kind: str
    width: int = 0
    lanes: int = 1
    fmt: FloatFormat | None = None
    text: str = ""
    element_text: str = ""  # a vector's element type, as LLVM prints it
    fields: tuple[IrType, ...] = ()
    offsets: tuple[int, ...] = ()  # bytes, one per leaf lane (aggregates; none: no layout)
    size: int = 0  # bytes (aggregates only)

    @property
    def scalar(self) -> IrType:
        return IrType(self.kind, self.width, 1, self.fmt, self.element_text or self.text)

    @property
    def leaves(self) -> tuple[IrType, ...]:
        """The scalar type of each lane of a value of this type."""
        if self.kind == "struct":
            return tuple(x for f in self.fields for x in f.leaves)
        return (self.scalar,) * self.lanes if self.kind != "void" else ()

    def field_lanes(self, index: int) -> tuple[int, int]:
        """(first lane, number of lanes) of field `index` of an aggregate."""
        start = sum(len(f.leaves) for f in self.fields[:index])
        return start, len(self.fields[index].leaves)


def _aggregate(tref, text: str, datalayout: str) -> IrType:
    """A struct or array: its fields' types, and where their lanes lie (the datalayout's
    offsets, which the NVPTX calling convention follows: a field at its offset in the
    `.param .b8 name[size]` array)."""
    elements = list(tref.elements)
    if tref.is_array:
        elements = elements * tref.element_count
    fields = tuple(ir_type(e, datalayout) for e in elements)
    if any(f.kind == "void" for f in fields) or not fields:
        raise Unsupported("type", text)
    if "<{" in text:
        raise Unsupported("type", f"packed struct {text}")
    layout = binding().create_target_data(datalayout)
    offsets: list[int] | None = []
    for i, f in enumerate(fields):
        at = layout.get_element_offset(tref, i) if tref.is_struct else \
            i * layout.get_abi_size(elements[0])
        if offsets is None or (f.kind == "struct" and not f.offsets) or \
                (f.kind != "struct" and f.lanes > 1 and f.width % 8):
            offsets = None  # a vector of i1 (bits packed): no byte per lane to point at
        elif f.kind == "struct":
            offsets += [at + o for o in f.offsets]
        else:
            offsets += [at + k * ((f.width + 7) // 8) for k in range(f.lanes)]
    name = f"%{tref.name}" if tref.is_struct and tref.name else text
    return IrType("struct", 0, sum(len(f.leaves) for f in fields), None, name, "", fields,
                  tuple(offsets or ()), layout.get_abi_size(tref))


def ir_type(tref, datalayout: str = NVPTX64_DATALAYOUT) -> IrType:
    """An IrType from llvmlite's TypeRef: integers, the four float formats, pointers
    (64-bit, as on nvptx64 and the host), vectors of those, and structs and arrays of
    all of these (laid out by `datalayout`)."""
    text = str(tref)
    if tref.is_struct or tref.is_array:
        return _aggregate(tref, text, datalayout)
    if tref.is_vector:
        element = ir_type(next(iter(tref.elements)))
        return IrType(element.kind, element.width, tref.element_count, element.fmt, text,
                      element.text)
    if text == "void":
        return IrType("void", text=text)
    if text in FLOAT_FORMATS:
        fmt = FLOAT_FORMATS[text]
        return IrType("float", fmt.width, 1, fmt, text)
    if tref.is_pointer:
        return IrType("ptr", 64, 1, None, text)
    if tref.type_kind.name == "integer":
        return IrType("int", tref.type_width, 1, None, text)
    raise Unsupported("type", text)


def address(value) -> int:
    """A value's identity: llvmlite hands out a new wrapper per access."""
    return ctypes.cast(value._ptr, ctypes.c_void_p).value


@dataclass
class IrFunction:
    """A verified IR function: its name, parameters (name, type), return type and
    attributes, and the llvmlite function value for the encoder to walk."""

    name: str
    params: list[tuple[str, IrType]]
    returns: IrType
    return_attributes: frozenset[str]
    param_attributes: list[frozenset[str]]
    value: Any
    module: Any
    refused: Unsupported | None = None  # why it cannot be encoded (raised when it is)

    @property
    def text(self) -> str:
        return str(self.value)


def read_ir(text: str, only: str | None = None) -> dict[str, IrFunction]:
    """Every function defined in IR `text`, by name (declarations are left out). With
    `only`: that function alone (none if the text does not define it), read from the
    part of the module it needs (`outline.only`); where that part is not valid IR the
    whole module is read, so an error is the one the whole module gives."""
    cut = None if only is None else outline.only(text, only)
    if cut is not None:
        with suppress(LlvmError):
            module = parse_module(cut)
            return {only: ir_function(module.get_function(only), module)}
    module = parse_module(text)
    return {fn.name: ir_function(fn, module) for fn in module.functions
            if not fn.is_declaration and only in (None, fn.name)}


def function_names(text: str) -> list[str]:
    """The functions IR `text` defines, in order, none printed (for an error's list)."""
    return [fn.name for fn in parse_module(text).functions if not fn.is_declaration]


def parse_module(text: str):
    """A parsed and verified module; LlvmError naming the first error."""
    try:
        module = binding().parse_assembly(reader.legacy_denormal_attributes(text))
        module.verify()
    except RuntimeError as e:
        lines = [x for x in str(e).strip().splitlines() if "error:" in x] or ["invalid IR"]
        raise LlvmError(f"LLVM IR: {lines[0].removeprefix('<string>:')}") from None
    return module


def ir_function(fn, module) -> IrFunction:
    """One defined function of a parsed module (refused alone where its type is)."""
    layout = module.data_layout or NVPTX64_DATALAYOUT
    try:
        params = [(a.name or f"arg{i}", ir_type(a.type, layout))
                  for i, a in enumerate(fn.arguments)]
        ret = ir_type(fn.global_value_type.get_function_return(), layout)
    except Unsupported as e:  # this function only: the others are still checked
        return IrFunction(fn.name, [], IrType("void"), frozenset(), [], fn, module, e)
    define = reader.define_line(str(fn))
    return IrFunction(fn.name, params, ret, reader.return_attributes(define),
                      reader.param_attributes(define), fn, module)


TRIPLE = "nvptx64-nvidia-cuda"
_FEATURE = re.compile(r"[+-]([A-Za-z0-9_.]+)")


def compile_to_ptx(text: str, cpu: str = "sm_80", opt: int = 2, features: str = "") -> str:
    """PTX for IR `text` from the NVPTX backend of the LLVM inside llvmlite (no GPU and
    no other tool needed); `features` as llc's -mattr spells them (`+ptx80`)."""
    features = parse_features(features)
    status, out = _apart(_emit, text, cpu, opt, features)
    if status != "ok":
        raise LlvmError(f"NVPTX backend: {out}")
    return out


def _emit(text: str, cpu: str, opt: int, features: str) -> tuple[str, str]:
    llvm = _nvptx()
    try:
        module = llvm.parse_assembly(reader.legacy_denormal_attributes(text))
        module.triple = TRIPLE
        module.verify()
        target = llvm.Target.from_triple(TRIPLE)
        return "ok", target.create_target_machine(cpu=cpu, features=features,
                                                  opt=opt).emit_assembly(module)
    except RuntimeError as e:
        return "error", str(e).strip().splitlines()[0]


def _apart(fn, *args) -> tuple[str, str]:
    """`fn(*args)` (a status and a text) in a forked child: LLVM ends the whole process
    on a fatal error (`LLVM ERROR: PTX version 6.3 does not support target 'sm_80'`,
    a selection it cannot make) with exit status 1, which a command would pass on as
    its own exit status ("different"). The child's stderr is kept, and its fatal error
    becomes the error's text."""
    with tempfile.TemporaryFile() as stderr, tempfile.TemporaryFile() as result:
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            code = 1
            try:
                os.dup2(stderr.fileno(), 2)
                result.write(pickle.dumps(fn(*args)))
                result.flush()
                code = 0
            finally:
                os._exit(code)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        result.seek(0)
        if status == 0:
            return pickle.loads(result.read())
        stderr.seek(0)
        said = stderr.read().decode(errors="replace").splitlines()
        fatal = [x.removeprefix("LLVM ERROR: ") for x in said if x.startswith("LLVM ERROR:")]
        return "error", (fatal or said[-1:] or [f"LLVM ended with exit status {status}"])[0]


def parse_features(text: str) -> str:
    """Target features as llc's -mattr takes them (`+ptx80,-ptx81`: each a + or a -, then
    a feature the NVPTX backend knows), as LLVM takes them; LlvmError naming the first
    that is not one: LLVM itself only warns of a feature it does not know (and ignores
    it), and aborts the process on one without its sign."""
    items = [item.strip() for item in text.split(",")] if text.strip() else []
    for item in items:
        m = _FEATURE.fullmatch(item)
        if not m:
            raise LlvmError(f"target feature {quote(item)} is not like +ptx80 (a + or a -, "
                            "then the feature; several: +ptx80,+sm_90)")
        if m[1] not in nvptx_features():
            raise LlvmError(f"{quote(item)} is not a target feature of LLVM "
                            f"{_version()}'s NVPTX backend (it knows {_spans(nvptx_features())})")
    return ",".join(items)


@cache
def nvptx_features() -> frozenset[str]:
    """The features the NVPTX backend knows, as it lists them for -mattr=help (on
    stderr, read here through a file)."""
    llvm = _nvptx()
    with tempfile.TemporaryFile() as listing:
        saved = os.dup(2)
        os.dup2(listing.fileno(), 2)
        try:
            llvm.Target.from_triple(TRIPLE).create_target_machine(features="+help")
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        listing.seek(0)
        text = listing.read().decode(errors="replace")
    _, _, features = text.partition("Available features for this target:")
    return frozenset(re.findall(r"^ +(\S+) +- ", features, re.M))


def _spans(names: frozenset[str]) -> str:
    """`ptx32 to ptx90, sm_20 to sm_121f`: each family's first and last, by number."""
    families: dict[str, list[str]] = {}
    for name in names:
        families.setdefault(re.sub(r"\d.*", "", name), []).append(name)
    return ", ".join(f"{min(f, key=_number)} to {max(f, key=_number)}" if len(f) > 1 else f[0]
                     for _, f in sorted(families.items()))


def _number(name: str) -> tuple[int, str]:
    digits = re.search(r"\d+", name)
    return int(digits[0]) if digits else 0, name


def _version() -> str:
    return ".".join(map(str, binding().llvm_version_info[:2]))


def _nvptx():
    llvm = binding()
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm
