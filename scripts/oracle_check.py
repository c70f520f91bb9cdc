"""Check `equiv --batch` verdicts on a corpus against the independent whole-function oracle
(tests/oracle_function.py: plain Python over tests/oracle.py, no z3, no ptxsmt semantics).

    python scripts/oracle_check.py MANIFEST RESULTS [--vectors N] [--deep M] [--only NAME ...]

MANIFEST is a corpus's manifest.jsonl (its pairs.jsonl beside it, same line order: paths
relative to that folder); RESULTS the batch's JSON lines, same order. Each pair runs on N
vectors (M for a pair labelled different that ptxsmt called equivalent): every special
value of each parameter (+-0, +-inf, NaNs, +-1, extreme normals and subnormals, integer
edges, the function's immediates and their neighbours in every float format) with the
other parameters drawn from the same lists or random bits, then random bits. A vector
whose return depends on a value the ISA leaves open is skipped and counted (not the
bytes neither function writes: the same open value on both sides, compared as bits);
float-typed returns compare NaNs payload-free, as ptxsmt's default, lane by lane
(llc-14's f16 stored with `st.param.b16` into a `.b32` return is that f16). A
counterexample of a `different` verdict is replayed. `--evaluator K` also runs ptxsmt's
own function evaluator on the first K vectors of both sides and names any byte where it
and the oracle disagree. One JSON line per pair, then a summary; exit 1 on any
`equivalent` the oracle separates, a counterexample it does not replay, or an evaluator
disagreement.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import re
import struct
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import oracle_function as of  # noqa: E402

FLOAT_SPECIALS = {  # (width in bytes) -> bit patterns
    2: [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x3C00, 0xBC00, 0x0400,
        0x8400, 0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x3800, 0x4000, 0x3BFF],
    4: [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
        0x3F800000, 0xBF800000, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00000001,
        0x80000001, 0x007FFFFF, 0x807FFFFF, 0x3F000000, 0x40000000, 0x3F7FFFFF],
    8: [0, 1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, 0x7FF8 << 48, 0xFFF8 << 48, (0x7FF0 << 48) | 1,
        0x3FF0 << 48, 0xBFF0 << 48, 0x0010 << 48, 0x8010 << 48, 0x7FEFFFFFFFFFFFFF,
        0xFFEFFFFFFFFFFFFF, 1, (1 << 63) | 1, 0x000FFFFFFFFFFFFF, 0x3FE0 << 48],
}
INT_SPECIALS = [0, 1, 2, 3, -1, -2, 7, 8, 31, 32, 33, 255, 256, 0x7FFF, 0x8000, 0xFFFF, 65504,
                65520, 1 << 24, (1 << 24) + 1, -(1 << 24) - 1, 0x7FFFFFFF, -0x80000000,
                0xFFFFFFFF, 1 << 31, 1 << 53, (1 << 63) - 1, -(1 << 63)]
# values at the edges of conversions: f16's range and subnormals, int32/uint32 bounds
EDGE_VALUES = [65504.0, 65519.99, 65520.0, 2.0 ** -14, 2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -25,
               2147483647.0, 2147483647.5, 2147483648.0, -2147483648.0, -2147483648.5,
               -2147483649.0, 4294967295.0, 4294967295.5, 4294967296.0, 16777217.0, 0.5, 1.5,
               -0.5, -1.5, 2.5, 0.49999997]
PACK = {2: "<e", 4: "<f", 8: "<d"}
_IMMEDIATE = re.compile(r"(?<![\w%$])(0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|0x[0-9a-fA-F]+"
                        r"|-?\d+)\b")


def encode(x: float, n: int) -> int | None:
    try:
        return int.from_bytes(struct.pack(PACK[n], x), "little")
    except (OverflowError, struct.error):
        return None


def decode(bits: int, n: int) -> float:
    return struct.unpack(PACK[n], bits.to_bytes(n, "little"))[0]


def immediate_values(texts: list[str]) -> list[float | int]:
    """Each immediate of the functions: floats as values, integers as ints."""
    out: list[float | int] = []
    for text in texts:
        for tok in _IMMEDIATE.findall(text):
            if tok[:2] in ("0f", "0F"):
                out.append(decode(int(tok[2:], 16), 4))
            elif tok[:2] in ("0d", "0D"):
                out.append(decode(int(tok[2:], 16), 8))
            elif tok.startswith("0x") and len(tok) == 6:  # mov.b16's half immediates
                out += [decode(int(tok, 16), 2), int(tok, 16)]
            else:
                out.append(int(tok, 0))
    return out


def candidates(n: int, values: list[float | int]) -> list[int]:
    """Special bit patterns of an n-byte parameter."""
    mask = (1 << 8 * n) - 1
    out = set(FLOAT_SPECIALS[n]) if n in FLOAT_SPECIALS else set()
    for v in [*INT_SPECIALS, *(x for x in values if isinstance(x, int))]:
        out |= {(v + d) & mask for d in (-1, 0, 1)} | {-v & mask}
    for x in [*EDGE_VALUES, *(float(x) for x in values if isinstance(x, float))]:
        for y in (x, -x):
            bits = encode(y, n) if n in PACK else None
            if bits is not None:
                out |= {bits, (bits + 1) & mask, (bits - 1) & mask}
    if n == 4:  # two halves in one parameter
        rng = random.Random(n)
        out |= {a | b << 16 for a, b in zip(rng.choices(FLOAT_SPECIALS[2], k=40),
                                            rng.choices(FLOAT_SPECIALS[2], k=40), strict=True)}
    return sorted(out)


def vectors(params: dict[str, int], cands: dict[str, list[int]], count: int, seed: str):
    """Every candidate of each parameter with the others drawn, then draws, then random bits."""
    rng = random.Random(seed)

    def draw(p: str) -> int:
        return rng.choice(cands[p]) if rng.random() < 0.85 else rng.getrandbits(8 * params[p])

    made = 0
    while made < count:
        for p in params:
            for c in cands[p]:
                if made >= count:
                    return
                yield {**{q: draw(q) for q in params}, p: c}
                made += 1
        for _ in range(min(count - made, 200)):
            yield {q: draw(q) for q in params}
            made += 1


def compare(fa: of.Function, fb: of.Function, params: dict[str, int], probe=None):
    """'skip' (a return's written bytes depend on an open value), None (equal), or the
    differing returns, lane by lane (`of.same_return`: an f16 stored into a wider return
    is that f16; the bytes neither side writes, the same open value on both, as bits);
    with `probe`, also whether b's probed statement was activated."""
    ra, rb = of.outcome(fa, params), of.outcome(fb, params, probe)
    if ra is None or rb is None:
        return "skip"
    if probe and rb.activated:
        compare.activated += 1
    if any(of.unwritten(ra, r) != of.unwritten(rb, r) for r in ra.returns):
        return "skip"  # a byte one side writes is open on the other
    return {r: (hex(ra.returns[r]), hex(rb.returns[r])) for r in ra.returns
            if not of.same_return(ra.returns[r], rb.returns[r], ra.lanes[r], rb.lanes[r])} or None


compare.activated = 0


def planted_probe(root: Path, pair: dict, fb: of.Function) -> tuple | None:
    """The planted statement of b and the unplanted twin's statement there (the twin is b's
    file without `-planted`), when they differ in exactly one statement."""
    twin = root / pair["b"].replace("-planted", "")
    if twin.name == Path(pair["b"]).name or not twin.exists():
        return None
    code = of.read(twin.read_text(), pair.get("function")).code
    at = [i for i, (x, y) in enumerate(zip(code, fb.code, strict=False)) if x != y]
    return (at[0], code[at[0]]) if len(at) == 1 and len(code) == len(fb.code) else None


def ptxsmt_bytes(ev, r: str, n: int) -> list[int | None]:
    """Per byte of a return as ptxsmt's function evaluator gives it (None: left open)."""
    from ptxsmt.sem.unspecified import UNSPECIFIED

    v = ev.returns[r]
    bits, mask = (v, (1 << 8 * n) - 1) if v is not UNSPECIFIED else ev.settled.get(r, (0, 0))
    return [(bits >> 8 * i) & 0xFF if (mask >> 8 * i) & 0xFF == 0xFF else None for i in range(n)]


@functools.lru_cache(maxsize=8)
def ptxsmt_function(path: str, name: str):
    """ptxsmt's reading of a function, and the width of each input it asks for."""
    from ptxsmt.function.encode import encode_function
    from ptxsmt.function.evaluate import read_function_file

    fn = read_function_file(path, name)
    enc = encode_function(fn)
    return fn, {k: enc.types[k].width for k in enc.inputs}


def evaluator_disagreement(path: Path, fn: of.Function, params: dict[str, int]) -> str | None:
    """Where ptxsmt's function evaluator (its terms, substituted) and the oracle differ on
    a return byte, or on whether the ISA leaves it open; None where they agree."""
    from ptxsmt.function.evaluate import evaluate_function

    ptx_fn, widths = ptxsmt_function(str(path), fn.name)
    inputs = {}
    for key, w in widths.items():  # `c+2`: the bytes from offset 2 of parameter c
        base, _, off = key.partition("+")
        inputs[key] = (params[base] >> 8 * int(off or 0)) & ((1 << w) - 1)
    ev = evaluate_function(ptx_fn, inputs)
    for r, want in of.byte_choices(fn, params).items():
        for i, (got, w) in enumerate(zip(ptxsmt_bytes(ev, r, fn.returns[r]), want, strict=True)):
            if (got is None) != (len(w) > 1) or (got is not None and {got} != w):
                return (f"{fn.name}({', '.join(f'{p}={v:#x}' for p, v in params.items())}): "
                        f"{r} byte {i}: ptxsmt {got}, oracle {sorted(w)}")
    return None


def replay(fn: of.Function, inputs: dict[str, str]) -> dict[str, int]:
    """A counterexample's inputs (`p`, `p+off`: hex bits) as whole parameters."""
    out = dict.fromkeys(fn.params, 0)
    for key, text in inputs.items():
        name, _, off = key.partition("+")
        if name in out:
            out[name] |= int(text, 16) << 8 * int(off or 0)
    return out


def check_pair(root: Path, pair: dict, label: dict, result: dict, count: int,
               evaluator: int = 0) -> dict:
    texts = [(root / pair[s]).read_text() for s in "ab"]
    fa, fb = (of.read(t, pair.get("function")) for t in texts)
    values = immediate_values(texts)
    cands = {p: candidates(n, values) for p, n in fa.params.items()}
    row = {"name": label["name"], "expect": label["expect"], "verdict": result.get("verdict"),
           "vectors": 0, "skipped": 0, "separating": None}
    probe = planted_probe(root, pair, fb)
    compare.activated = 0
    for params in vectors(fa.params, cands, count, label["name"]):
        if row["vectors"] < evaluator:  # ptxsmt's own terms on the same vector, both sides
            row.setdefault("evaluator", []).extend(
                d for s, fn in zip("ab", (fa, fb), strict=True)
                if (d := evaluator_disagreement(root / pair[s], fn, params)))
        row["vectors"] += 1
        got = compare(fa, fb, params, probe)
        if got == "skip":
            row["skipped"] += 1
        elif got:
            row["separating"] = {"inputs": {p: hex(v) for p, v in params.items()}, "returns": got}
            break
    if probe:  # vectors where the planted statement computed something else than the twin's
        row["activated"] = compare.activated
    if cex := result.get("counterexample"):
        got = compare(fa, fb, replay(fa, cex["inputs"]))
        row["counterexample"] = "skip" if got == "skip" else ("replays" if got else "equal")
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("results", type=Path)
    ap.add_argument("--vectors", type=int, default=1000)
    ap.add_argument("--deep", type=int, default=10000)
    ap.add_argument("--only", nargs="*", help="names of the pairs to check")
    ap.add_argument("--evaluator", type=int, default=0, metavar="K",
                    help="also run ptxsmt's function evaluator on the first K vectors")
    args = ap.parse_args(argv)
    try:
        labels = [json.loads(s) for s in args.manifest.read_text().splitlines() if s.strip()]
        pairs = [json.loads(s) for s in
                 (args.manifest.parent / "pairs.jsonl").read_text().splitlines() if s.strip()]
        results = [json.loads(s) for s in args.results.read_text().splitlines() if s.strip()]
    except (OSError, json.JSONDecodeError) as e:
        print(f"oracle_check: {e}", file=sys.stderr)
        return 2
    if not len(labels) == len(pairs) == len(results):
        print(f"oracle_check: {len(labels)} labels, {len(pairs)} pairs, {len(results)} results",
              file=sys.stderr)
        return 2
    summary = Counter()
    for label, pair, result in zip(labels, pairs, results, strict=True):
        if args.only and label["name"] not in args.only:
            continue
        deep = label["expect"] == "different" and result.get("verdict") == "equivalent"
        try:
            row = check_pair(args.manifest.parent, pair, label, result,
                             args.deep if deep else args.vectors, args.evaluator)
        except (of.OracleError, KeyError, ValueError) as e:
            row = {"name": label["name"], "error": f"{type(e).__name__}: {e}"}
        wrong = (row.get("separating") and result.get("verdict") == "equivalent") or \
            row.get("counterexample") == "equal" or bool(row.get("evaluator"))
        summary.update({"pairs": 1, "vectors": row.get("vectors", 0),
                        "skipped": row.get("skipped", 0), "errors": "error" in row,
                        "separated": bool(row.get("separating")),
                        f"counterexamples {row.get('counterexample')}": "counterexample" in row,
                        "wrong": bool(wrong)})
        print(json.dumps({**row, "wrong": bool(wrong)}), flush=True)
    print(json.dumps({"summary": {k: v for k, v in summary.items() if v or k == "wrong"}}))
    return 1 if summary["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
