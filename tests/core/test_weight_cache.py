"""The cache of model weights on disk: built once, memory-mapped read-only, never half
written, and built by one process while the others wait."""

from __future__ import annotations

import mmap
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attncore import weight_cache as wc

ROOT = Path(__file__).resolve().parents[2]
SHAPES = {"w": ((2, 3), np.dtype(np.float64)), "e": ((4,), np.dtype(np.float32))}
META = {"format": 1, "sha256": "ab" * 32}


def maps_a_file(a: np.ndarray) -> bool:
    """Whether ``a``'s memory is a map of a file (its base chain ends at a map)."""
    base = a
    while base.base is not None and not isinstance(base, np.memmap):
        base = base.base
    return isinstance(base, (np.memmap, mmap.mmap))


def arrays() -> dict[str, np.ndarray]:
    return {"w": np.arange(6.0).reshape(2, 3), "e": np.ones(4, np.float32)}


def read(folder: Path):
    return wc.open_arrays(folder, SHAPES) if wc.read_meta(folder, META) else None


def test_built_once_then_read_as_read_only_maps(tmp_path):
    builds = []

    def build(folder):
        builds.append(folder)
        wc.save(folder, arrays(), META)

    folder = tmp_path / "model-abab"
    first, built = wc.read_or_build(folder, read, build)
    again, built_again = wc.read_or_build(folder, read, build)
    assert (built, built_again, len(builds)) == (True, False, 1)
    assert builds[0] != folder  # written elsewhere, then moved into place
    for name, a in again.items():
        np.testing.assert_array_equal(a, arrays()[name])
        assert maps_a_file(a) and not a.flags.writeable, name
    with pytest.raises(ValueError, match="read-only"):
        again["w"][0, 0] = 1.0


def test_a_folder_that_is_stale_or_incomplete_is_built_again(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    np.save(folder / "w.npy", np.zeros((2, 3)))  # no meta.json: a build cut short
    assert read(folder) is None
    wc.save(folder, arrays(), {**META, "format": 0})  # an older layout
    assert read(folder) is None
    found, built = wc.read_or_build(folder, read, lambda f: wc.save(f, arrays(), META))
    assert built and found["w"][1, 2] == 5.0


def test_arrays_of_another_shape_or_dtype_are_not_used(tmp_path):
    wc.save(tmp_path, {"w": np.zeros((3, 2)), "e": np.ones(4, np.float32)}, META)
    assert wc.open_arrays(tmp_path, SHAPES) is None
    wc.save(tmp_path, {"w": np.zeros((2, 3)), "e": np.ones(4, np.float64)}, META)
    assert wc.open_arrays(tmp_path, SHAPES) is None


def test_a_build_that_fails_leaves_the_folder_as_it_was(tmp_path):
    folder = tmp_path / "model"
    wc.read_or_build(folder, read, lambda f: wc.save(f, arrays(), META))

    def refused(f):
        raise ValueError("the download is not the pinned file")

    with pytest.raises(ValueError, match="pinned"):
        wc.read_or_build(folder, lambda f: None, refused)
    assert read(folder)["w"][1, 2] == 5.0
    assert [p.name for p in tmp_path.iterdir() if ".part-" in p.name] == []


def test_a_killed_builds_part_folder_is_cleared_by_the_next_build(tmp_path):
    folder = tmp_path / "model"
    left = tmp_path / "model.part-killed"  # what a build stopped by SIGKILL leaves
    left.mkdir()
    (left / "w.npy").write_bytes(b"half written")
    found, built = wc.read_or_build(folder, read, lambda f: wc.save(f, arrays(), META))
    assert built and found["w"][1, 2] == 5.0
    assert [p.name for p in tmp_path.iterdir() if ".part-" in p.name] == []


# Three processes started together: one builds (slowly), the other two wait and read it.
_RACE = """
import sys, time
from pathlib import Path
import numpy as np
from attncore import weight_cache as wc
folder, log = Path(sys.argv[1]), Path(sys.argv[2])
meta = {"format": 1}
def build(f):
    with log.open("a") as fh:
        fh.write("built\\n")
    time.sleep(0.5)
    wc.save(f, {"w": np.arange(3.0)}, meta)
def read(f):
    return wc.open_arrays(f, {"w": ((3,), np.dtype(float))}) if wc.read_meta(f, meta) else None
found, _ = wc.read_or_build(folder, read, build)
print(found["w"].sum())
"""


def test_processes_started_together_build_it_once(tmp_path):
    log = tmp_path / "builds.log"
    procs = [subprocess.Popen([sys.executable, "-c", _RACE, str(tmp_path / "model"), str(log)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert outputs == ["3.0"] * 3  # 0 + 1 + 2, read by every process
    assert log.read_text().splitlines() == ["built"]


def test_the_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(wc.CACHE_ENV, str(tmp_path))
    assert wc.cache_root() == tmp_path
    monkeypatch.delenv(wc.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert wc.cache_root() == tmp_path / "xdg" / "attention-lab"
