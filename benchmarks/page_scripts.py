"""Script run time and figure size of every page: ``python -m benchmarks.page_scripts``.

Not a test (timings depend on the machine): for each page, at its defaults and at the
largest settings it allows, it prints the median wall time of AppTest reruns after
moving one slider there and back, and the bytes of the largest Plotly figure the page
sends. AppTest runs the script in this process, so the time is the script's own,
without the browser or the network.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LONG = " ".join(f"word{i}" for i in range(30))
#: The largest settings each page allows (query parameters of its link).
LARGEST = {
    "dashboard.py": {},
    "1_Worked_example.py": {"we_preset": "Random", "we_tokens": "6", "we_dk": "4",
                            "we_dv": "4", "we_decimals": "6", "we_causal": "true"},
    "2_Scaling.py": {"sc_dk": "1024", "sc_samples": "10000", "sc_trials": "200",
                     "sc_nkeys": "64", "sc_sigma2": "4.0"},
    "3_Masks.py": {"mk_text": "\n".join([LONG] * 4), "mk_mask": "padding+causal"},
    "4_Multi_head.py": {"mha_dmodel": "128", "mha_heads": "128", "mha_sentence": LONG},
    "5_Positional_encoding.py": {"pe_len": "512", "pe_dmodel": "512", "pe_heads": "16",
                                 "pe_sentence": LONG},
    "6_Scoring_and_seq2seq.py": {"s2s_source": LONG, "s2s_target": LONG, "s2s_window": "20"},
    "7_Cost.py": {"cost_max_n": "2048", "cost_heads": "4", "cost_repeats": "3"},
    # Lessons 10 and 11: the longest prompts their text boxes take (96 prompt tokens are
    # read on lesson 10) and the most tokens lesson 11 writes twice.
    "10_Language_model.py": {"lm_prompt": ((LONG + " ") * 4)[:600]},
    "11_Inference.py": {"inf_prompt": ((LONG + " ") * 2)[:300], "inf_steps": "24"},
}


def page_scripts() -> list[Path]:
    return [ROOT / "dashboard.py", *sorted((ROOT / "pages").glob("*.py"))]


def largest_figure_bytes(at: AppTest) -> int:
    return max((len(chart.proto.spec) for chart in at.get("plotly_chart")), default=0)


def rerun_times(script: Path, query: dict, repeats: int) -> tuple[list[float], int]:
    """Median-able rerun times after moving the first enabled slider, and figure bytes."""
    at = AppTest.from_file(str(script), default_timeout=300)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    figure_bytes = largest_figure_bytes(at)
    times = []
    for _ in range(repeats):
        sliders = [s for s in at.slider if not s.disabled]
        start = time.perf_counter()
        if sliders:
            s = sliders[0]
            low, high = s.min, s.max
            s.set_value(low if s.value != low else high)  # move it, there and back
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, [e.value for e in at.exception]
        figure_bytes = max(figure_bytes, largest_figure_bytes(at))
    return times, figure_bytes


def main(repeats: int = 7) -> None:
    print(f"{'page':32} {'defaults':>16} {'largest':>16} {'largest figure':>16}")
    for script in page_scripts():
        default_times, default_bytes = rerun_times(script, {}, repeats)
        big_times, big_bytes = rerun_times(script, LARGEST.get(script.name, {}), repeats)
        print(f"{script.name:32} {statistics.median(default_times) * 1e3:13.0f} ms "
              f"{statistics.median(big_times) * 1e3:13.0f} ms "
              f"{max(default_bytes, big_bytes) / 1024:13.1f} KB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.page_scripts",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="reruns a setting (median)")
    main(parser.parse_args().repeats)
