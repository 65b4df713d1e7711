"""Imports go one way: attncore is NumPy only and never imports the app's libraries."""

import ast
from pathlib import Path

import pytest

ATTNCORE = Path(__file__).resolve().parents[2] / "attncore"
FORBIDDEN = {"streamlit", "plotly", "pandas"}
SOURCES = sorted(ATTNCORE.rglob("*.py"))  # the subpackages (train, lm) too


def imported_top_level_names(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "__import__" and node.args
              and isinstance(node.args[0], ast.Constant)):
            yield str(node.args[0].value).split(".")[0]


def test_the_package_is_found():
    names = {p.name for p in SOURCES}
    assert {"__init__.py", "softmax.py", "attention.py"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ATTNCORE)))
def test_attncore_does_not_import_app_libraries(path):
    found = FORBIDDEN.intersection(imported_top_level_names(path))
    assert not found, f"{path.name} imports {sorted(found)}; attncore must stay NumPy only"


def test_the_checker_sees_imports(tmp_path):
    # the checker itself must catch each form of import
    sample = tmp_path / "sample.py"
    sample.write_text("import plotly.express as px\nfrom pandas import DataFrame\n"
                      "def f():\n    import streamlit\n")
    assert set(imported_top_level_names(sample)) == FORBIDDEN
