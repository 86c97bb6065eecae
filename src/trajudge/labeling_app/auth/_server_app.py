"""The file `trajudge label` hands to ``streamlit run``: the app (``app.py``) as an ``st.App``
with the Host check in front (``streamlit run`` finds ``app`` here and serves it with
uvicorn)."""

from __future__ import annotations

from pathlib import Path

from starlette.middleware import Middleware
from streamlit.starlette import App

from trajudge.labeling_app.auth._hosts import HostCheck

app = App(str(Path(__file__).parent.parent / "app.py"), middleware=[Middleware(HostCheck)])
