"""The latest results of page sections that rerun alone (``st.fragment``), for downloads."""

from __future__ import annotations

import numpy as np


def keep(results: dict, name: str, value) -> None:
    """Record a section's latest ``value`` under ``name`` in ``results``.

    A section inside ``st.fragment`` reruns alone when its own controls move; the
    download buttons at the end of the page are not redrawn then, and build their files
    from the objects they were given at the last full run. So ``results`` (the dict
    they hold as the trace) is updated, never replaced, and an array already kept with
    the same shape and type is overwritten in place: a download always carries what
    the page shows.
    """
    old = results.get(name)
    if (isinstance(old, np.ndarray) and isinstance(value, np.ndarray)
            and old.shape == value.shape and old.dtype == value.dtype):
        old[...] = value
    else:
        results[name] = value
