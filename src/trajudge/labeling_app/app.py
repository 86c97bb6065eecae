"""The Streamlit entry file (`trajudge label` runs it): it only assembles the pages."""

from __future__ import annotations

import streamlit as st

from trajudge.labeling_app._pages import pages

st.set_page_config(page_title="trajudge labels", layout="wide")
st.navigation(pages()).run()
