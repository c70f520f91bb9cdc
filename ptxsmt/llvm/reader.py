"""The one place that reads LLVM's printed IR, for the facts llvmlite's binding does not
expose: an instruction's flags and compare predicate, its alignment, a GEP's source
element type, a shufflevector's mask, a constant's exact bits (NaN payloads included),
the parameter and return attributes of a function, and an intrinsic's base name.

Everything here takes the text LLVM itself printed (`str(value)`), so spellings are
canonical: floats as decimal only when that is exact, otherwise `0x` and 16 hex digits
of the double (also for `float`), `0xH`/`0xR` for half/bfloat bits.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .errors import LlvmError, Unsupported

INT_FLAGS = frozenset({"nsw", "nuw", "exact", "disjoint", "nneg", "samesign", "inbounds"})
FAST_MATH = frozenset({"nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc", "fast"})
MEMORY_FLAGS = frozenset({"volatile", "atomic"})
ICMP_PREDICATES = frozenset({"eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle"})
FCMP_PREDICATES = frozenset({"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq",
                             "ugt", "uge", "ult", "ule", "une", "uno", "true"})
CALL_PREFIXES = frozenset({"tail", "musttail", "notail"})


@dataclass(frozen=True)
class Printed:
    """What an instruction's printed form adds to the binding: flags and predicate."""

    opcode: str
    flags: frozenset[str]
    predicate: str | None = None


def _tokens(text: str) -> list[str]:
    """Words and punctuation of one printed line; brackets and commas stand alone."""
    out, word = [], ""
    for ch in text:
        if ch.isspace() or ch in ",()<>[]{}":
            if word:
                out.append(word)
            word = ""
            if ch in ",()<>[]{}":
                out.append(ch)
        else:
            word += ch
    return [*out, word] if word else out


def _after_assignment(text: str) -> list[str]:
    words = _tokens(text.strip())
    if words and words[0].startswith("%") and len(words) > 1 and words[1] == "=":
        words = words[2:]
    while words and words[0] in CALL_PREFIXES:
        words = words[1:]
    return words


def instruction(text: str) -> Printed:
    """`%x = add nsw nuw i32 %a, %b` -> Printed("add", {nsw, nuw});
    `%c = fcmp nnan ult float %a, %b` -> Printed("fcmp", {nnan}, "ult")."""
    words = _after_assignment(text)
    if not words:
        raise LlvmError(f"empty instruction {text!r}")
    opcode, flags, predicate = words[0], set(), None
    for w in words[1:]:
        if w in INT_FLAGS or w in FAST_MATH or w in MEMORY_FLAGS:
            flags.add(w)
        elif opcode in ("icmp", "fcmp") and predicate is None and \
                w in (ICMP_PREDICATES if opcode == "icmp" else FCMP_PREDICATES):
            predicate = w
        else:
            break
    if "fast" in flags:
        flags |= FAST_MATH - {"fast"}
    return Printed(opcode, frozenset(flags), predicate)


def alignment(text: str) -> int | None:
    """The `align N` of a load or store, None when absent."""
    words = _tokens(text)
    for i, w in enumerate(words[:-1]):
        if w == "align" and words[i + 1].isdigit() and i and words[i - 1] == ",":
            return int(words[i + 1])
    return None


_SCALAR_BYTES = {"half": 2, "bfloat": 2, "float": 4, "double": 8, "ptr": 8}


def _type_size(words: list[str], i: int) -> tuple[int, int]:
    """Store size in bytes of the type starting at words[i]; returns (size, next index)."""
    w = words[i]
    if w in ("[", "<"):
        count, close = int(words[i + 1]), "]" if w == "[" else ">"
        if words[i + 2] != "x":
            raise Unsupported("type", " ".join(words[i:i + 4]))
        size, j = _type_size(words, i + 3)
        if words[j] != close:
            raise Unsupported("type", " ".join(words[i:j + 1]))
        return count * size, j + 1
    if w.startswith("i") and w[1:].isdigit():
        return (int(w[1:]) + 7) // 8, i + 1
    if w in _SCALAR_BYTES:
        j = i + 1
        if w == "ptr" and j < len(words) and words[j] == "addrspace":
            j += 4  # addrspace ( N )
        return _SCALAR_BYTES[w], j
    raise Unsupported("type", w)


def gep_element_size(text: str) -> int:
    """Bytes of a GEP's source element type (`getelementptr inbounds i32, ptr %p, ...`):
    arrays and vectors of scalars; structs are refused (their layout needs padding)."""
    words = _after_assignment(text)
    i = 1
    while words[i] in INT_FLAGS or words[i] == "inrange":
        i += 1
    return _type_size(words, i)[0]


def address_space(type_text: str) -> int:
    """N of `ptr addrspace(N)`; 0 for a plain `ptr`."""
    words = _tokens(type_text)
    return int(words[3]) if words[:3] == ["ptr", "addrspace", "("] else 0


def type_size(text: str) -> int:
    """Bytes of a printed type (`i32`, `<2 x half>`, `[4 x float]`)."""
    return _type_size(_tokens(text), 0)[0]


def shuffle_mask(text: str) -> list[int | None]:
    """The mask of `shufflevector <2 x half> %a, <2 x half> %b, <2 x i32> <i32 1, i32 0>`;
    None marks a poison lane."""
    words = _tokens(text)
    at = max(i for i in range(len(words) - 5)
             if words[i:i + 2] == [",", "<"] and words[i + 3:i + 6] == ["x", "i32", ">"])
    count, rest = int(words[at + 2]), words[at + 6:]
    if rest[:1] == ["zeroinitializer"]:
        return [0] * count
    if rest[:1] in (["poison"], ["undef"]):
        return [None] * count
    lanes = [rest[k + 1] for k in range(1, len(rest), 3) if rest[k] == "i32"]
    return [None if v in ("poison", "undef") else int(v) for v in lanes]


def switch_cases(text: str) -> list[int]:
    """The case values of `switch i32 %x, label %d [ i32 0, label %a  i32 3, label %b ]`,
    in order (the binding gives the destinations, not the values)."""
    words = _tokens(text)
    cases = words[words.index("[") + 1:words.index("]")]  # TYPE VALUE , label DEST
    return [{"true": 1, "false": 0}[v] if v in ("true", "false") else int(v)
            for v in cases[1::5]]


def aggregate_indices(text: str) -> list[int]:
    """The indices of `%x = extractvalue {i32, {i8, i16}} %s, 1, 0` (-> [1, 0]) or of
    `insertvalue T %s, i8 %v, 1`: the `, N` run that ends the instruction."""
    words = _tokens(text.split(", !", 1)[0])  # metadata attachments follow the indices
    out = []
    while len(words) >= 2 and words[-1].isdigit() and words[-2] == ",":
        out.append(int(words[-1]))
        words = words[:-2]
    if not out:
        raise LlvmError(f"no indices in {text.strip()!r}")
    return out[::-1]


# ---- constants ---------------------------------------------------------------------------

UNDEF, POISON = "undef", "poison"


def _double_to(bits64: int, fmt_width: int, ebits: int, sbits: int) -> int:
    """Bits of a narrower binary format from the double LLVM prints for it. The value is
    exact by LLVM's printing rule; a NaN keeps its sign and its payload's top bits, as
    APFloat's conversion to double shifts them up."""
    sign = bits64 >> 63
    exp64, man64 = (bits64 >> 52) & 0x7FF, bits64 & ((1 << 52) - 1)
    man_bits = sbits - 1
    if exp64 == 0x7FF:
        return (sign << (fmt_width - 1)) | (((1 << ebits) - 1) << man_bits) | \
            (man64 >> (52 - man_bits))
    if fmt_width == 32:
        return struct.unpack("<I", struct.pack("<f", struct.unpack("<d",
                             struct.pack("<Q", bits64))[0]))[0]
    raise LlvmError(f"a {fmt_width}-bit float printed as a double: {bits64:#x}")


def float_literal(word: str, width: int, ebits: int, sbits: int) -> int:
    """The bits of a printed float literal of a `width`-bit type."""
    if word.startswith(("0xH", "0xR")):
        return int(word[3:], 16)
    if word.startswith("0x") and not word.startswith(("0xK", "0xL", "0xM")):
        bits64 = int(word[2:], 16)
    else:
        try:
            bits64 = struct.unpack("<Q", struct.pack("<d", float(word)))[0]
        except ValueError:
            raise Unsupported("constant", word) from None
    return bits64 if width == 64 else _double_to(bits64, width, ebits, sbits)


def constant_words(text: str, type_text: str) -> list[str]:
    """The literal words of a printed constant `<type> <literal>`, one per lane:
    `<2 x half> <half 0xH3C00, half poison>` -> ["0xH3C00", "poison"];
    `splat (i32 7)` and `zeroinitializer` repeat for every lane."""
    if not text.startswith(type_text):
        raise LlvmError(f"constant {text!r} does not start with its type {type_text!r}")
    words = _tokens(text[len(type_text):])
    if words and words[0] == "splat":
        return [words[3]]  # splat ( T v ): broadcast by the caller
    if words and words[0] == "<":
        return [words[k + 1] for k in range(1, len(words) - 1, 3)]
    if len(words) != 1:
        raise Unsupported("constant", text)
    return words


# ---- function signatures ---------------------------------------------------------------

PARAM_ATTRS = frozenset({"zeroext", "signext", "noundef", "inreg", "nonnull", "noalias",
                         "nocapture", "readonly", "writeonly", "byval", "align", "byref",
                         "sret", "inalloca", "preallocated"})


def define_line(function_text: str) -> str:
    """The `define ...` line of a printed function."""
    return next(line for line in function_text.splitlines() if line.startswith("define"))


def return_attributes(define_line: str) -> frozenset[str]:
    """The attributes before the return type of `define [linkage] [attrs] T @name(...)`."""
    words = _tokens(define_line.split("@", 1)[0])
    return frozenset(w for w in words if w in PARAM_ATTRS)


def param_attributes(define_line: str) -> list[frozenset[str]]:
    """The attributes of each parameter of `define ... @name(T1 attrs %a, T2 %b) ...`."""
    words = _tokens(define_line.split("@", 1)[1])
    params, depth, current = [], 0, []
    for w in words[words.index("(") + 1:]:
        if w in ("(", "<", "[", "{"):
            depth += 1
        elif w in (")", ">", "]", "}"):
            if depth == 0:
                break
            depth -= 1
        elif w == "," and depth == 0:
            params.append(current)
            current = []
            continue
        current.append(w)
    if current:
        params.append(current)
    return [frozenset(w for w in p if w in PARAM_ATTRS) for p in params]


def string_attributes(text: str) -> dict[str, str]:
    """The `"key"="value"` attributes of a printed attribute list (llvmlite's
    `function.attributes`): `nounwind "denormal-fp-math"="ieee,ieee"` ->
    {"denormal-fp-math": "ieee,ieee"}; a `"key"` without a value maps to ""."""
    out, i = {}, 0
    while (start := text.find('"', i)) >= 0:
        end = text.index('"', start + 1)
        key, i = text[start + 1:end], end + 1
        value = ""
        if text[i:i + 2] == '="':
            close = text.index('"', i + 2)
            value, i = text[i + 2:close], close + 1
        out[key] = value
    return out


def intrinsic_base(callee: str) -> str:
    """`llvm.sadd.sat.v2i16` -> `sadd.sat`; `llvm.minnum.f32` -> `minnum`; nvvm names
    keep every part: `llvm.nvvm.read.ptx.sreg.tid.x` -> `nvvm.read.ptx.sreg.tid.x`."""
    parts = callee.split(".")[1:]
    if parts[:1] == ["nvvm"]:
        return ".".join(parts)

    def is_type(p: str) -> bool:
        p = p[1:] if p.startswith("v") and p[1:2].isdigit() else p
        p = p.lstrip("0123456789")
        return p in ("bf16", "p0", "p1", "p3") or (p[:1] in ("i", "f") and p[1:].isdigit())
    while len(parts) > 1 and is_type(parts[-1]):
        parts.pop()
    return ".".join(parts)


def _c_string(body: str) -> list[str]:
    """The bytes of an `[N x i8] c"..."` constant as words: `\\HH` escapes, `\\\\`."""
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            if body[i + 1] == "\\":
                out.append(str(ord("\\")))
                i += 2
                continue
            out.append(str(int(body[i + 1:i + 3], 16)))
            i += 3
        else:
            out.append(str(ord(body[i])))
            i += 1
    return out


def aggregate_constant(text: str) -> str | list:
    """A printed struct/array constant `T v` as a tree: a word for the whole value
    (`poison`, `undef`, `zeroinitializer`) or one subtree per field, with a vector's or
    a scalar's value as in `constant_words`: `{ i32, [2 x i8] } { i32 1, [2 x i8] c"ab" }`
    -> ["1", ["97", "98"]]."""
    at = _skip_type(text, 0)
    tree, end = _value(text, at)
    if text[end:].strip():
        raise Unsupported("constant", text)
    return tree


def _skip_type(text: str, i: int) -> int:
    """Past one printed type starting at text[i] (leading blanks skipped)."""
    while text[i].isspace():
        i += 1
    if text[i] in "{[<":
        close = {"{": "}", "[": "]", "<": ">"}[text[i]]
        depth, j = 0, i
        while True:
            if text[j] in "{[<":
                depth += 1
            elif text[j] in "}]>":
                depth -= 1
                if depth == 0:
                    if text[j] != close and not (text[i:i + 2] == "<{" and text[j] == "}"):
                        raise Unsupported("constant", text)
                    if text[i:i + 2] == "<{":
                        j += 1  # the > of <{ ... }>
                    return j + 1
            j += 1
    j = i
    while j < len(text) and not text[j].isspace() and text[j] not in ",{}[]<>":
        j += 1
    if text[i:j] == "ptr" and text[j:j + 10].lstrip().startswith("addrspace"):
        j = text.index(")", j) + 1
    return j


def _value(text: str, i: int) -> tuple[str | list, int]:
    """One printed constant value starting at text[i]: (tree, index after it)."""
    while text[i].isspace():
        i += 1
    if text.startswith('c"', i):
        end = text.index('"', i + 2)
        return _c_string(text[i + 2:end]), end + 1
    if text[i] in "{[<":
        close = {"{": "}", "[": "]", "<": ">"}[text[i]]
        out, i = [], i + 1
        while True:
            while text[i].isspace():
                i += 1
            if text[i] == close:
                return out, i + 1
            tree, i = _value(text, _skip_type(text, i))
            out.append(tree)
            while text[i].isspace():
                i += 1
            if text[i] == ",":
                i += 1
    j = i
    while j < len(text) and not text[j].isspace() and text[j] not in ",{}[]<>":
        j += 1
    if j == i:
        raise Unsupported("constant", text)
    return text[i:j], j


# `denormal_fpenv`, the first-class attribute that replaced the strings "denormal-fp-math"
# and "denormal-fp-math-f32" (llvm/llvm-project#174293, after LLVM 22: llvmlite's LLVM and
# llc-14 read only the strings). Its grammar, from LLVM's parser and its tests:
# `denormal_fpenv(MODE)`, `denormal_fpenv(float: MODE)` or `denormal_fpenv(MODE, float:
# MODE)`, a MODE being `OUTPUT|INPUT` or one kind for both; the float section overrides
# for float as "denormal-fp-math-f32" did.
DENORMAL_FPENV_KINDS = {"ieee": "ieee", "preservesign": "preserve-sign",
                        "positivezero": "positive-zero", "dynamic": "dynamic"}
_FPENV = "denormal_fpenv"


def _fpenv_mode(text: str) -> str:
    """`preservesign|ieee` -> "preserve-sign,ieee" (the strings' output,input order)."""
    kinds = [k.strip() for k in text.split("|")]
    if len(kinds) > 2 or any(k not in DENORMAL_FPENV_KINDS for k in kinds):
        raise ValueError(f"expected denormal behavior kind ({', '.join(DENORMAL_FPENV_KINDS)})")
    return ",".join(DENORMAL_FPENV_KINDS[k] for k in kinds)  # one kind: both halves


def _fpenv_strings(body: str) -> str:
    """The string attributes one `denormal_fpenv(BODY)` stands for."""
    general, _, f32 = body.partition("float:")
    general = general.strip()
    if f32 and general and not general.endswith(","):
        raise ValueError("expected ',' before float:")
    general = general.removesuffix(",").strip()
    if not general and not f32:
        raise ValueError(f"expected denormal behavior kind ({', '.join(DENORMAL_FPENV_KINDS)})")
    out = [f'"denormal-fp-math"="{_fpenv_mode(general)}"'] if general else []
    if f32:
        out.append(f'"denormal-fp-math-f32"="{_fpenv_mode(f32)}"')
    return " ".join(out)


def _code_end(line: str) -> int:
    """Where a line's comment starts (a `;` outside a string), or its length."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == ";" and not quoted:
            return i
    return len(line)


def legacy_denormal_attributes(text: str) -> str:
    """IR `text` with each `denormal_fpenv(...)` (outside strings and comments) written as
    the string attributes it replaced, which the LLVM ptxsmt parses with still reads.
    Malformed: LlvmError naming the line and column, as LLVM's parser would."""
    if _FPENV not in text:
        return text
    lines = text.split("\n")
    for n, line in enumerate(lines):
        at, end = 0, _code_end(line)
        while (start := line.find(_FPENV, at, end)) >= 0:
            if line.count('"', 0, start) % 2:  # inside a string: not an attribute
                at = start + len(_FPENV)
                continue
            open_ = start + len(_FPENV)
            close = line.find(")", open_, end)
            if line[open_:open_ + 1] != "(" or close < 0:
                raise LlvmError(f"LLVM IR: {n + 1}:{start + 1}: error: unterminated {_FPENV}")
            try:
                strings = _fpenv_strings(line[open_ + 1:close])
            except ValueError as e:
                raise LlvmError(f"LLVM IR: {n + 1}:{open_ + 2}: error: {e}") from None
            line = line[:start] + strings + line[close + 1:]
            at, end = start + len(strings), _code_end(line)
        lines[n] = line
    return "\n".join(lines)
