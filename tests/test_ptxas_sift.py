"""ptxsmt.ptxasdiff.sift against a fake ptxas: no toolkit needed."""

from __future__ import annotations

from collections.abc import Sequence

from ptxsmt.ptxasdiff.sift import Attempt, sift


class FakePtxas:
    """Refuses the lines in `bad` (naming them), crashes without a word while any line of
    `crash` is in the module, and, like ptxas's second pass, names a line of `late` only
    when nothing else in the module is wrong."""

    def __init__(self, bad=(), crash=(), late=()) -> None:
        self.bad, self.crash, self.late = set(bad), set(crash), set(late)
        self.runs: list[tuple[list[str], str]] = []

    def __call__(self, lines: Sequence[str], part: str) -> Attempt[str, str]:
        self.runs.append((list(lines), part))
        if self.crash & set(lines):
            return Attempt(failure="ptxas crashed (signal 11)")
        blamed = {k: f"{line} is bad" for k, line in enumerate(lines) if line in self.bad}
        if not blamed:
            blamed = {k: f"{line} is late" for k, line in enumerate(lines) if line in self.late}
        if blamed:
            return Attempt(blamed=blamed, failure="exit status 255")
        return Attempt(accepted=[f"{line} ok" for line in lines])


LINES = [f"l{i}" for i in range(8)]


def test_all_accepted_in_one_run():
    fake = FakePtxas()
    sifted = sift(LINES, fake)
    assert sifted.accepted == {i: f"l{i} ok" for i in range(8)} and not sifted.rejected
    assert fake.runs == [(LINES, "")]


def test_a_blamed_line_is_dropped_and_the_rest_retried():
    fake = FakePtxas(bad={"l2", "l5"})
    sifted = sift(LINES, fake)
    assert sifted.rejected == {2: "l2 is bad", 5: "l5 is bad"}
    assert sorted(sifted.accepted) == [0, 1, 3, 4, 6, 7]
    assert fake.runs == [(LINES, ""), ([x for x in LINES if x not in ("l2", "l5")], "")]


def test_an_unblamed_line_of_a_failed_run_is_undecided_not_accepted():
    fake = FakePtxas(bad={"l1"}, late={"l6"})
    sifted = sift(LINES, fake)
    assert sifted.rejected == {1: "l1 is bad", 6: "l6 is late"}
    assert 6 not in sifted.accepted and sorted(sifted.accepted) == [0, 2, 3, 4, 5, 7]
    assert len(fake.runs) == 3  # l6 was only named once l1 had gone


def test_a_crash_halves_down_to_the_lone_line():
    fake = FakePtxas(crash={"l5"})
    sifted = sift(LINES, fake)
    assert sifted.rejected == {5: "ptxas crashed (signal 11)"}
    assert sorted(sifted.accepted) == [0, 1, 2, 3, 4, 6, 7]
    assert [part for _, part in fake.runs] == ["", "a", "b", "ba", "baa", "bab", "bb"]
    assert fake.runs[5] == (["l5"], "bab")


def test_a_crash_and_blamed_lines_in_the_same_half():
    fake = FakePtxas(bad={"l0"}, crash={"l3"})
    sifted = sift(LINES, fake)
    assert sifted.rejected == {0: "l0 is bad", 3: "ptxas crashed (signal 11)"}
    assert sorted(sifted.accepted) == [1, 2, 4, 5, 6, 7]


def test_nothing_to_sift():
    fake = FakePtxas()
    assert sift([], fake).accepted == {} and fake.runs == []
