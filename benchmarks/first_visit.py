"""Each page's first visit on a freshly started server, measured in a real browser.

    .venv/bin/python -m benchmarks.first_visit               # every page, one round
    .venv/bin/python -m benchmarks.first_visit --pages Inference Cost --rounds 3

For each page and round: start ``streamlit run dashboard.py`` on one port, wait for its
health check, open the page's deep link in a new tab of Debian's Chromium (1280 × 720, as a
projector) and time from the request until the page is *calm*: the script has finished,
nothing is running, and no spinner or skeleton has been on screen for 300 ms. The server is
then stopped, so that every visit is the first one of its server process. The model caches
on disk are not cleared (a machine's very first start converts the models once; the README
says what that takes). The goal is about 2.5 s for every page.

The browser is the teacher's: one that has opened the app before (the evening before,
preparing the class). Before measuring, every page is opened once on a server of the same
address, so that Streamlit's files (served as immutable, cached for a year) are in the
browser's cache and compiled; ``--cold-browser`` measures a browser that has never seen
the app instead (a new, empty profile for every visit).

A script, not a test: timings depend on the machine and its load; it prints the load
average beside each figure.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from pages.ui.lessons import LESSONS  # noqa: E402  (after the path above)

CALM_JS = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute("data-test-connection-state") !== "CONNECTED") return false;
  if (app.getAttribute("data-test-script-state") !== "notRunning") return false;
  // A progress bar is drawn only while the script runs (lesson 7 also shows a static
  // one), so the script's state says it: no bar is looked for.
  const busy = '[data-testid="stSkeleton"], [data-testid="stSpinner"], .stSpinner, '
             + '[data-testid="stStatusWidget"]';
  return !document.querySelector(busy) && !!document.querySelector('[data-testid="stMain"] h1');
}
"""
GOAL_S = 2.5


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "dashboard.py", "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                        timeout=1) as r:
                if r.read().strip() == b"ok":
                    return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("the server did not answer its health check within 60 s")


def first_visit(context, path: str, port: int) -> float:
    """Seconds from the request of a fresh server's page until it has been calm 300 ms."""
    server = start_server(port)
    page = context.new_page()
    try:
        start = time.perf_counter()
        page.goto(f"http://127.0.0.1:{port}/{path}", wait_until="domcontentloaded")
        calm_since = None
        while True:
            now = time.perf_counter()
            if now - start > 120:
                raise RuntimeError(f"/{path} was not calm within 120 s")
            if page.evaluate(CALM_JS):
                calm_since = calm_since or now
                if now - calm_since >= 0.3:
                    return calm_since - start
            else:
                calm_since = None
            page.wait_for_timeout(50)
    finally:
        page.close()
        server.terminate()
        server.wait(10)


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="*", help="URL names (default: home and every lesson)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--cold-browser", action="store_true",
                        help="a browser that has never opened the app (an empty profile)")
    args = parser.parse_args()
    paths = args.pages or [""] + [lesson.url_name for lesson in LESSONS]
    port = free_port()  # one address throughout: a browser's cache is kept by address
    projector = {"viewport": {"width": 1280, "height": 720}}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        teacher = None
        if not args.cold_browser:
            teacher = browser.new_context(**projector)
            server = start_server(port)
            for path in paths:  # the evening before
                page = teacher.new_page()
                page.goto(f"http://127.0.0.1:{port}/{path}", wait_until="load")
                page.wait_for_timeout(4000)
                page.close()
            server.terminate()
            server.wait(10)
        for path in paths:
            times = []
            for _ in range(args.rounds):
                context = teacher or browser.new_context(**projector)
                times.append(first_visit(context, path, port))
                if context is not teacher:
                    context.close()
            print(json.dumps({"page": path or "home", "seconds": [round(t, 2) for t in times],
                              "best": round(min(times), 2), "within_goal": min(times) <= GOAL_S,
                              "load_average": round(os.getloadavg()[0], 1)}), flush=True)
        browser.close()


if __name__ == "__main__":
    main()
