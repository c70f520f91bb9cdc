"""Semantic options: the readings of the ISA text that a user may pick.

Options travel with the data: a batch line, a vector, an identity side may carry
`"options": {"target": "sm_13", "vset_merge": "b"}`. `from_json`/`to_json` are the
one spelling of that object; defaults are left out, so default lines stay unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..isa.errors import PtxError, quote
from ..isa.targets import parse_target

VSET_MERGE_SOURCES = ("c", "b")
HARDWARE = ("sm_90",)  # chips whose open values sem/hardware.py gives


def check_hardware(name: str) -> str:
    if name not in HARDWARE:
        raise PtxError(f"unknown hardware {quote(name)} (supported: {', '.join(HARDWARE)})")
    return name


# how NaNs compare at a float-typed output (`observe`, Spec notes 14); here, free of Z3,
# for the command line
NAN_POLICIES = ("payload-free", "exact")
DEFAULT_NAN = "payload-free"


@dataclass(frozen=True)
class Options:
    """`target`: the sm_ number (sm_1x flushes f32 set/setp/slct without .ftz).
    `vset_merge`: where vset merge takes unmasked lanes from; "c" follows the
    pseudocode, "b" the prose (README, Spec notes 1).
    `hardware`: give the values the ISA leaves open as that chip computes them
    (sem/hardware.py; for evaluation, never for proofs); None: leave them open."""

    target: int = 90
    vset_merge: str = "c"
    hardware: str | None = None

    def __post_init__(self) -> None:
        if self.vset_merge not in VSET_MERGE_SOURCES:
            raise PtxError(f"vset_merge must be one of {', '.join(VSET_MERGE_SOURCES)}, "
                           f"not {quote(self.vset_merge)}")
        if self.hardware is not None:
            check_hardware(self.hardware)

    @property
    def sm_1x(self) -> bool:
        return self.target < 20

    @classmethod
    def from_json(cls, raw: object, base: Options | None = None) -> Options:
        """An `"options"` object over `base` (default: the defaults). Unknown keys and bad
        values are errors: an option silently ignored would be a wrong answer."""
        base = base or DEFAULT
        if not isinstance(raw, Mapping):
            raise PtxError('"options" must be an object like {"target": "sm_13"}')
        unknown = [k for k in raw if k not in _KEYS]
        if unknown:
            raise PtxError(f"unknown option {quote(unknown[0])} (known: {', '.join(_KEYS)})")
        target, merge = base.target, raw.get("vset_merge", base.vset_merge)
        if "target" in raw:
            if not isinstance(raw["target"], str):
                raise PtxError('option "target" must be a string like "sm_13"')
            target = parse_target(raw["target"]).sm
        if not isinstance(merge, str):
            raise PtxError('option "vset_merge" must be "c" or "b"')
        hardware = raw.get("hardware", base.hardware)
        if hardware is not None and not isinstance(hardware, str):
            raise PtxError('option "hardware" must be a string like "sm_90"')
        return cls(target=target, vset_merge=merge, hardware=hardware)

    def to_json(self) -> dict[str, str]:
        """The options that differ from the defaults (empty for the defaults)."""
        out = {}
        if self.target != DEFAULT.target:
            out["target"] = f"sm_{self.target}"
        if self.vset_merge != DEFAULT.vset_merge:
            out["vset_merge"] = self.vset_merge
        if self.hardware is not None:
            out["hardware"] = self.hardware
        return out


_KEYS = ("target", "vset_merge", "hardware")
DEFAULT = Options()
