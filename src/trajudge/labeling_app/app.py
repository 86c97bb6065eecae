"""The Streamlit entry file (`trajudge label` runs it): it only assembles the pages.

A store that fails under the app (its file deleted or damaged, the disk full, the database
gone) is shown as a plain message without SQL or server paths, and nothing is "saved": the
store refuses every transaction once its file is no longer the one it opened
(:mod:`trajudge.store._faults`; see :func:`~trajudge.labeling_app._state.shows_store_faults`).
Other errors show only their type (``client.showErrorDetails`` is ``type``, see ``_serve.py``).
"""

from __future__ import annotations

import streamlit as st

from trajudge.labeling_app import _state as S
from trajudge.labeling_app.pages._pages import pages

st.set_page_config(page_title="trajudge labels", layout="wide")
S.shows_store_faults(lambda: st.navigation(pages()).run())()
