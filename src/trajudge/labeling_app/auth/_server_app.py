"""The file `trajudge label` hands to ``streamlit run``: the app (``app.py``) as an ``st.App``
with the Host check in front (``streamlit run`` finds ``app`` here and serves it with
uvicorn). Under single sign-on its ``[auth]`` secrets are built in memory from the ``sso:``
options and the client secret's environment variable or file (``server_secrets`` is None
without it), so no secret is written to disk."""

from __future__ import annotations

from pathlib import Path

from starlette.middleware import Middleware
from streamlit.starlette import App

from trajudge.labeling_app.auth._hosts import HostCheck
from trajudge.labeling_app.auth._sso_options import server_secrets

app = App(
    str(Path(__file__).parent.parent / "app.py"),
    middleware=[Middleware(HostCheck)],
    secrets=server_secrets(),
)
