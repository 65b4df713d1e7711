"""Warm a freshly started server up: open every page once, as a first visitor would.

A server process prepares the lessons when it starts (pages/ui/server_start.py: the
libraries, the models, lesson 7's and 11's measurements at their defaults); what is left
for each page's first visit is its own first run, which fills the process's caches
(lesson 8's trainings and lesson 11's perplexities, read from disk once kept...). Run
after a start, this script is that first visitor: it opens each page at its defaults over
Streamlit's own WebSocket protocol (no browser), waits for the run to finish, and prints
what each took. Everything shown later is still computed by the server; only the waiting
moves to before the class.

    .venv/bin/python deploy/warm_up.py http://127.0.0.1:8501
    .venv/bin/python deploy/warm_up.py http://127.0.0.1:8501 --pages Worked_example Inference

It waits for the server's health check first (``--wait`` seconds), so a service can run
it as soon as the server process has started. Exit status 0 when every page ran without
an exception, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect

DONE = {"FINISHED_SUCCESSFULLY"}  # other statuses: cut short for a rerun, or a fragment


@dataclass
class Visit:
    page: str  # the page's URL path ("" for home)
    seconds: float
    exceptions: int
    pages: dict[str, str]  # every page of the app: URL path -> page script hash


def wait_healthy(base_url: str, timeout_s: float) -> None:
    """Poll ``/_stcore/health`` until it answers "ok"; TimeoutError after ``timeout_s``."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with opener.open(f"{base_url}/_stcore/health", timeout=2) as resp:
                if resp.read().strip() == b"ok":
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{base_url} was not healthy within {timeout_s:.0f} s")
        time.sleep(0.25)


def visit(base_url: str, page: str = "", page_hash: str = "", timeout_s: float = 300) -> Visit:
    """Open ``page`` (its URL path; "" for home) in a new session and wait for its run.

    The session asks for a run as the browser does on opening a link: a ``rerun_script``
    message naming the page, with no widget state (every control at its default).
    """
    ws_url = base_url.replace("http", "ws", 1) + "/_stcore/stream"
    request = BackMsg()
    request.rerun_script.page_name = page
    request.rerun_script.page_script_hash = page_hash
    started = time.monotonic()
    exceptions, pages = 0, {}
    with connect(ws_url, subprotocols=["streamlit"], open_timeout=30,
                 max_size=None, proxy=None) as ws:
        ws.send(request.SerializeToString())
        while True:
            left = started + timeout_s - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"/{page} did not finish within {timeout_s:.0f} s")
            msg = ForwardMsg.FromString(ws.recv(timeout=left))
            kind = msg.WhichOneof("type")
            if kind == "navigation":
                pages = {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages}
            elif kind == "delta" and msg.delta.new_element.WhichOneof("type") == "exception":
                exceptions += 1
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
                if status in DONE:
                    return Visit(page, time.monotonic() - started, exceptions, pages)
                if status == "FINISHED_WITH_COMPILE_ERROR":
                    return Visit(page, time.monotonic() - started, exceptions + 1, pages)


def warm_up(base_url: str, only: list[str] | None = None, timeout_s: float = 300,
            out=sys.stdout) -> list[Visit]:
    """Home first (it names every page), then each page (or those in ``only``)."""
    home = visit(base_url, timeout_s=timeout_s)
    visits = [home]
    for page, page_hash in home.pages.items():
        if page and (only is None or page in only):
            visits.append(visit(base_url, page, page_hash, timeout_s))
    lines = [f"  /{v.page}: first run {v.seconds:.2f} s"
             + (f", {v.exceptions} exception(s): see the server's log" if v.exceptions else "")
             for v in visits]
    # in one piece, named: the processes of a server warm up side by side
    print("\n".join([f"{base_url}:"] + lines), file=out, flush=True)
    return visits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the server, e.g. http://127.0.0.1:8501")
    parser.add_argument("--pages", nargs="*", help="URL paths of the pages to open "
                        "(default: every page)")
    parser.add_argument("--wait", type=float, default=120,
                        help="seconds to wait for the server's health check (default 120)")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds allowed for each page's run (default 300)")
    args = parser.parse_args(argv)
    base_url = args.url.rstrip("/")
    started = time.monotonic()
    wait_healthy(base_url, args.wait)
    visits = warm_up(base_url, args.pages, args.timeout)
    print(f"warmed up {base_url} in {time.monotonic() - started:.1f} s", flush=True)
    return 1 if any(v.exceptions for v in visits) else 0


if __name__ == "__main__":
    sys.exit(main())
