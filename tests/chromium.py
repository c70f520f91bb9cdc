"""A headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
JSON messages ended by a NUL byte, on descriptors 3 and 4), with only the standard
library: enough to load a page, run JavaScript in it and take a screenshot."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time

EXE = shutil.which("chromium") or shutil.which("chromium-browser")


def _high(fds: tuple[int, int]) -> tuple[int, int]:
    """The pipe's ends moved above 9: renaming them to 3 and 4 in the shell must not
    overwrite one with the other (pytest's capture may hold the low numbers)."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved


class Chromium:
    def __init__(self, width: int = 1200, height: int = 900):
        self.profile = tempfile.mkdtemp(prefix="ptxsmt-chromium-")
        to_browser, self._write = _high(os.pipe())
        self._read, from_browser = _high(os.pipe())
        flags = ["--headless", "--remote-debugging-pipe", "--no-first-run", "--disable-gpu",
                 "--no-default-browser-check", f"--user-data-dir={self.profile}"]
        if os.geteuid() == 0:
            flags.append("--no-sandbox")  # Chromium refuses to run as root with it
        # bash puts the pipe's ends on 3 and 4, where Chromium looks for them (sh takes
        # only one-digit descriptors)
        self.process = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{to_browser} 4>&{from_browser}', "bash", EXE, *flags,
             "about:blank"], pass_fds=(to_browser, from_browser),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer, self._next = b"", 0
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride", session=True, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)

    def send(self, method: str, session: bool = False, **params) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:  # events come between the answers: skipped
            reply = self._receive()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def _receive(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, seconds: float = 120):
        """The value of `expression` once it is truthy (polled; a page may be loading)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                if value := self.evaluate(expression):
                    return value
            except RuntimeError:  # the page changed under the evaluation
                pass
            time.sleep(0.1)
        raise AssertionError(f"not within {seconds} s: {expression}")

    def open(self, url: str) -> None:
        self.send("Page.navigate", session=True, url=url)
        self.wait_for(f"location.href === {json.dumps(url)} && "
                      "document.readyState === 'complete'")

    def screenshot(self) -> bytes:
        return base64.b64decode(self.send("Page.captureScreenshot", session=True,
                                          format="png", captureBeyondViewport=True)["data"])

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self.send("Browser.close")
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._read, self._write):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)
