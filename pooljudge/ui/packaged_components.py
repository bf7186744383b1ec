"""The app's ``st.components.v2`` components, each a folder of plain JavaScript in this package."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import streamlit as st


@cache
def packaged_component(name: str) -> Callable[..., Any]:
    """The component ``pooljudge.<name>``, registered once per process: ``main.js`` and ``style.css`` by path in
    its asset folder (``pyproject.toml`` declares it), served from the app's own origin."""
    return st.components.v2.component(
        f"pooljudge.{name}",
        js="main.js",
        css="style.css",
        isolate_styles=False,  # in the page's DOM: the page's keys, text and tests reach it like any element
    )
