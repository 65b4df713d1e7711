"""A whole course on one address: three server processes behind HAProxy (``deploy/``).

The smoke tests, in the normal suite, start ``deploy/course`` (the README's "Host it for
a course" without systemd) on free local ports and check what a class relies on: the
shipped configuration is valid; the proxy adds its headers, caps requests and leaves
Streamlit's XSRF protection on; no process is reachable but through the loopback; three
students land on three processes and stay there (their downloads come from their own
process); and when a process is stopped under its student, the student is back on a
live one with the same view within 10 s, while HAProxy sends the stopped process nothing
once its health check has failed.

``test_a_class_of_thirty`` (``-m course``, several minutes) does the same for 30
students on every lesson, kills a process instead of stopping it, measures first visits
and memory, and writes its figures to ``screenshots/course_report.txt``.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from course import (
    CONFIG,
    COOKIE,
    REPO_ROOT,
    SCREENSHOT_DIR,
    Course,
    haproxy_path,
    listening_addresses,
    memory_mib,
)
from playwright.sync_api import Page
from test_classroom import _slider_box
from test_exports import CHECKS as EXPORT_CHECKS
from test_exports import _get_csv
from test_load import _STILL_JS, _tree_cpu_s
from test_pages import (
    _IDLE_JS,
    PAGES,
    QUIET_MS,
    _assert_no_error,
    _runs_finished,
    _wait_idle,
    _watch,
    watch_script_runs,
)

pytestmark = pytest.mark.e2e

VIEWPORT = {"width": 1280, "height": 800}
FAILOVER_S = 10.0  # a student of a lost process is back on a live one within this
SLIDER = '[data-testid="stSlider"]'
MAIN = '[data-testid="stMain"]'


@pytest.fixture(scope="module")
def course(tmp_path_factory, chromium_path) -> Course:
    haproxy_path()
    started = Course(tmp_path_factory.mktemp("course")).start()
    try:
        yield started
    finally:
        started.stop()


def test_the_shipped_configuration_is_valid():
    # As installed on a server: every ${NAME-default} at its default.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTNLAB_")}
    done = subprocess.run([haproxy_path(), "-c", "-f", str(CONFIG)], env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "Configuration file is valid" in done.stdout, (
        done.stdout + done.stderr)


def _http(course: Course, method: str, path: str, headers: dict | None = None,
          body: bytes = b"") -> tuple[int, http.client.HTTPMessage]:
    """One request through the proxy, headers as given (a Content-Length is not checked
    against the body): its status and headers."""
    conn = http.client.HTTPConnection("127.0.0.1", course.port, timeout=30)
    try:
        conn.putrequest(method, path)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.endheaders(body or None)
        resp = conn.getresponse()
        resp.read()
        return resp.status, resp.headers
    finally:
        conn.close()


def test_the_edge_adds_its_headers_caps_requests_and_keeps_xsrf_on(course: Course):
    answers = {
        "the app": _http(course, "GET", "/"),
        "the health check": _http(course, "GET", "/_stcore/health"),
        # HAProxy's own refusals: headers over its 16 kB buffer, a body announced larger
        # than 1 MiB, or one of unknown size
        "20 kB of headers": _http(course, "GET", "/", {"X-Padding": "a" * 20_000}),
        "a 2 MB body": _http(course, "POST", "/", {"Content-Length": str(2_000_000)}),
        "a chunked body": _http(course, "POST", "/", {"Transfer-Encoding": "chunked"},
                                b"5\r\nhello\r\n0\r\n\r\n"),
    }
    assert answers["the app"][0] == answers["the health check"][0] == 200
    assert answers["20 kB of headers"][0] == 400
    assert answers["a 2 MB body"][0] == 413 and answers["a chunked body"][0] == 400
    for what, (_, headers) in answers.items():
        if what == "20 kB of headers":
            continue  # refused while reading the request, before any rule: a fixed error page
        assert headers["X-Content-Type-Options"] == "nosniff", what
        assert headers["Content-Security-Policy"] == "frame-ancestors 'self'", what
        assert headers["X-Frame-Options"] == "SAMEORIGIN", what

    cookies = answers["the app"][1].get_all("Set-Cookie")
    affinity = [c for c in cookies if c.startswith(f"{COOKIE}=")]
    assert len(affinity) == 1, cookies
    value, *attributes = [part.strip() for part in affinity[0].split(";")]
    assert value in {f"{COOKIE}=r{n}" for n in (1, 2, 3)}
    assert {"HttpOnly", "SameSite=Lax"} <= set(attributes), affinity
    # Streamlit's XSRF protection: its cookie is set, and a state-changing request without
    # the token is refused (403) before anything else is looked at; with the protection off
    # the same request would fail on its unknown session instead (400).
    health_cookies = answers["the health check"][1].get_all("Set-Cookie") or []
    assert any(c.startswith("_streamlit_xsrf=") for c in health_cookies), health_cookies
    status, _ = _http(course, "PUT", "/_stcore/upload_file/no-session/no-file",
                      {"Content-Length": "0"})
    assert status == 403


def _outside_address() -> str | None:
    """This machine's address on its default route (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: routed, never answered
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


def _reachable(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(3)
        try:
            sock.connect((address, port))
        except OSError:
            return False
    return True


def test_the_processes_listen_on_the_loopback_only(course: Course):
    ports = [course.replica_port(n) for n in (1, 2, 3)]
    for port in ports:
        assert listening_addresses(port) == {"127.0.0.1"}, port
    outside = _outside_address()
    if outside is None:  # a machine with no other interface: the check above is the test
        return
    # The probe can see a port open to the outside (so a refusal below means something)...
    with socket.create_server(("0.0.0.0", 0)) as control:
        assert _reachable(outside, control.getsockname()[1])
    # ...and none of the processes is.
    assert [port for port in ports if _reachable(outside, port)] == []


def test_the_warm_up_opens_pages_as_a_first_visitor_would(course: Course):
    done = subprocess.run(
        [sys.executable, "deploy/warm_up.py", f"http://127.0.0.1:{course.replica_port(3)}",
         "--pages", "Worked_example"], cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    url = f"http://127.0.0.1:{course.replica_port(3)}"
    heading, *pages, last = done.stdout.splitlines()
    assert heading == f"{url}:" and last.startswith(f"warmed up {url} in "), done.stdout
    assert [line.split(":")[0].strip() for line in pages] == ["/", "/Worked_example"], pages
    assert all(" first run " in line and "exception" not in line for line in pages)


@dataclass
class Student:
    """One browser context on the course: its page and what it saw."""

    page: Page
    sockets: list[float] = field(default_factory=list)  # when each WebSocket opened
    finished: list[float] = field(default_factory=list)  # when each script run's end arrived

    def __post_init__(self) -> None:
        self.page.on("websocket", lambda ws: "/_stcore/stream" in ws.url
                     and self.sockets.append(time.monotonic()))
        watch_script_runs(self.page, lambda status: self.finished.append(time.monotonic()))
        _watch(self.page)

    def replica(self) -> str:
        """The process the affinity cookie names (r1, r2, r3)."""
        values = [c["value"] for c in self.page.context.cookies() if c["name"] == COOKIE]
        assert len(values) == 1, f"{len(values)} affinity cookies"
        return values[0]


def enrol(browser, course: Course, links: list[str]) -> list[Student]:
    """A student per link (a page's path and query), each in a new browser context (its
    own cookies), all opening it through the proxy at once; returned when every page is
    drawn."""
    students = [Student(browser.new_context(viewport=VIEWPORT).new_page()) for _ in links]
    for student, link in zip(students, links, strict=True):
        student.page.goto(f"{course.url}/{link}", wait_until="commit")
    for student in students:
        _wait_idle(student.page, 0)
    return students


def move_first_slider(page: Page) -> tuple[str, str]:
    """Move the lesson's first movable slider one step with the keyboard, as a student
    does, and wait for the rerun and the link; (its label, the value it shows)."""
    thumb = page.locator(MAIN).locator(SLIDER).get_by_role("slider", disabled=False).first
    thumb.scroll_into_view_if_needed()
    key = "ArrowLeft" if thumb.input_value() == thumb.get_attribute("max") else "ArrowRight"
    label = thumb.get_attribute("aria-label")
    before_url, before = page.url, _runs_finished(page)
    thumb.focus()
    page.keyboard.press(key)
    page.wait_for_url(lambda url: url != before_url, timeout=30_000)
    _wait_idle(page, before)
    return label, slider_shown(page, label)


def slider_shown(page: Page, label: str) -> str:
    """The value the slider labelled ``label`` shows."""
    return _slider_box(page, label).locator(
        '[data-testid="stSliderThumbValue"]').first.inner_text().strip()


def query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


@dataclass
class Failover:
    """What HAProxy said of a stopped process, polled while its students came back."""

    server: str
    down_at: float | None = None  # time.time() when "show stat" first said DOWN
    connections_at_down: int | None = None  # its stot then

    def poll(self, course: Course) -> None:
        if self.down_at is None:
            row = course.servers()[self.server]
            if row["status"] == "DOWN":
                self.down_at, self.connections_at_down = time.time(), int(row["stot"])


def back_on_a_live_process(student: Student, lost: str, since: float) -> tuple[float, float] | None:
    """None until the student's page has run again on another process than ``lost`` and is
    idle and drawn; then (seconds from ``since`` to the end of the run it shows reaching
    the browser, seconds to the page's last change)."""
    page = student.page
    ran = [t for t in student.finished if t > since]
    if not (ran and student.replica() != lost and page.evaluate(_IDLE_JS, QUIET_MS)):
        return None
    # the last change the page made, not the end of the quiet period after it
    calm_ms = page.evaluate("Math.max(window.__stLastMutation, window.__stLastLongTask)")
    now_ms = page.evaluate("performance.now()")
    return ran[-1] - since, time.monotonic() - since - (now_ms - calm_ms) / 1e3  # drawn run


def wait_back(students: list[Student], lost: str, since: float, watch: Failover,
              course: Course, timeout_s: float = 120) -> list[tuple[float, float] | None]:
    """``back_on_a_live_process`` for every student (None for one never back within
    ``timeout_s``), polling HAProxy's view of the lost process meanwhile."""
    back: list[tuple[float, float] | None] = [None] * len(students)
    while None in back and time.monotonic() - since < timeout_s:
        watch.poll(course)
        for n, student in enumerate(students):
            if back[n] is None:
                back[n] = back_on_a_live_process(student, lost, since)
        students[0].page.wait_for_timeout(100)  # lets Playwright deliver events
    return back


def wait_for_down(watch: Failover, course: Course, timeout_s: float = 15) -> None:
    deadline = time.monotonic() + timeout_s
    while watch.down_at is None and time.monotonic() < deadline:
        watch.poll(course)
        time.sleep(0.1)
    assert watch.down_at is not None, f"HAProxy never marked {watch.server} DOWN"


def assert_nothing_sent_after_down(watch: Failover, course: Course) -> None:
    """HAProxy opened no connection to the process once it was DOWN, and logged no request
    accepted after that for it."""
    row = course.servers()[watch.server]
    assert int(row["stot"]) == watch.connections_at_down, (
        f"{watch.server}: {int(row['stot']) - watch.connections_at_down} connection(s) "
        "after it was marked DOWN")
    late = [r for r in course.requests() if r.server == watch.server and r.accepted > watch.down_at]
    assert late == [], f"requests sent to {watch.server} after it was DOWN: {late}"


def test_three_students_three_processes_and_a_process_stopped_under_one(
        course: Course, browser, screenshot_dir: Path):
    # A teacher's link with a setting (τ = 1.05), opened and left alone: the page's last run
    # is a whole run, after which Streamlit's browser code would not ask for a new one on
    # reconnecting (see pages.ui.layout._rerun_after_reconnect).
    students = enrol(browser, course, ["Worked_example?we_temp=1.05"] * 3)
    try:
        # round robin: new students are dealt to the processes in turn
        assert sorted(s.replica() for s in students) == ["r1", "r2", "r3"]
        for s in students:
            _assert_no_error(s.page, "the worked example through the proxy")
            q = _get_csv(s.page, "we")  # served by the student's own process
            np.testing.assert_array_equal(q.values, [[1, 0], [0, 1], [1, 1]])  # the preset
        label = "Softmax temperature τ"
        shown = slider_shown(students[0].page, label)
        settings = query(students[0].page)
        assert (shown, settings["we_temp"]) == ("1.05", ["1.05"])

        lost = students[0].replica()
        watch = Failover(f"replica{lost[1:]}")
        sockets = [len(s.sockets) for s in students]
        stopped = time.monotonic()
        os.kill(course.replica_pid(int(lost[1:])), signal.SIGTERM)  # systemctl stop does this
        [back] = wait_back(students[:1], lost, stopped, watch, course, timeout_s=30)
        wait_for_down(watch, course)

        page = students[0].page
        page.screenshot(path=screenshot_dir / "course_after_failover.png")
        assert back is not None and back[1] <= FAILOVER_S, f"back after {back}"
        _assert_no_error(page, "the worked example after its process stopped")
        assert query(page) == settings and slider_shown(page, label) == shown, (
            f"{label}: {query(page)} and {slider_shown(page, label)!r} after, {settings} "
            f"and {shown!r} before")
        q = _get_csv(page, "we")  # now from the live process
        np.testing.assert_array_equal(q.values, [[1, 0], [0, 1], [1, 1]])
        # the other two never noticed
        assert [len(s.sockets) for s in students[1:]] == sockets[1:]
        assert_nothing_sent_after_down(watch, course)
    finally:
        for s in students:
            s.page.context.close()


# --------------------------------------------------------------------------------------
# A class of thirty (-m course): figures to screenshots/course_report.txt
# --------------------------------------------------------------------------------------
STUDENTS = 30
EVEN_SHARE_TOLERANCE = 0.30  # each process within ±30 % of STUDENTS / 3
LOAD_TIMEOUT_MS = 240_000  # thirty pages drawn at once by one Chromium on 2 busy cores
WARM_UP_TIMEOUT_S = 900


def load_average() -> str:
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def pinned_context(browser, course: Course, replica: str):
    """A browser context whose affinity cookie already names ``replica`` (r1, r2, r3)."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_cookies([{"name": COOKIE, "value": replica, "url": course.url}])
    return context


def timed_visit(context, course: Course, path: str) -> tuple[float, float]:
    """Open ``path`` in a new tab of ``context``: seconds from the link to the end of the
    page's run reaching the browser, and to the page's last visible change (after which it
    stays calm for QUIET_MS: no change, no long task, every chart drawn)."""
    student = Student(context.new_page())
    try:
        opened = time.monotonic()
        student.page.goto(f"{course.url}/{path}", wait_until="commit")
        _wait_idle(student.page, 0)
        _assert_no_error(student.page, f"/{path}")
        calm = student.page.evaluate("Math.max(window.__stLastPaintedMutation, "
                                     "window.__stLastLongTask)") / 1e3  # since navigation
        return student.finished[-1] - opened, calm  # the run that was drawn
    finally:
        student.page.close()


def warm_up(course: Course, replicas: tuple[int, ...], report: list[str]) -> None:
    """deploy/warm_up.py on each of ``replicas`` at once, as their systemd units run it."""
    started = time.monotonic()
    runs = [subprocess.Popen(
        [sys.executable, "deploy/warm_up.py", f"http://127.0.0.1:{course.replica_port(n)}"],
        cwd=REPO_ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for n in replicas]
    outputs = [run.communicate(timeout=WARM_UP_TIMEOUT_S)[0] for run in runs]
    assert [run.returncode for run in runs] == [0] * len(runs), "\n".join(outputs)
    report.append(f"deploy/warm_up.py on {', '.join(f'r{n}' for n in replicas)} at once: "
                  f"{time.monotonic() - started:.0f} s ({load_average()}); "
                  f"r{replicas[0]}'s first runs, as it printed them:")
    report += ["    " + line for line in outputs[0].splitlines()]


def first_visits(browser, course: Course, lessons: list[str], report: list[str]) -> None:
    """Each lesson opened in a new tab of a browser that has the app's files cached (it has
    opened the home page): on a process that has served nothing (r1), on one that ran
    deploy/warm_up.py after its start (r2, as the systemd unit does), and again there."""
    rows: dict[str, list[tuple[float, float]]] = {path: [] for path in lessons}
    cold = pinned_context(browser, course, "r1")
    timed_visit(cold, course, "")
    for path in lessons:
        rows[path].append(timed_visit(cold, course, path))
    cold.close()
    report.append(f"First visits on a cold process (no warm-up) done, {load_average()}.")

    warm_up(course, (2, 3), report)

    warm = pinned_context(browser, course, "r2")
    timed_visit(warm, course, "")
    for visit in ("after the warm-up", "again"):
        for path in lessons:
            rows[path].append(timed_visit(warm, course, path))
        report.append(f"First visits {visit} done, {load_average()}.")
    warm.close()
    report.append("Seconds from opening a lesson's link (the app's files cached) to the end "
                  "of its run reaching the browser / to its last visible change:")
    report.append(f"    {'lesson':22s} | cold process | warmed up, 1st visit | warm, again")
    report += [f"    {path:22s} | " + " | ".join(f"{run:4.1f} / {calm:4.1f}" for run, calm in row)
               for path, row in rows.items()]


def move_a_control(page: Page) -> tuple[str, str]:
    """The lesson's first movable slider, else the presenter switch: (what, shown)."""
    if page.locator(MAIN).locator(SLIDER).get_by_role("slider", disabled=False).count():
        return move_first_slider(page)
    switch = page.get_by_role("switch", name="Presenter mode", exact=True)
    before_url, before = page.url, _runs_finished(page)
    switch.locator("xpath=ancestor::label[1]").click()
    page.wait_for_url(lambda url: url != before_url, timeout=30_000)
    _wait_idle(page, before)
    return "Presenter mode", str(switch.is_checked())


def shown(page: Page, what: str) -> str:
    if what == "Presenter mode":
        return str(page.get_by_role("switch", name=what, exact=True).is_checked())
    return slider_shown(page, what)


@dataclass
class Pupil:
    """A student of the class: the lesson, and what the failover must keep."""

    student: Student
    path: str
    replica: str = ""
    control: str = ""
    value: str = ""
    settings: dict = field(default_factory=dict)
    back: tuple[float, float] | None = None  # seconds to the run on a live process, drawn
    reconnected: float | None = None  # seconds to its new WebSocket
    problems: list[str] = field(default_factory=list)


def wait_drawn(page: Page, timeout_ms: float = LOAD_TIMEOUT_MS) -> None:
    """The page's first run has finished and it is drawn (``_wait_idle`` with a longer
    limit: thirty pages opened at once take minutes to draw here)."""
    deadline = time.monotonic() + timeout_ms / 1e3
    while not _runs_finished(page):
        assert time.monotonic() < deadline, "no run finished"
        page.wait_for_timeout(100)
    page.wait_for_function(_IDLE_JS, arg=QUIET_MS, polling=500,
                           timeout=max(deadline - time.monotonic(), 1) * 1e3)


def check(pupil: Pupil, what: str, fn, *args) -> None:
    """Run one check; a failure is noted for the report (with a screenshot of the whole
    page), and the class goes on."""
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - reported per student (assertions included)
        pupil.problems.append(f"{what}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
        with contextlib.suppress(Exception):
            pupil.student.page.screenshot(path=SCREENSHOT_DIR / f"course_failed_{pupil.path}_"
                                          f"{pupil.replica}.png", full_page=True)


def memory_line(name: str, mem: dict[str, float]) -> str:
    return (f"    {name}: PSS {mem['Pss']:.0f}, private {mem['Private']:.0f}, shared "
            f"{mem['Shared']:.0f}, RSS {mem['Rss']:.0f} MiB")


# A process holding both models as a server process does (memory-mapped from the cache),
# or with its own copy of every array (as lesson 9 held its weights before they were
# cached: converted in each process).
_HOLD_WEIGHTS = """
import sys
import numpy as np
from attncore import encoder, lm
minilm, smollm = encoder.model(), lm.model()
arrays = [minilm.word_embeddings, minilm.position_embeddings, minilm.token_type_embeddings,
          minilm.emb_ln_gamma, minilm.emb_ln_beta]
arrays += [a for layer in minilm.layers for a in vars(layer).values()]
arrays += list(smollm.weights.arrays().values())
if sys.argv[1] == "private":
    arrays = [np.array(a) for a in arrays]
print(sum(float(a.sum(dtype=np.float64)) for a in arrays) != 0, flush=True)  # every page read
sys.stdin.read()
"""


def weights_in_memory(mode: str, processes: int = 3) -> list[dict[str, float]]:
    procs = [subprocess.Popen([sys.executable, "-c", _HOLD_WEIGHTS, mode], cwd=REPO_ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for _ in range(processes)]
    try:
        assert [p.stdout.readline().strip() for p in procs] == ["True"] * processes
        return [memory_mib(p.pid) for p in procs]
    finally:
        for p in procs:
            p.stdin.close()
            p.wait(timeout=60)


@pytest.mark.course
@pytest.mark.timeout(1800)
def test_first_visits_cold_warmed_up_and_warm(tmp_path_factory, browser, chromium_path,
                                              screenshot_dir: Path):
    """Figures only, as timings on a shared machine are (screenshots/course_first_visits.txt);
    every visit must still show its page with no exception, and the warm-up must succeed."""
    haproxy_path()
    lessons = [path for _, path in PAGES if path]
    report = [f"First visits through HAProxy (deploy/course), {os.cpu_count()} CPU cores; "
              f"{load_average()} at the start."]
    course = Course(tmp_path_factory.mktemp("first")).start()
    try:
        first_visits(browser, course, lessons, report)
    finally:
        course.stop()
    text = "\n".join(report)
    (screenshot_dir / "course_first_visits.txt").write_text(text + "\n", encoding="utf-8")
    print("\n" + text)


@pytest.mark.course
@pytest.mark.timeout(3600)
def test_a_class_of_thirty(tmp_path_factory, browser, chromium_path, screenshot_dir: Path):
    haproxy_path()
    lessons = [path for _, path in PAGES if path]
    report = [f"Course test: 3 processes behind HAProxy (deploy/course, deploy/haproxy.cfg), "
              f"{os.cpu_count()} CPU cores shared with one Chromium that draws every "
              f"student's page; {load_average()} at the start."]
    failures: list[str] = []
    course = Course(tmp_path_factory.mktemp("class")).start()
    pupils: list[Pupil] = []
    try:
        warm_up(course, (1, 2, 3), report)
        pupils = a_class_arrives(browser, course, lessons, report, failures)
        a_process_is_killed(course, pupils, report, failures, screenshot_dir)
    finally:
        for pupil in pupils:
            pupil.student.page.context.close()
        course.stop()
    weights_shared_or_not(report)

    report.append("Per student: lesson | process | control moved = value | back on a live "
                  "process: reconnected, ran, drawn (s) | problems")
    report += [f"    {p.path:22s} | {p.replica} | {p.control or '-'} = {p.value or '-'} | "
               + ("-" if p.back is None else
                  f"{p.reconnected or float('nan'):.1f}, {p.back[0]:.1f}, {p.back[1]:.1f}")
               + f" | {'; '.join(p.problems) or 'ok'}" for p in pupils]
    text = "\n".join(report)
    (screenshot_dir / "course_report.txt").write_text(text + "\n", encoding="utf-8")
    print("\n" + text)
    failures += [f"/{p.path} ({p.replica}): {'; '.join(p.problems)}" for p in pupils
                 if p.problems]
    assert not failures, "\n".join(failures) + f"\n{course.logs()}"


def a_class_arrives(browser, course: Course, lessons: list[str], report: list[str],
                    failures: list[str]) -> list[Pupil]:
    """30 new browser contexts open their lessons at once; each page is checked, its
    downloads compared with it, and a control moved (the setting the failover must keep)."""
    pupils = []
    pids = [course.replica_pid(n) for n in (1, 2, 3)]
    cpu_before = sum(_tree_cpu_s(pid) for pid in pids)
    started = time.monotonic()
    for n in range(STUDENTS):
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        page.add_init_script(_STILL_JS)  # no animations: the 2 cores draw thirty pages
        pupils.append(Pupil(Student(page), lessons[n % len(lessons)]))
    for pupil in pupils:
        pupil.student.page.goto(f"{course.url}/{pupil.path}", wait_until="commit")
    for pupil in pupils:
        check(pupil, "drawn", wait_drawn, pupil.student.page)
        check(pupil, "on screen", _assert_no_error, pupil.student.page, f"/{pupil.path}")
        pupil.replica = pupil.student.replica()
    report.append(f"{STUDENTS} students opened their lessons at once: all drawn after "
                  f"{time.monotonic() - started:.0f} s ({load_average()}).")
    share = {r: sum(p.replica == r for p in pupils) for r in ("r1", "r2", "r3")}
    even = STUDENTS / 3
    report.append(f"Students per process: {share} (an even share is {even:.0f}; "
                  f"±{EVEN_SHARE_TOLERANCE:.0%} allowed).")
    if not all(abs(n - even) <= EVEN_SHARE_TOLERANCE * even for n in share.values()):
        failures.append(f"students per process {share}")

    started = time.monotonic()
    for pupil in pupils:
        check(pupil, "downloads match the page", EXPORT_CHECKS[pupil.path], pupil.student.page)
    report.append(f"Every student's downloads checked against the page (each lesson's export "
                  f"check, as in test_exports.py): {time.monotonic() - started:.0f} s.")
    for pupil in pupils:
        if not pupil.problems:
            check(pupil, "a control moved", lambda p=pupil: setattr(
                p, "control", move_a_control(p.student.page)[0]))
            pupil.value = shown(pupil.student.page, pupil.control) if pupil.control else ""
            pupil.settings = query(pupil.student.page)
    cpu = sum(_tree_cpu_s(pid) for pid in pids) - cpu_before
    report.append(f"CPU time of the three processes for the class (each student opened a "
                  f"lesson, downloaded its files and moved a control): {cpu:.0f} s, "
                  f"{cpu / STUDENTS:.1f} s per student.")

    report.append(f"Memory of each process with its {even:.0f} students' sessions open "
                  "(smaps_rollup; PSS counts a shared page once in all):")
    mems = {r: memory_mib(pid) for r, pid in zip(("r1", "r2", "r3"), pids, strict=True)}
    report += [memory_line(r, m) for r, m in mems.items()]
    report.append(f"    all three: PSS {sum(m['Pss'] for m in mems.values()):.0f} MiB")
    return pupils


def a_process_is_killed(course: Course, pupils: list[Pupil], report: list[str],
                        failures: list[str], screenshot_dir: Path) -> None:
    """SIGKILL (a crash) to the process of the first student: each of its students must be
    back on a live process, with the same link and control value, within FAILOVER_S."""
    lost = pupils[0].replica
    victims = [p for p in pupils if p.replica == lost and not p.problems]
    others = [p for p in pupils if p.replica != lost]
    sockets = {id(p): len(p.student.sockets) for p in others}
    watch = Failover(f"replica{lost[1:]}")
    cpu_before = sum(_tree_cpu_s(course.replica_pid(int(r[1:]))) for r in ("r1", "r2", "r3")
                     if r != lost)
    killed, killed_at = time.monotonic(), time.time()
    os.kill(course.replica_pid(int(lost[1:])), signal.SIGKILL)
    backs = wait_back([p.student for p in victims], lost, killed, watch, course)
    wait_for_down(watch, course)
    for pupil, back in zip(victims, backs, strict=True):
        pupil.back = back
        page = pupil.student.page
        opened = [t - killed for t in pupil.student.sockets if t > killed]
        pupil.reconnected = opened[-1] if opened else None
        if back is None or back[0] > FAILOVER_S:
            pupil.problems.append(f"its page ran on a live process after {back} s")
        check(pupil, "after the failover", _assert_no_error, page, f"/{pupil.path}")
        if query(page) != pupil.settings or shown(page, pupil.control) != pupil.value:
            pupil.problems.append(f"view changed: {query(page)} {shown(page, pupil.control)!r}"
                                  f", was {pupil.settings} {pupil.value!r}")
    if victims:
        victims[0].student.page.screenshot(path=screenshot_dir / "course_class_failover.png")
    reconnected = [p.path for p in others if len(p.student.sockets) != sockets[id(p)]]
    if reconnected:
        failures.append(f"students of live processes reconnected: {reconnected}")
    try:
        assert_nothing_sent_after_down(watch, course)
        sent = "none"
    except AssertionError as exc:
        failures.append(str(exc))
        sent = str(exc)
    server_cpu = sum(_tree_cpu_s(course.replica_pid(int(r[1:]))) for r in ("r1", "r2", "r3")
                     if r != lost) - cpu_before
    ran = sorted(b[0] for b in backs if b is not None)
    drawn = sorted(b[1] for b in backs if b is not None)
    spans = ("never" if not ran else
             f"their pages ran there after {ran[0]:.1f} to {ran[-1]:.1f} s (median "
             f"{ran[len(ran) // 2]:.1f} s) and were drawn after {drawn[0]:.1f} to "
             f"{drawn[-1]:.1f} s (median {drawn[len(drawn) // 2]:.1f} s)")
    report.append(
        f"Process {lost} killed (SIGKILL) under its {len(victims)} students, {load_average()}: "
        f"each back on a live process with the same link and control value; {spans}. HAProxy "
        f"marked it DOWN {watch.down_at - killed_at:.1f} s after the kill; requests sent to "
        f"it after that: {sent}. The two live processes used {server_cpu:.1f} s of CPU for "
        f"the {len(victims)} students they took over.")


def weights_shared_or_not(report: list[str]) -> None:
    report.append("Weights of lessons 9 to 11 in 3 processes (no server; each holds both "
                  "models and reads every page of them), shared (memory-mapped from the "
                  "cache, as the server does) and private (a copy each):")
    for mode in ("shared", "private"):
        mems = weights_in_memory(mode)
        report += [memory_line(f"{mode} #{n + 1}", m) for n, m in enumerate(mems)]
        report.append(f"    {mode}, all three: PSS {sum(m['Pss'] for m in mems):.0f} MiB")
