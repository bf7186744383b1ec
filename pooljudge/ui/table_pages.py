"""A long table drawn one page of rows at a time, with a page box that goes back to page 1 when the filters change.

The whole of a 20,000-pair table would be sent to the browser on every run (each tab switch, each click in the
tab); a page of rows costs the same whatever the collection's size, and the filters above the table still search
every row.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import TypeVar

import streamlit as st

T = TypeVar("T")

PAGE_ROWS = 100
"""Rows on one page of a paged table."""


def page_count(n_rows: int, size: int = PAGE_ROWS) -> int:
    """How many pages ``n_rows`` rows fill (at least one, so that an empty table has page 1 of 1)."""
    return max(1, math.ceil(n_rows / size))


def page_slice(rows: Sequence[T], page: int, size: int = PAGE_ROWS) -> list[T]:
    """The rows on page ``page`` (1-based; a number past the last page gives the last page)."""
    page = min(max(1, page), page_count(len(rows), size))
    return list(rows[(page - 1) * size : page * size])


def paged_rows(rows: Sequence[T], *, key: str, filters: Hashable, size: int | None = None) -> list[T]:
    """The page of ``rows`` chosen in the page box ``key``, drawn above the table when there is more than one page.

    ``filters``: what the rows were filtered with; when it changes the box goes back to page 1 (page 7 of one
    filter's results says nothing about another's).  The caption under the box names the rows on the page;
    ``size`` defaults to :data:`PAGE_ROWS`.
    """
    size = size or PAGE_ROWS
    pages = page_count(len(rows), size)
    seen = f"{key}_filters"
    if st.session_state.get(seen) != filters or st.session_state.get(key, 1) > pages:
        # the box is drawn below: its value may still be set in this run
        st.session_state[key] = 1
    st.session_state[seen] = filters
    if pages == 1:
        st.session_state.pop(key, None)
        return list(rows)
    page = st.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, step=1, key=key)
    first = (page - 1) * size
    st.caption(f"Rows {first + 1:,}-{min(first + size, len(rows)):,} of {len(rows):,}, {size} rows a page.")
    return page_slice(rows, page, size)


OPTIONS_LIMIT = 200
"""Options a choice box offers at once; a longer list gets a search box in front (:func:`matching_options`)."""


def matching_options(container, options: dict[str, str], *, key: str, what: str) -> list[str]:
    """The keys of ``options`` (key -> its text) a choice box offers: all of them, or, past :data:`OPTIONS_LIMIT`,
    those whose key or text contains what the search box ``key`` holds (case-insensitive), the first
    :data:`OPTIONS_LIMIT` of them.

    Every option of a box is sent to the browser on each run: 2,000 queries with their texts would be sent on
    every click in the tab.  ``what`` names the options in the box's label and caption (``queries``).
    """
    if len(options) <= OPTIONS_LIMIT:
        return list(options)
    typed = container.text_input(f"Find {what} (id or text)", key=key).strip().casefold()
    found = [k for k, text in options.items() if typed in k.casefold() or typed in text.casefold()]
    if len(found) > OPTIONS_LIMIT:
        container.caption(f"The first {OPTIONS_LIMIT} of {len(found):,} {what}: type to narrow them down.")
    elif not found:
        shown = min(OPTIONS_LIMIT, len(options))
        container.caption(f"No {what} match this search: the box offers the first {shown:,} of all {len(options):,}.")
        found = list(options)[:OPTIONS_LIMIT]
    return found[:OPTIONS_LIMIT]
