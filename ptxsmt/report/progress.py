"""Long runs on the command line: progress on stderr.

Nothing is shown for the first few seconds, so short runs stay quiet. After that a
terminal gets a bar (a count when the total is unknown) redrawn in place; anything else
(a CI log) gets one plain line every ten seconds and a last one at the end. Progress
only ever goes to stderr, with or without --json, so stdout stays clean.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

DELAY = 3.0  # seconds of silence before the first report
EVERY_LINE = 10.0  # seconds between plain lines (not a terminal)
EVERY_BAR = 0.2  # seconds between redraws of the bar (a terminal)
BAR_WIDTH = 24


class Progress:
    """`with Progress("proving", total=552, unit="instances") as bar: ... bar.update()`"""

    def __init__(self, label: str, total: int | None = None, unit: str = "",
                 stream: TextIO | None = None, terminal_only: bool = False):
        """`terminal_only`: no plain lines off a terminal (a command whose results are
        themselves lines as it goes, `tv`, has a log enough)."""
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream or sys.stderr  # None: stderr is closed, nothing is shown
        self.done = 0
        self.tty = self.stream is not None and self.stream.isatty()
        if terminal_only and not self.tty:
            self.stream = None
        self.start = time.monotonic()
        self._next = self.start + DELAY
        self._shown = False

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now >= self._next and self.stream is not None:
            self._next = now + (EVERY_BAR if self.tty else EVERY_LINE)
            self._write(self._status(now))

    def clear(self) -> None:
        """Wipe the bar before a result is printed to the same terminal; the next update
        draws it again."""
        if self._shown and self.tty and self.stream is not None:
            self._write("")
            self._next = 0.0

    def close(self, finished: bool = True) -> None:
        """End the display; a run that showed progress gets its final count."""
        if not self._shown or self.stream is None:
            return
        now = time.monotonic()
        if self.tty:  # the final bar stays; an interrupted one is wiped
            self._write(self._status(now) + "\n" if finished else "")
        elif finished:
            self._write(f"{self.label}: {self._count()} done in {_clock(now - self.start)}")

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind, value, tb) -> None:
        self.close(finished=kind is None)

    def _count(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.total is None:
            return f"{self.done:,}{unit}"
        return f"{self.done:,}/{self.total:,}{unit}"

    def _status(self, now: float) -> str:
        elapsed = now - self.start
        text = self._count()
        if self.total:
            share = min(1.0, self.done / self.total)
            text += f" ({share:.0%})"
            if self.tty:
                fill = round(share * BAR_WIDTH)
                text = f"[{'#' * fill}{'-' * (BAR_WIDTH - fill)}] {text}"
        text += f", {_clock(elapsed)} elapsed"
        if self.total and 0 < self.done < self.total:
            text += f", about {_clock(elapsed * (self.total - self.done) / self.done)} left"
        return f"{self.label}: {text}"

    def _write(self, text: str) -> None:
        self._shown = True
        try:
            if self.tty:
                self.stream.write("\r\x1b[2K" + text)  # carriage return, clear the line
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # stderr full or gone: the run goes on without it
            self.stream = None


def _clock(seconds: float) -> str:
    """`42 s`, `3:07`, `1:02:03`."""
    s = int(seconds)
    if s < 60:
        return f"{s} s"
    return f"{s // 60}:{s % 60:02d}" if s < 3600 else f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
