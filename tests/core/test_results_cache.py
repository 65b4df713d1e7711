"""Long results kept on disk: computed once per machine, settings and code version; the
version derived from the code that computes each result and every module it imports."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attncore import results_cache as rc
from attncore.results_cache import kept_as

ROOT = Path(__file__).resolve().parents[2]
HEX64 = re.compile(r"[0-9a-f]{64}")


@pytest.fixture
def results(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "results"
    monkeypatch.setenv(rc.RESULTS_ENV, str(folder))
    return folder


# --- Keeping ---------------------------------------------------------------------------

def test_a_result_is_computed_once_and_read_after(results):
    calls = []

    def compute():
        calls.append(1)
        return {"weights": np.arange(3.0)}

    assert not rc.is_kept_as("demo", {"seed": 0}, "v1")
    first = kept_as("demo", {"seed": 0}, "v1", compute)
    assert rc.is_kept_as("demo", {"seed": 0}, "v1")
    assert not rc.is_kept_as("demo", {"seed": 0}, "v2")
    again = kept_as("demo", {"seed": 0}, "v1", compute)
    assert len(calls) == 1 and np.array_equal(again["weights"], first["weights"])
    # Other settings, or another version of the code, compute again.
    kept_as("demo", {"seed": 1}, "v1", compute)
    kept_as("demo", {"seed": 0}, "v2", compute)
    assert len(calls) == 3
    assert rc.results_folder("demo", {"seed": 0}, "v1").parent == results


def test_a_result_of_none_is_kept_too(results):
    calls = []
    for _ in range(2):
        assert kept_as("nothing", {}, "v1", lambda: calls.append(1)) is None
    assert len(calls) == 1


def test_a_damaged_file_is_computed_again(results):
    kept_as("demo", {"seed": 0}, "v1", lambda: 1)
    folder = rc.results_folder("demo", {"seed": 0}, "v1")
    (folder / rc.RESULT).write_bytes(b"not a pickle")
    assert kept_as("demo", {"seed": 0}, "v1", lambda: 2) == 2


def test_a_listed_result_is_kept_under_its_modules_version(results, monkeypatch):
    monkeypatch.setitem(rc.RESULTS, "demo", "attncore.masks")
    calls = []
    for _ in range(2):
        assert rc.kept("demo", {"n": 3}, "attncore.masks", lambda: calls.append(1) or 7) == 7
    assert len(calls) == 1 and rc.is_kept("demo", {"n": 3}, "attncore.masks")
    version = rc.module_version("attncore.masks")
    meta = json.loads((rc.results_folder("demo", {"n": 3}, version) / rc.META).read_text())
    assert meta == {"name": "demo", "settings": {"n": 3}, "version": version}
    import attncore.masks  # a module object names itself
    assert rc.is_kept("demo", {"n": 3}, attncore.masks)


def test_a_result_not_listed_or_under_another_module_is_refused(results, monkeypatch):
    monkeypatch.setitem(rc.RESULTS, "demo", "attncore.masks")
    with pytest.raises(ValueError, match="not a kept result"):
        rc.kept("unlisted", {}, "attncore.masks", lambda: 1)
    with pytest.raises(ValueError, match="computed by attncore.masks"):
        rc.kept("demo", {}, "attncore.text", lambda: 1)
    with pytest.raises(ValueError, match="computed by attncore.masks"):  # an old caller's
        rc.is_kept("demo", {}, "0" * 64)                                   # version string
    assert not list(results.glob("*"))


def test_the_results_folder_is_its_own_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(rc.RESULTS_ENV, str(tmp_path / "elsewhere"))
    assert rc.results_root() == tmp_path / "elsewhere"
    monkeypatch.delenv(rc.RESULTS_ENV)
    assert rc.results_root() == tmp_path / "cache" / "results"


def test_the_tests_keep_results_in_a_folder_of_their_own():
    # tests/conftest.py: never the developer's own folder (the weight cache's results)
    folder = Path(os.environ[rc.RESULTS_ENV])
    assert rc.results_root() == folder
    assert folder.name.startswith("attnlab-results-")


# --- The derived version --------------------------------------------------------------

PACKAGE = {  # every form of import the version follows, and two it must not
    "__init__.py": "from .a import f\n",
    "a.py": "import numpy as np\nfrom . import b\nfrom .sub import c\nfrom .sub.d import g\n"
            "def f():\n    return np, b, c, g\n",
    "b.py": "def h():\n    from attncore.e import k\n    return k\n",
    "e.py": "import os\nk = os.sep\n",
    "f.py": "x = 1\n",
    "g.py": "y = 2\n",
    "unused.py": "z = 3\n",
    "sub/__init__.py": "from ..f import x\n",
    "sub/c.py": "import attncore.g as gg\n",
    "sub/d.py": "from .. import e\nfrom attncore.hub import name\ng = e.k + name\n",
    "hub/__init__.py": "from .inner import name\n",
    "hub/inner.py": "name = 'n'\n",
}


def write_package(root: Path) -> None:
    for name, text in PACKAGE.items():
        path = root / "attncore" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_version_reads_every_module_imported_and_the_packages_above(tmp_path):
    write_package(tmp_path)
    found = rc.module_files("attncore.a", tmp_path)
    # By hand: a imports b, sub.c (a submodule named in `from .sub import c`) and sub.d
    # (g is a name in it); b imports e inside a function; sub.c imports g; sub.d imports e
    # and a name from the package hub, whose __init__ imports hub.inner. The packages
    # above (attncore, sub) count as files; sub's own import of f counts for none of them.
    assert list(found) == ["attncore", "attncore.a", "attncore.b", "attncore.e", "attncore.g",
                           "attncore.hub", "attncore.hub.inner", "attncore.sub",
                           "attncore.sub.c", "attncore.sub.d"]
    assert found["attncore.sub"] == tmp_path / "attncore" / "sub" / "__init__.py"
    assert list(rc.module_files("attncore.e", tmp_path)) == ["attncore", "attncore.e"]
    with pytest.raises(ValueError, match="not a module"):
        rc.module_files("attncore.nothing", tmp_path)


def test_the_version_changes_with_a_file_it_reads_and_only_then(tmp_path):
    write_package(tmp_path)
    before = rc.module_version("attncore.a", tmp_path)
    assert HEX64.fullmatch(before) and rc.module_version("attncore.a", tmp_path) == before
    for name in ("f.py", "unused.py"):
        (tmp_path / "attncore" / name).write_text("changed = True\n")
    assert rc.module_version("attncore.a", tmp_path) == before
    for name in ("hub/inner.py", "sub/__init__.py", "__init__.py"):
        path = tmp_path / "attncore" / name
        text = path.read_text()
        path.write_text(text + "# edited\n")
        assert rc.module_version("attncore.a", tmp_path) != before, name
        path.write_text(text)
        assert rc.module_version("attncore.a", tmp_path) == before, name


# --- The registry, and the command line on a copy of attncore ---------------------------

@pytest.fixture
def copy(tmp_path) -> Path:
    """A copy of this attncore, to edit: the folder that holds it."""
    shutil.copytree(ROOT / "attncore", tmp_path / "attncore",
                    ignore=shutil.ignore_patterns("__pycache__", "data"))
    return tmp_path


def command(root: Path, *args: str, results: Path | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": str(root)}
    if results is not None:
        env[rc.RESULTS_ENV] = str(results)
    done = subprocess.run([sys.executable, "-m", "attncore.results_cache", *args], cwd=root,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def edited(path: Path) -> None:
    path.write_text(path.read_text() + "\n# edited: a change to this module's code\n")


def changed_by_editing(copy: Path, module: str, before: dict) -> tuple[set[str], dict]:
    """Edit ``module`` (attncore.<name>) in the copy and read the versions again: the
    results whose version changed, checked to be those whose code uses the module, and
    the versions now."""
    edited(copy.joinpath(*module.split(".")).with_suffix(".py"))
    after = json.loads(command(copy, "versions"))
    changed = {name for name in before if after[name] != before[name]}
    assert changed == {name for name, used in rc.RESULTS.items()
                       if module in rc.module_files(used, copy)}
    return changed, after


def test_the_versions_follow_the_modules_each_result_uses(copy):
    before = json.loads(command(copy, "versions"))  # one JSON object
    assert list(before) == list(rc.RESULTS) and all(HEX64.fullmatch(v) for v in before.values())
    assert before == rc.versions(copy)  # the same read in this process

    changed, after_masks = changed_by_editing(copy, "attncore.masks", before)
    # Lesson 11's sliding windows are masks.sliding_window_mask, in inference; lesson 0's
    # GRU copy task and lesson 8's trainings use no mask of attncore.masks.
    assert {"lm-window", "lm-merged-kv"} <= changed
    assert not changed & {"lesson0-bottleneck", "lesson8-sentiment", "lesson8-induction"}

    changed, _ = changed_by_editing(copy, "attncore.text", after_masks)
    # Lesson 8's sentiment task tokenizes with text.tokenize, and its collapse runs train it.
    assert {"lesson8-sentiment", "lesson8-collapse"} <= changed
    assert not changed & {"lesson0-bottleneck", "lesson8-induction", "lm-window"}


def test_the_list_shows_each_kept_folder_and_whether_it_is_current(copy, tmp_path,
                                                                    monkeypatch):
    folder = tmp_path / "kept"
    monkeypatch.setenv(rc.RESULTS_ENV, str(folder))
    current = rc.result_version("lesson8-collapse", root=copy)
    kept_as("lesson8-collapse", {"seed": 0}, current, lambda: "now")
    kept_as("lesson8-collapse", {"seed": 0}, "0" * 64, lambda: "before")
    kept_as("no-longer-listed", {}, current, lambda: "gone")
    (folder / "lesson0-bottleneck-cut-short").mkdir()  # a build killed before its meta

    lines = command(copy, "list", results=folder).splitlines()
    entries = {(e.get("name"), e.get("version")): e for e in map(json.loads, lines)}
    assert len(lines) == 4 and all(e["bytes"] >= 0 for e in entries.values())
    now = entries["lesson8-collapse", current]
    assert now["current"] and now["complete"] and now["settings"] == {"seed": 0}
    assert now["folder"] == rc.results_folder("lesson8-collapse", {"seed": 0}, current).name
    assert not entries["lesson8-collapse", "0" * 64]["current"]
    assert not entries["no-longer-listed", current]["current"]
    assert entries[None, None] == {"folder": "lesson0-bottleneck-cut-short", "bytes": 0,
                                   "complete": False, "current": False}

    edited(copy / "attncore" / "text.py")  # collapse trains sentiment models: stale now
    lines = command(copy, "list", results=folder).splitlines()
    assert not any(json.loads(line)["current"] for line in lines)


def test_every_result_kept_in_the_code_is_listed_with_its_module():
    # Each kept(...) or is_kept(...) call in attncore and the pages: a literal name (or an
    # f-string's fixed start) is listed in RESULTS, and a literal module is the listed one.
    calls = 0
    for path in [*ROOT.glob("attncore/**/*.py"), *ROOT.glob("pages/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not (isinstance(node, ast.Call) and len(node.args) >= 3
                    and getattr(node.func, "id", getattr(node.func, "attr", None))
                    in ("kept", "is_kept")):
                continue
            name, module = node.args[0], node.args[2]
            if isinstance(name, ast.Constant):
                calls += 1
                assert name.value in rc.RESULTS, (path, name.value)
                if isinstance(module, ast.Constant):
                    assert rc.RESULTS[name.value] == module.value, (path, name.value)
            elif isinstance(name, ast.JoinedStr) and isinstance(name.values[0], ast.Constant):
                calls += 1
                start = name.values[0].value
                assert any(n.startswith(start) for n in rc.RESULTS), (path, start)
    assert calls >= 6  # lessons 0, 6, 8 (two), and lm's three at least
