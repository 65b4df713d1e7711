"""Script run time of every page after one control change: ``python tests/bench_pages.py``.

Not a test (timings depend on the machine): it prints, for each page, the median
wall time of AppTest reruns after moving its first slider back and forth, at the
page's default settings. AppTest runs the script in this process, so the figure is
the script's own run time without the browser or the network.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def page_scripts() -> list[Path]:
    return [ROOT / "dashboard.py", *sorted((ROOT / "pages").glob("*.py"))]


def rerun_times(script: Path, repeats: int) -> list[float]:
    at = AppTest.from_file(str(script), default_timeout=120)
    at.run()
    sliders = [s for s in at.slider if not s.disabled]
    times = []
    for n in range(repeats):
        start = time.perf_counter()
        if sliders:
            s = sliders[0]
            target = s.max if n % 2 == 0 else s.value  # there and back again
            s.set_value(target if n % 2 == 0 else sliders[0].proto.default[0])
            at.run()
        else:
            at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, [e.value for e in at.exception]
        sliders = [s for s in at.slider if not s.disabled]
    return times


def main(repeats: int = 9) -> None:
    for script in page_scripts():
        times = rerun_times(script, repeats)
        print(f"{script.relative_to(ROOT)}: median rerun {statistics.median(times) * 1e3:.0f} ms "
              f"(min {min(times) * 1e3:.0f}, max {max(times) * 1e3:.0f}, n={len(times)})")


if __name__ == "__main__":
    main()
