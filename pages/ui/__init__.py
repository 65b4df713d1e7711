"""Code shared by the pages: setup and layout, figures, tables and downloads.

Imports go one way: attncore <- pages.ui <- the pages and dashboard.py.

pandas and Plotly are imported here in full, before any page code can run. Streamlit
runs each browser session's script in its own thread: on a freshly started server one
session can still be importing pandas while another builds a Plotly figure, and Plotly
looks pandas up in ``sys.modules`` without waiting for its import to finish ("partially
initialized module 'pandas' has no attribute 'Series'"). A thread importing this package
waits for any import of it still under way, and this package waits for pandas.
``tests/pages/test_first_runs_at_once.py`` makes that race certain and checks it.
"""

import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401
