"""Code shared by the pages: setup and layout, figures, tables and downloads.

Imports go one way: attncore <- pages.ui <- the pages and dashboard.py.

pandas and Plotly are imported here in full, before any page code can run. Streamlit
runs each browser session's script in its own thread: on a freshly started server one
session can still be importing pandas while another builds a Plotly figure, and Plotly
looks pandas up in ``sys.modules`` without waiting for its import to finish ("partially
initialized module 'pandas' has no attribute 'Series'"). An ``import pandas`` waits for an
import of it still under way in another thread; but importing ``pages.ui.figures`` does
not wait for another thread still running this ``__init__``, so ``figures.py``, the module
that calls Plotly, imports pandas itself too. ``tests/pages/test_first_runs_at_once.py``
makes both races certain and checks them.
"""

import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401
