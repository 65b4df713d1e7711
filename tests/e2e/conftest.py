"""Fixtures for the browser tier: a real `streamlit run dashboard.py` and Debian's Chromium.

- ``streamlit_server`` / ``base_url``: one server for the whole session (most tests);
  under pytest-xdist, one per worker that runs browser tests.
- ``fresh_server``: a factory that starts a NEW server, for "first visit on a freshly
  started server" checks (Streamlit decides things on the first run after a start).
- ``browser`` / ``page``: Playwright's sync API driving ``/usr/bin/chromium``. We never
  download a browser (no ``playwright install``): Debian's package is the browser.

Every test in this folder is marked ``e2e``; ``pytest -m "not e2e"`` skips the tier.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from course import stop_process_group

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parents[1]
ENTRY_SCRIPT = "dashboard.py"
SCREENSHOT_DIR = E2E_DIR / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
HEALTH_TIMEOUT_S = 60.0
# Playwright timeouts are in milliseconds.
DEFAULT_TIMEOUT_MS = 60_000  # the tier shares 2 cores with the page tier's worker


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test collected from this folder with ``e2e``, and group it for xdist.

    Under pytest-xdist (``-n 2 --dist loadgroup``, as ``.ci/run`` runs the suite) each
    worker that meets a browser test starts its own server and Chromium (session
    fixtures), and the tier is shared by both workers, with the page tests filling in
    around it: a tier on one worker alone was the long pole of the run. What must stay
    together does, in one ``xdist_group`` (``xdist_group_of``).
    """
    for item in items:
        if E2E_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            group = xdist_group_of(item)
            if group:
                item.add_marker(pytest.mark.xdist_group(group))


def xdist_group_of(item: pytest.Item) -> str | None:
    """The worker-sharing unit of a browser test, or None for a test that can run anywhere.

    - ``course``: test_course.py's tests share one course (three processes behind
      HAProxy, a module fixture), started once.
    - ``page-<path>``: the visits of one page (tests parametrized by ``path``) go to one
      worker, so one server computes what the page caches (a model, a measurement) once.
    """
    if Path(str(item.path)).name == "test_course.py":
        return "course"
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "path" in params:
        return f"page-{params['path'] or 'home'}"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class StreamlitServer:
    """`python -m streamlit run dashboard.py` in its own process group, logging to a file."""

    def __init__(self, root: Path = REPO_ROOT, entry: str = ENTRY_SCRIPT) -> None:
        self.root = root
        self.entry = entry
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        fd, log_name = tempfile.mkstemp(prefix=f"streamlit-e2e-{self.port}-", suffix=".log")
        os.close(fd)
        self.log_path = Path(log_name)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = HEALTH_TIMEOUT_S, attempts: int = 3) -> StreamlitServer:
        """Start the server and wait for its health check; retry if the port got taken."""
        if not (self.root / self.entry).is_file():
            pytest.fail(f"{self.root / self.entry} does not exist: nothing to serve")
        for attempt in range(1, attempts + 1):
            self._spawn()
            outcome = self._wait_healthy(timeout_s)
            if outcome == "ok":
                return self
            if outcome == "port in use" and attempt < attempts:
                self.port = _free_port()  # another process took it between bind and start
                self.url = f"http://127.0.0.1:{self.port}"
                continue
            log = self.log()
            self.stop()
            pytest.fail(f"streamlit did not start: {outcome}\n--- server log ---\n{log}")
        raise AssertionError("unreachable")

    def _spawn(self) -> None:
        cmd = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            self.entry,
            "--server.port",
            str(self.port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                cmd,
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own process group, killed as a whole
            )

    def _wait_healthy(self, timeout_s: float) -> str:
        """ "ok", "port in use", or what went wrong."""
        health = f"{self.url}/_stcore/health"
        # Loopback only: never through an HTTP proxy from the environment.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        deadline = time.monotonic() + timeout_s
        last_error = "no answer yet"
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                log = self.log()
                if "is not available" in log or "already in use" in log:
                    return "port in use"
                return f"it exited with code {self.proc.returncode} before it was healthy"
            try:
                with opener.open(health, timeout=2) as resp:
                    body = resp.read().decode("utf-8", "replace").strip()
                if resp.status == 200 and body == "ok":
                    return "ok"
                last_error = f"HTTP {resp.status}: {body!r}"
            except (urllib.error.URLError, OSError) as exc:
                last_error = repr(exc)
            time.sleep(0.2)
        return f"{health} did not answer 'ok' within {timeout_s:.0f} s (last: {last_error})"

    def log(self, tail_chars: int = 20_000, since: int = 0) -> str:
        """The server's output (from byte offset ``since``), at most its last characters."""
        try:
            with self.log_path.open("rb") as fh:
                fh.seek(since)
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return "(no log)"
        return text[-tail_chars:]

    def log_mark(self) -> int:
        """An offset for ``log(since=...)``: what the server prints from now on."""
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def stop(self) -> None:
        stop_process_group(self.proc)

    def close(self) -> None:
        """Stop the server and delete its log file."""
        self.stop()
        self.log_path.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    """Debian's Chromium, or a skip (locally) / a failure (when ``CI`` is set)."""
    if not CHROMIUM.exists():
        msg = (
            f"{CHROMIUM} is missing: the e2e tier drives Debian's Chromium. "
            "Install it with `apt-get install -y chromium` (or run .ci/run, which does)."
        )
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return CHROMIUM


@pytest.fixture(scope="session")
def streamlit_server(chromium_path: Path) -> Iterator[StreamlitServer]:
    """One server shared by most tests of the session."""
    server = StreamlitServer()
    try:
        yield server.start()
    finally:
        server.close()


@pytest.fixture(scope="session")
def base_url(streamlit_server: StreamlitServer) -> str:
    return streamlit_server.url


@pytest.fixture
def fresh_server(chromium_path: Path) -> Iterator[Callable[[], StreamlitServer]]:
    """Factory: ``fresh_server()`` starts a new server; all are stopped after the test."""
    started: list[StreamlitServer] = []

    def start() -> StreamlitServer:
        server = StreamlitServer()
        started.append(server)
        return server.start()

    try:
        yield start
    finally:
        for server in started:
            server.close()


@pytest.fixture(scope="session")
def browser(chromium_path: Path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - requirements-dev.txt has it
        msg = f"playwright is not installed ({exc}); pip install -r requirements-dev.txt"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(chromium_path), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def browser_context(browser):
    """One context for the session at 1280x800, so the app's JS bundle is cached once."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(browser_context):
    """A new tab: a new websocket, hence a new Streamlit session with fresh state."""
    pg = browser_context.new_page()
    try:
        yield pg
    finally:
        pg.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    return SCREENSHOT_DIR


@pytest.fixture(scope="session")
def chromium_launch_options(chromium_path: Path) -> dict:
    """Keyword arguments for ``chromium.launch`` (sync or async API): Debian's Chromium
    with the tier's flags. For tests that drive their own browser, such as the load test
    with Playwright's async API."""
    return {"executable_path": str(chromium_path), "args": list(CHROMIUM_ARGS), "headless": True}

