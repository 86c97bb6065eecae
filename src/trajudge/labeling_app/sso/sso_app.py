"""The entry file `trajudge label` runs when single sign-on is on: the same app (``app.py``)
served as an ``st.App`` whose ``[auth]`` secrets are built in memory from the ``sso:`` options
and the client secret's environment variable or file, so no secret is written to disk."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from trajudge.core import InputError
from trajudge.labeling_app.sso._options import ENV_SSO, server_secrets

_secrets = server_secrets()
if _secrets is None:
    raise InputError(ENV_SSO, reason="not set: this entry file serves the app with single sign-on")
app = st.App(Path(__file__).parent.parent / "app.py", secrets=_secrets)
