"""Machinery of the course tests (``test_course.py``): ``deploy/course`` on free local
ports, what HAProxy says (its stats socket and its log), the processes behind it and
their memory.

``deploy/course`` is what the README's "Host it for a course" runs on a machine without
systemd: the three processes of ``deploy/haproxy.cfg`` (``deploy/replica``) and HAProxy
with that same file. The tests run it with ``--no-warm-up`` (they warm processes up
themselves when they measure what it changes) and find everything it started in the
folder ``ATTNLAB_RUN_DIR`` they give it.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = Path(__file__).resolve().parent / "screenshots"  # as conftest.py's


def stop_process_group(proc: subprocess.Popen | None, grace_s: float = 10) -> None:
    """SIGTERM to the process group ``proc`` leads (started with start_new_session), then
    SIGKILL if it has not ended within ``grace_s``. Nothing if it has ended already."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
COURSE = REPO_ROOT / "deploy" / "course"
CONFIG = REPO_ROOT / "deploy" / "haproxy.cfg"
COOKIE = "ATTNLAB_REPLICA"  # the affinity cookie of deploy/haproxy.cfg
START_TIMEOUT_S = 90.0


def haproxy_path() -> str:
    """Debian's haproxy, or a skip (locally) / a failure (when ``CI`` is set)."""
    found = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy")
                                        .exists() else None)
    if found is None:
        msg = ("haproxy is missing: the course tests run deploy/haproxy.cfg. Install it with "
               "`apt-get install -y haproxy` (or run .ci/run, which does).")
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return found


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free ports on 127.0.0.1."""
    for _ in range(200):
        first = random.randrange(20_000, 60_000)
        if all(_bindable(first + k) for k in range(count)):
            return first
    raise RuntimeError(f"no {count} consecutive free ports found")


def listening_addresses(port: int) -> set[str]:
    """The addresses of this machine's TCP sockets listening on ``port`` (IPv4 and IPv6),
    from /proc/net: "127.0.0.1", "0.0.0.0", "::"..."""
    found = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        with contextlib.suppress(OSError), open(f"/proc/net/{table}") as fh:
            for line in list(fh)[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    raw = bytes.fromhex(address)
                    # /proc prints each 32-bit word in the host's (little-endian) order
                    raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                    found.add(socket.inet_ntop(family, raw))
    return found


def listening_pid(port: int) -> int | None:
    """The process with a socket listening on 127.0.0.1:``port``, from /proc."""
    inodes = set()
    with open("/proc/net/tcp") as fh:
        for line in list(fh)[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port:
                inodes.add(f"socket:[{fields[9]}]")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                    return int(pid)
    return None


def memory_mib(pid: int) -> dict[str, float]:
    """A process's memory from /proc/<pid>/smaps_rollup, in MiB: Rss, Pss (its share of
    every page it maps: a page mapped by 3 processes counts a third in each), Private and
    Shared (clean + dirty)."""
    kb = {}
    with open(f"/proc/{pid}/smaps_rollup") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                kb[parts[0][:-1]] = int(parts[1])
    return {"Rss": kb["Rss"] / 1024, "Pss": kb["Pss"] / 1024,
            "Private": (kb["Private_Clean"] + kb["Private_Dirty"]) / 1024,
            "Shared": (kb["Shared_Clean"] + kb["Shared_Dirty"]) / 1024}


# One request as HAProxy's "option httplog" writes it: client, [accept date], frontend,
# backend/server, timers, status, bytes, cookies, termination state, counters, request.
_REQUEST = re.compile(
    r"\[(?P<accepted>\d+/\w+/\d+:\d+:\d+:\d+\.\d+)\] \S+ (?P<backend>[^/\s]+)/(?P<server>\S+) "
    r"\S+ (?P<status>-?\d+) .*\"(?P<request>[^\"]*)\"$")


@dataclass
class Request:
    accepted: float  # the time HAProxy accepted it (seconds since the epoch)
    server: str  # where it went: replica1, ..., or <NOSRV>
    status: int
    request: str


class Course:
    """``deploy/course`` on free local ports, in its own process group."""

    def __init__(self, run_dir: Path, replicas: int = 3) -> None:
        self.run_dir = run_dir
        self.replicas = replicas
        self.port = free_ports(1)
        self.first_port = free_ports(replicas)
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    @property
    def socket_path(self) -> Path:
        return self.run_dir / "haproxy.sock"

    def replica_port(self, n: int) -> int:
        """The port of replica ``n`` (from 1), as its cookie value ``r<n>`` names it."""
        return self.first_port + n - 1

    def start(self) -> Course:
        env = {**os.environ, "ATTNLAB_PYTHON": sys.executable,
               "ATTNLAB_RUN_DIR": str(self.run_dir), "PYTHONUNBUFFERED": "1"}
        with (self.run_dir / "course.out").open("wb") as out:
            self.proc = subprocess.Popen(
                [str(COURSE), "--listen", f"127.0.0.1:{self.port}",
                 "--first-port", str(self.first_port), "--no-warm-up"],
                cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            with contextlib.suppress(OSError):
                if all(row["status"] == "UP" for row in self.servers().values()):
                    return self
            time.sleep(0.25)
        logs = self.logs()
        self.stop()
        pytest.fail(f"deploy/course did not bring {self.replicas} processes up behind HAProxy "
                    f"within {START_TIMEOUT_S:.0f} s\n{logs}")

    def stats(self) -> list[dict[str, str]]:
        """HAProxy's "show stat" (one row per frontend, backend and server) from its socket."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(self.socket_path))
            sock.sendall(b"show stat\n")
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        text = data.decode().lstrip("# ")
        return list(csv.DictReader(io.StringIO(text)))

    def servers(self) -> dict[str, dict[str, str]]:
        """The backend's servers by name (replica1...): status ("UP", "DOWN"...), stot (every
        connection ever made to it), scur (open now)..."""
        return {row["svname"]: row for row in self.stats()
                if row["pxname"] == "replicas" and row["svname"].startswith("replica")}

    def replica_pid(self, n: int) -> int:
        pid = listening_pid(self.replica_port(n))
        assert pid is not None, f"nothing listens on 127.0.0.1:{self.replica_port(n)}"
        return pid

    def requests(self) -> list[Request]:
        """Every request HAProxy has logged (it logs a request when it ends)."""
        found = []
        for match in map(_REQUEST.search, self.log("haproxy.log").splitlines()):
            if match and match["backend"] == "replicas":
                accepted = datetime.strptime(match["accepted"], "%d/%b/%Y:%H:%M:%S.%f")
                found.append(Request(accepted.timestamp(), match["server"],
                                     int(match["status"]), match["request"]))
        return found

    def log(self, name: str) -> str:
        try:
            return (self.run_dir / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def logs(self, tail: int = 4000) -> str:
        names = ["course.out", "haproxy.log"] + [f"replica-{self.replica_port(n)}.log"
                                                  for n in range(1, self.replicas + 1)]
        return "\n".join(f"--- {name} ---\n{self.log(name)[-tail:]}" for name in names)

    def stop(self) -> None:
        stop_process_group(self.proc, grace_s=20)
