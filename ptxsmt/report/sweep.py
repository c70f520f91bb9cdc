"""`sweep`: the digests of an exhaustive run."""

from __future__ import annotations

from ..eval.sweep import SweepResult


def sweep_json(text: str, result: SweepResult) -> dict:
    return {"ptx": text, "pairs": result.pairs, "digests": result.digests,
            "true_counts": result.true_counts, "seconds": round(result.seconds, 2)}


def sweep_text(text: str, result: SweepResult) -> str:
    lines = [f"{text}  {result.pairs:,} operand combinations in {result.seconds:.1f} s"]
    for name, digest in result.digests.items():
        count = result.true_counts.get(name)
        extra = f"  true in {count:,}" if count is not None else ""
        lines.append(f"  {name}: sha256 {digest}{extra}")
    return "\n".join(lines)
