"""pooljudge's web server: ``streamlit run serve.py`` (``make run``) serves ``app.py`` with two additions.

``st.App`` (Streamlit's ASGI application) adds a route of our own that sets and
clears the session cookie as HttpOnly (``pooljudge.ui.session_route``: no page
script can read the token) and a Content-Security-Policy on every response.
``streamlit run app.py`` still works, but without them a sign-in lasts only as
long as its tab.  ``POOLJUDGE_APP`` names another app script (the tests serve
copies of ``app.py``).  The pages' imports are loaded in a background thread
when the server starts (``pooljudge.ui.warmup``), so that no first visit of a
page waits for them.
"""

import os
from pathlib import Path

import streamlit as st

from pooljudge.ui import warmup
from pooljudge.ui.session_route import middleware, routes

SCRIPT = Path(os.environ.get("POOLJUDGE_APP") or Path(__file__).resolve().with_name("app.py"))

app = st.App(SCRIPT, routes=routes(), middleware=middleware())
warmup.start()
