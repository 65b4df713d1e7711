"""pages.ui.shared.measured: long results computed once per setting, shared between sessions
without computing twice, and a bounded number kept."""

from __future__ import annotations

import threading
import time

from pages.ui import shared


def test_sessions_asking_at_once_wait_for_one_computation():
    calls = []

    def slow() -> int:
        calls.append(1)
        time.sleep(0.3)  # long enough for every thread to arrive while it runs
        return 42

    results = []
    threads = [threading.Thread(target=lambda: results.append(shared.measured(
        "slow", (1,), slow, automatic=True, label="", key="", note=""))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [1]
    assert results == [42] * 4


def test_each_kind_keeps_its_last_results_only():
    for n in range(shared.MAX_KEPT + 3):
        shared.measured("many", (n,), lambda n=n: n, automatic=True, label="", key="", note="")
    shared.measured("other", (0,), lambda: "kept", automatic=True, label="", key="", note="")
    store = shared._shared_results()
    kept = sorted(settings[0] for name, settings in store if name == "many")
    # MAX_KEPT + 3 results of one kind: the first 3 went, the last MAX_KEPT stay.
    assert kept == list(range(3, shared.MAX_KEPT + 3))
    assert store[("other", (0,))] == "kept"  # another kind is not pushed out
