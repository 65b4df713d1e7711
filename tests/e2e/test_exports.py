"""Every lesson's downloads, clicked in a real browser and read back.

``CHECKS`` maps each lesson to its check; ``test_classroom.py`` runs it on the page its
nonsense-link test has just opened at the defaults (one page load for both).

Each lesson ends with a "Download" section: a select box ``<prefix>_dl_matrix``, a
"CSV" button (the chosen matrix, row labels first, full precision) and a "Whole trace
(JSON)" button. Here both files are downloaded at the page's defaults, parsed, and
compared with each other, with the shapes the settings imply, and (for the worked
example) with the numbers printed in the heatmap and with values derived by hand. On
the worked example every matrix of the select box is chosen and downloaded in turn.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from playwright.sync_api import Page
from test_pages import PAGES, _runs_finished, _wait_idle

from attncore.lm import answer

pytestmark = pytest.mark.e2e

DOWNLOAD_TIMEOUT_MS = 60_000


@dataclass
class Table:
    """A downloaded CSV: column names, row labels, numbers."""

    name: str
    columns: list[str]
    rows: list[str]
    values: np.ndarray


def _parse_csv(name: str, text: str) -> Table:
    # The csv module, not pandas: a token such as "NA" or "null" must stay a label.
    records = list(csv.reader(io.StringIO(text)))
    assert records and records[0][0] == "", f"{name}: the first header cell should be empty"
    columns = records[0][1:]
    body = [r for r in records[1:] if r]
    assert all(len(r) == len(columns) + 1 for r in body), f"{name}: ragged rows"
    values = np.array([[float(x) for x in r[1:]] for r in body], dtype=np.float64)
    return Table(name, columns, [r[0] for r in body], values.reshape(len(body), len(columns)))


def _download(page: Page, button: str) -> tuple[str, str]:
    """Click a download button; return the file's suggested name and its text."""
    target = page.locator('[data-testid="stDownloadButton"]').filter(
        has_text=re.compile(rf"^\s*{re.escape(button)}\s*$")).locator("button")
    target.scroll_into_view_if_needed()
    with page.expect_download(timeout=DOWNLOAD_TIMEOUT_MS) as info:
        target.click()
    download = info.value
    failure = download.failure()
    assert failure is None, f"download {button!r} failed: {failure}"
    return download.suggested_filename, Path(download.path()).read_text(encoding="utf-8")


def _get_csv(page: Page, prefix: str) -> Table:
    name, text = _download(page, "CSV")
    assert name.startswith(f"{prefix}_") and name.endswith(".csv"), name
    return _parse_csv(name, text)


def _get_json(page: Page, prefix: str) -> dict:
    name, text = _download(page, "Whole trace (JSON)")
    assert name == f"{prefix}_trace.json", name
    return json.loads(text)


def _arr(x) -> np.ndarray:
    """A JSON matrix as floats (null, written for −∞, becomes NaN)."""
    return np.array(x, dtype=np.float64)


def _matrix_select(page: Page):
    return page.get_by_role("combobox", name="Matrix to download", exact=True)


def _choose(page: Page, prefix: str, option: str, default: str) -> None:
    """Pick ``option`` in the download select box with the mouse, as a teacher would."""
    before = _runs_finished(page)
    box = _matrix_select(page)
    box.scroll_into_view_if_needed()
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    # The link follows the choice (a bound select box keeps its label in the link).
    key = f"{prefix}_dl_matrix"
    want = None if option == default else [option]  # a default value leaves the link
    page.wait_for_url(lambda url: parse_qs(urlsplit(url).query).get(key) == want,
                      timeout=30_000)
    _wait_idle(page, before)
    assert box.input_value() == option


def _unique(labels: list[str]) -> list[str]:
    """The app's rule for repeated labels: 'the', 'the (2nd)', 'the (3rd)', marked by
    which occurrence they are (pages/ui/labels.py); up to 20 occurrences, plenty here."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        n = seen[label] = seen.get(label, 0) + 1
        suffix = {2: "nd", 3: "rd"}.get(n, "th")
        out.append(label if n == 1 else f"{label} ({n}{suffix})")
    return out


def _heatmap_cells(page: Page, title: str) -> list[str]:
    """The numbers Plotly printed in the cells of the heatmap titled ``title``, row by row
    (a text layer over the heatmap prints them, each in black or white for contrast)."""
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(has_text=title)
    assert chart.count() == 1, f"{chart.count()} charts titled {title!r}"
    return chart.evaluate(
        """(el) => [...el.querySelectorAll('.textpoint text')].map((t) => t.textContent)"""
    )


# --------------------------------------------------------------------------------------
# Worked example: exact numbers, and every matrix of the select box
# --------------------------------------------------------------------------------------
WE_JSON_KEY = {  # option of the select box -> entry of the JSON trace
    "Q": "Q", "K": "K", "V": "V", "Scores S = QKᵀ": "scores",
    "Scaled (masked) scores": "masked_scores", "Exponentials": "exps",
    "Weights W": "weights", "Output O": "output",
}


def _textbook_weights() -> np.ndarray:
    """By hand: Q = [[1,0],[0,1],[1,1]] = K, scores QKᵀ/√2, softmax by rows."""
    a, b = math.exp(1 / math.sqrt(2)), math.exp(2 / math.sqrt(2))
    return np.array([[a, 1, a], [1, a, a], [a, a, b]]) / np.array([[2 * a + 1], [2 * a + 1],
                                                                   [2 * a + b]])


def _check_why_attention(page: Page) -> None:
    """Lesson 0 at its defaults: accuracy by length of both models, the same in the CSV as
    in the JSON summary (which rounds to 4 decimals)."""
    table = _get_csv(page, "why")  # "accuracy by length", the first choice
    trace = _get_json(page, "why")
    assert trace["train_lengths"] == [3, 16]
    assert {4, 8, 12, 16, 20} <= set(trace["lengths"])
    assert table.columns == ["attention", "fixed"]
    assert table.rows == [str(n) for n in trace["lengths"]]
    np.testing.assert_allclose(table.values[:, 0], trace["accuracy_attention"], atol=5e-5)
    np.testing.assert_allclose(table.values[:, 1], trace["accuracy_fixed"], atol=5e-5)
    assert np.all((0 <= table.values) & (table.values <= 1))


def _check_worked_example(page: Page) -> None:
    q = _get_csv(page, "we")
    assert q.name == "we_q.csv"
    assert (q.rows, q.columns) == (["x1", "x2", "x3"], ["q1", "q2"])
    np.testing.assert_array_equal(q.values, [[1, 0], [0, 1], [1, 1]])

    trace = _get_json(page, "we")
    assert trace["tokens"] == ["x1", "x2", "x3"]
    weights = _arr(trace["weights"])
    assert weights.shape == (3, 3) and _arr(trace["output"]).shape == (3, 3)
    np.testing.assert_allclose(weights, _textbook_weights(), rtol=0, atol=1e-15)
    shown = _heatmap_cells(page, "Attention weights W (rows sum to 1)")
    assert shown == [f"{w:.3f}" for w in weights.ravel()], (
        f"the weights heatmap shows {shown}; the JSON rounds to "
        f"{[f'{w:.3f}' for w in weights.ravel()]}")

    options = _options(page)
    assert set(options) == set(WE_JSON_KEY), f"matrices offered: {options}"
    default = _matrix_select(page).input_value()
    for option in [o for o in options if o != default] + [default]:
        if option != _matrix_select(page).input_value():
            _choose(page, "we", option, default)
        table = _get_csv(page, "we")
        expected = _arr(trace[WE_JSON_KEY[option]])
        assert table.values.shape == expected.shape, (option, table.values.shape)
        np.testing.assert_array_equal(table.values, expected, err_msg=option)
        assert table.rows == ["x1", "x2", "x3"], (option, table.rows)


def _options(page: Page) -> list[str]:
    box = _matrix_select(page)
    box.scroll_into_view_if_needed()
    box.click()
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    return [o.strip() for o in options]


# --------------------------------------------------------------------------------------
# The other lessons: the default CSV equals its JSON entry; shapes follow the settings
# --------------------------------------------------------------------------------------
def _check_scaling(page: Page) -> None:
    table = _get_csv(page, "sc")
    trace = _get_json(page, "sc")
    settings = trace["settings"]
    assert (settings["d_k"], settings["samples"], settings["n_keys"]) == (64, 1000, 16)
    n_keys = settings["n_keys"]
    assert table.rows == ["no scaling", "1/√d_k", "1/d_k"]
    assert table.columns == [f"k{j + 1}" for j in range(n_keys)]
    saturation = np.stack([_arr(s["weights"]) for s in trace["saturation"].values()])
    assert saturation.shape == (3, n_keys)
    np.testing.assert_array_equal(table.values, saturation)
    np.testing.assert_allclose(saturation.sum(axis=1), 1.0, atol=1e-12)
    d_ks = trace["curves"]["d_k"]
    assert d_ks == [2**n for n in range(11)]
    for stat in ("max_weight", "entropy", "jacobian_norm"):
        assert all(len(v) == len(d_ks) for v in trace["curves"][stat].values()), stat
    # Section 4 has its own example: one query against its own keys, at every τ.
    sweep = trace["temperature_sweep"]
    assert _arr(sweep["weights"]).shape == (len(sweep["tau"]), sweep["n_keys"])
    np.testing.assert_allclose(_arr(sweep["weights"]).sum(axis=1), 1.0, atol=1e-12)


def _check_masks(page: Page) -> None:
    table = _get_csv(page, "mk")
    trace = _get_json(page, "mk")
    batch, lengths, b = trace["batch"], trace["lengths"], trace["sentence"]
    assert (len(batch), len(batch[0]), lengths, b) == (3, 6, [6, 3, 4], 1)
    assert trace["mask_kind"] == "padding+causal"
    T, length = len(batch[b]), lengths[b]
    # By hand: query i may attend key j when j <= i (causal) and j is real (padding).
    i, j = np.indices((T, T))
    by_hand = ((j <= i) & (j < length)).astype(float)
    assert table.rows == _unique(batch[b]) == ["A", "dog", "barked", "<pad>", "<pad> (2nd)",
                                                "<pad> (3rd)"]
    np.testing.assert_array_equal(table.values, by_hand)
    np.testing.assert_array_equal(_arr(trace["mask"]), by_hand)
    weights = _arr(trace["weights"])
    assert weights.shape == (T, T) and _arr(trace["output"]).shape == (T, 8)
    assert np.all(weights[by_hand == 0] == 0), "a masked weight is not exactly 0"
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)


def _check_multi_head(page: Page) -> None:
    table = _get_csv(page, "mha")
    trace = _get_json(page, "mha")
    tokens, d_model, heads = trace["tokens"], trace["d_model"], trace["heads"]
    assert (len(tokens), d_model, heads, trace["d_k"]) == (11, 32, 4, 8)
    T = len(tokens)
    weights = _arr(trace["weights"])
    assert weights.shape == (heads, T, T)
    for name, shape in {"X": (T, d_model), "W_Q": (d_model, d_model),
                        "W_O": (d_model, d_model), "concat": (T, d_model),
                        "output": (T, d_model)}.items():
        assert _arr(trace[name]).shape == shape, (name, _arr(trace[name]).shape)
    assert table.rows == table.columns == _unique(tokens)
    np.testing.assert_array_equal(table.values, weights[0])  # "Head 1 weights"
    np.testing.assert_allclose(weights.sum(axis=2), 1.0, atol=1e-12)


def _check_positional(page: Page) -> None:
    table = _get_csv(page, "pe")
    trace = _get_json(page, "pe")
    T, d, base = trace["max_len"], trace["d_model"], trace["base"]
    assert (T, d, base) == (64, 64, 10000)
    pe = _arr(trace["pe"])
    assert pe.shape == (T, d) and table.values.shape == (T, d)
    # Positions are counted from 0 on the page, as in the formula; dimensions from 0 too.
    assert table.rows == [str(p) for p in range(T)] and table.columns == [str(c)
                                                                           for c in range(d)]
    np.testing.assert_array_equal(table.values, pe)
    # By hand: PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(the same angle).
    p, i = np.arange(T)[:, None], np.arange(d // 2)[None, :]
    angle = p / base ** (2 * i / d)
    np.testing.assert_allclose(pe[:, 0::2], np.sin(angle), atol=1e-12)
    np.testing.assert_allclose(pe[:, 1::2], np.cos(angle), atol=1e-12)
    assert _arr(trace["rotation"]).shape == (d, d) and len(trace["wavelengths"]) == d // 2


def _check_seq2seq(page: Page) -> None:
    table = _get_csv(page, "s2s")
    trace = _get_json(page, "s2s")
    src, tgt = trace["source"], trace["target"]
    assert (src, tgt) == (["I", "love", "cats"], ["J'", "aime", "les", "chats"])
    alignment = _arr(trace["alignment"])
    assert alignment.shape == (len(tgt), len(src)) == table.values.shape
    assert (table.rows, table.columns) == (_unique(tgt), _unique(src))
    np.testing.assert_array_equal(table.values, alignment)
    np.testing.assert_allclose(alignment.sum(axis=1), 1.0, atol=1e-12)
    assert _arr(trace["contexts"]).shape == (len(tgt), 16)
    assert all(len(w) == len(src) for w in trace["weights_by_score"].values())


def _check_cost(page: Page) -> None:
    table = _get_csv(page, "cost")
    trace = _get_json(page, "cost")
    heads, ns = trace["heads"], trace["ns"]
    assert (heads, trace["d_k"]) == (4, 64)
    assert ns == [64, 128, 256, 512], ns  # every n up to the default largest, 512
    assert table.rows == [f"n={n}" for n in ns]
    col = {name: table.values[:, k] for k, name in enumerate(table.columns)}
    np.testing.assert_array_equal(col["n"], ns)
    np.testing.assert_allclose(col["best time (ms)"], [s * 1e3 for s in trace["best_seconds"]],
                               rtol=1e-15)
    by_hand = [heads * n * n * 8 / 2**20 for n in ns]  # H·n² float64 weights, in MiB
    np.testing.assert_allclose(col["weights H·n² (MiB)"], by_hand, rtol=1e-15)
    assert trace["weights_bytes"] == [heads * n ** 2 * 8 for n in ns]


def _check_learning(page: Page) -> None:
    """Lesson 8 at its defaults: model B's checkpoints, and the loss curves in the trace."""
    table = _get_csv(page, "learn")  # "Sentiment B: checkpoints", the first choice
    assert table.columns[:3] == ["accuracy", "held-out loss", "attention score"]
    steps = [int(r) for r in table.rows]
    assert steps == sorted(steps) and steps[0] == 0
    accuracy, loss = table.values[:, 0], table.values[:, 1]
    assert np.all((0 <= accuracy) & (accuracy <= 1))
    assert loss[-1] < loss[0]  # training lowered the held-out loss
    trace = _get_json(page, "learn")
    assert len(trace["sentiment_loss_B"]) == steps[-1]  # one loss per step
    assert trace["sentiment_checkpoints"] == steps


def _check_pretrained(page: Page) -> None:
    """Lesson 9 at its defaults: the 6 × 12 heads stacked, one row per layer, head and query."""
    table = _get_csv(page, "pre")
    T, L, H = len(table.columns), 6, 12
    assert table.columns[0] == "[CLS]" and table.columns[-1] == "[SEP]"
    assert table.values.shape == (L * H * T, T)
    assert table.rows[0] == "layer 1, head 1 | [CLS]" and table.rows[T] == "layer 1, head 2 | [CLS]"
    assert table.rows[H * T] == "layer 2, head 1 | [CLS]"
    # Every row is a softmax over the T keys.
    np.testing.assert_allclose(table.values.sum(axis=1), 1.0, atol=1e-12)


def _check_language_model(page: Page) -> None:
    """Lesson 10 at its defaults: layer 19's 9 heads stacked, a row per head and query."""
    table = _get_csv(page, "lm")
    T, H = len(table.columns), 9
    assert table.columns == ["The", "␣capital", "␣of", "␣France", "␣is"]
    assert table.values.shape == (H * T, T)
    assert table.rows[0] == "layer 19, head 1 | The" and table.rows[T] == "layer 19, head 2 | The"
    np.testing.assert_allclose(table.values.sum(axis=1), 1.0, atol=1e-6)  # float32 weights
    # causal: in each head's T × T block, nothing above the diagonal
    blocks = table.values.reshape(H, T, T)
    assert np.all(blocks[:, np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)


def _check_inference(page: Page) -> None:
    """Lesson 11 at its defaults: the online softmax's running maximum (48 rows, blocks of
    8), and the measurements in the JSON agree with it."""
    table = _get_csv(page, "inf")
    assert table.values.shape == (48, 6)
    assert table.columns[0] == "keys 1-8" and table.columns[-1] == "keys 41-48"
    trace = _get_json(page, "inf")
    fa = trace["online_softmax"]
    np.testing.assert_allclose(_arr(fa["running_max"]), table.values, rtol=1e-15)
    # the running maximum never falls as blocks arrive (row 1 sees key 1 from block 1 on)
    assert np.all(np.diff(table.values, axis=1) >= 0)
    np.testing.assert_allclose(_arr(fa["output"]), _arr(fa["plain_output"]), atol=1e-12)
    kv = trace["kv_cache"]
    assert kv["ids_cached"] == kv["ids_uncached"]
    held = 2 * 30 * 3 * 64 * kv["contexts"][-1] * 4  # 2 · L · n_KV · d_k · T · 4 bytes
    assert kv["cache_bytes"] == kv["cache_bytes_formula"] == held


def _check_answer(page: Page) -> None:
    """Lesson 12 at its defaults: the head grid (30 layers × 9 heads) as CSV, and the
    JSON's grids, attribution and knockout agree with it."""
    table = _get_csv(page, "ans")
    assert table.values.shape == (30, 9)
    assert table.columns == [f"H{h}" for h in range(1, 10)] and table.rows[0] == "layer 1"
    trace = _get_json(page, "ans")
    np.testing.assert_allclose(_arr(trace["head_recovery"]), table.values, rtol=1e-6)
    # the split adds up: embedding + heads + FFNs (+ biases, 0 for this model) = LD
    parts = (trace["dla_embed"] + np.sum(trace["dla_heads"]) + np.sum(trace["dla_ffn"]))
    assert abs(parts - trace["logit_diff_clean"]) < 1e-4
    best = np.unravel_index(np.argmax(table.values), table.values.shape)
    assert trace["top_heads"][0][:2] == [int(best[0]) + 1, int(best[1]) + 1]  # from 1
    # every window of the default width w, from layers 1..w on: 30 − w + 1 of them
    w = answer.KNOCKOUT_WINDOW
    assert len(trace["knockout"]) == 30 - w + 1 and trace["knockout"][0][:2] == [1, w]


def _check_memory(page: Page) -> None:
    """Lesson 13 at its defaults: the state after the three writes of section 2 as CSV,
    and the JSON's linear read of k₁ agrees with it."""
    table = _get_csv(page, "mem")  # "state after three writes", the first choice
    assert table.values.shape == (2, 3)
    # By hand: v₁k₁ᵀ + v₂k₂ᵀ + v₃k₃ᵀ with k = (1,0,0), (0,1,0), (0.6,0,0.8) and
    # v = (2,0), (0,2), (1,1): row 1 = (2 + 0.6, 0, 0.8), row 2 = (0.6, 2, 0.8).
    np.testing.assert_allclose(table.values, [[2.6, 0.0, 0.8], [0.6, 2.0, 0.8]], atol=1e-12)
    trace = _get_json(page, "mem")
    # S k₁ = the first column of S: (2.6, 0.6)
    np.testing.assert_allclose(_arr(trace["by_hand"]["linear_read"]).ravel(), [2.6, 0.6],
                               atol=1e-12)


CHECKS = {
    "Why_attention": _check_why_attention,
    "Worked_example": _check_worked_example,
    "Scaling": _check_scaling,
    "Masks": _check_masks,
    "Multi_head": _check_multi_head,
    "Positional_encoding": _check_positional,
    "Scoring_and_seq2seq": _check_seq2seq,
    "Cost": _check_cost,
    "Attention_that_learns": _check_learning,
    "Pretrained_model": _check_pretrained,
    "Language_model": _check_language_model,
    "Inference": _check_inference,
    "Attention_for_the_answer": _check_answer,
    "Fixed_size_memory": _check_memory,
}


def test_every_lesson_has_an_export_check():
    missing = [path for _, path in PAGES if path and path not in CHECKS]
    assert not missing, f"lessons without an export check in {Path(__file__).name}: {missing}"
