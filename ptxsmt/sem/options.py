"""Semantic options: the readings of the ISA text that a user may pick."""

from __future__ import annotations

from dataclasses import dataclass

VSET_MERGE_SOURCES = ("c", "b")


@dataclass(frozen=True)
class Options:
    """`target`: the sm_ number (sm_1x flushes f32 set/setp/slct without .ftz).
    `vset_merge`: where vset merge takes unmasked lanes from; "c" follows the
    pseudocode, "b" the prose (README, Spec notes 1)."""

    target: int = 90
    vset_merge: str = "c"

    def __post_init__(self) -> None:
        if self.vset_merge not in VSET_MERGE_SOURCES:
            raise ValueError(f"vset_merge must be one of {VSET_MERGE_SOURCES}")

    @property
    def sm_1x(self) -> bool:
        return self.target < 20


DEFAULT = Options()
