"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
JSON messages ending in NUL on the browser's fds 3 and 4), with the standard library
only. A pipe, not a port: no websocket to write by hand, nothing listening, and the
browser's console errors, exceptions and network requests arrive as events, in order,
so none is missed the way scraping `--enable-logging` output can miss one.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# What this machine needs to run Chromium headless, and what keeps it from calling out on
# its own (updates, sync, field trials) while a test watches the page's requests.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)
TIMEOUT = 90.0  # seconds for one exchange: a loaded machine starts a browser slowly


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageReport:
    """What the browser saw while it opened a page."""

    url: str
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    errors: list[str] = field(default_factory=list)  # console errors and exceptions
    values: dict[str, Any] = field(default_factory=dict)  # expression -> its value
    screenshot: bytes | None = None


class _Browser:
    def __init__(self, binary: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def on_fds_3_and_4() -> None:  # in the child, before exec
            high = 1000
            os.dup2(to_browser_r, high)
            os.dup2(from_browser_w, high + 1)
            os.dup2(high, 3)
            os.dup2(high + 1, 4)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=on_fds_3_and_4,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command; wait for its answer (events meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read()
            self.events.append(event)
            if event.get("method") == method:
                return event

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError(f"the browser said nothing for {TIMEOUT} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError(f"the browser closed its pipe (exit {self.proc.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return dict(json.loads(message))

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def open_page(
    binary: str,
    page: Path,
    expressions: tuple[str, ...] = (),
    screenshot_width: int | None = None,
) -> PageReport:
    """Open `page` in a fresh headless Chromium; report its requests, its console errors
    and uncaught exceptions, the value of each expression once it has loaded, and a
    full-page screenshot when a width is given."""
    report = PageReport(page.resolve().as_uri())
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        browser = _Browser(binary, Path(profile))
        try:
            target = browser.send("Target.createTarget", url="about:blank")["targetId"]
            session = browser.send("Target.attachToTarget", targetId=target, flatten=True)[
                "sessionId"
            ]
            for domain in ("Page", "Runtime", "Log", "Network"):
                browser.send(f"{domain}.enable", session)
            if screenshot_width:
                browser.send(
                    "Emulation.setDeviceMetricsOverride",
                    session,
                    width=screenshot_width,
                    height=900,
                    deviceScaleFactor=1,
                    mobile=False,
                )
            browser.events.clear()
            browser.send("Page.navigate", session, url=report.url)
            browser.wait_for("Page.loadEventFired")
            for expression in expressions:
                answer = browser.send(
                    "Runtime.evaluate", session, expression=expression, returnByValue=True
                )
                report.values[expression] = answer.get("result", {}).get("value")
            if screenshot_width:
                shot = browser.send(
                    "Page.captureScreenshot", session, format="png", captureBeyondViewport=True
                )
                report.screenshot = base64.b64decode(shot["data"])
            browser.send("Runtime.evaluate", session, expression="1")  # flush pending events
        finally:
            browser.close()
    for event in browser.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            report.requests.append(params["request"]["url"])
        elif method == "Runtime.exceptionThrown":
            report.errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            report.errors.append(json.dumps(params.get("args", []))[:500])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            report.errors.append(str(params["entry"].get("text", ""))[:500])
    return report
