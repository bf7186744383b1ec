"""Cached heavy objects and safe rendering helpers for the Streamlit pages."""

from __future__ import annotations

import re

import streamlit as st

from db.engine import Store
from pooljudge.seed import ensure_demo

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&$])")


@st.cache_resource(show_spinner="Opening the store...")
def get_store() -> Store:
    """The process-wide store; the demo collection is loaded into an empty store the first time."""
    store = Store()
    ensure_demo(store)
    return store


def collections_or_stop(store: Store) -> list:
    """The store's collections (:class:`db.queries.CollectionInfo`); on an empty store the page says so and stops."""
    from db.queries import list_collections

    with store.read() as session:
        collections = list_collections(session)
    if not collections:
        st.info("No collections yet: import one first.")
        st.stop()
    return collections


def md_escape(text: str) -> str:
    """Escape untrusted text for ``st.markdown`` so it renders literally (no links, HTML or formatting)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def fmt_float(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"
