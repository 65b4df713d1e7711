"""The launcher a teacher runs for a course, ``deploy/course``, in its ``--check`` mode: it
finds HAProxy and has it check ``deploy/haproxy.cfg``, starting nothing (no servers, well
under a second). The course itself, started, is tested in ``tests/e2e/test_course.py``.

Debian installs HAProxy in /usr/sbin, which an ordinary user's PATH does not include: from
a fresh clone with the stock user PATH, the launcher once said "haproxy is not installed"
although it was.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parents[2] / "deploy" / "course"
DEBIAN_HAPROXY = Path("/usr/sbin/haproxy")
STOCK_USER_PATH = "/usr/local/bin:/usr/bin:/bin"  # Debian's PATH for a user: no sbin


def check(path: str) -> subprocess.CompletedProcess:
    """``deploy/course --check`` with PATH set to ``path`` and no ATTNLAB_ settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTNLAB_")}
    return subprocess.run([str(LAUNCHER), "--check"], env={**env, "PATH": path},
                          capture_output=True, text=True, timeout=30)


def test_the_launcher_finds_debians_haproxy_on_the_stock_user_path():
    if not DEBIAN_HAPROXY.exists():
        message = "Debian's haproxy is not installed (apt-get install -y haproxy)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    if any(Path(folder, "haproxy").exists() for folder in STOCK_USER_PATH.split(":")):
        pytest.skip("a haproxy on the stock PATH would hide the lookup in /usr/sbin")
    done = check(STOCK_USER_PATH)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == f"HAProxy: {DEBIAN_HAPROXY}"
    assert "Configuration file is valid" in done.stdout


def test_a_haproxy_on_the_path_comes_first(tmp_path):
    # A teacher's own build (or a test's stand-in) is used before Debian's.
    own = tmp_path / "haproxy"
    own.write_text('#!/bin/sh\necho "own haproxy $*"\n')
    own.chmod(0o755)
    done = check(f"{tmp_path}:{STOCK_USER_PATH}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [f"HAProxy: {own}", "own haproxy -c -f deploy/haproxy.cfg"]
