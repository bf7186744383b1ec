"""Every deep link runs ``app.py`` first: the page layout decision of issue 13, checked in a real browser.

``app.py`` declares the pages with ``st.navigation`` and is the only place
that shows the login screen and decides which pages a role is offered.  A
URL such as ``/pooling`` must therefore never run a page script without it:
logged out it shows the login screen, and a role that is not offered a page
lands on its own default page instead.  The pages live in ``views/``
because a ``pages/`` folder used to be served by Streamlit on a server's
first request without the entry point (see ``app.py``'s docstring);
:func:`test_a_pages_folder_would_be_served_without_app_py` tries ``/pooling``
on a throwaway copy of the app with the pages moved to ``pages/``, which is
the evidence for (or against) moving them.

Each check starts a fresh server and makes its first request a deep link,
the case that used to bypass the entry point.  One browser session makes
every request (its HTTP cache fetches the app's frontend once): logged out
first, then signed in as each role in turn (on the login screen the page
shows, and out again with the sidebar's Log out button: no page load for
either).  The store holds the accounts
and no collection: every page then shows its title and stops, which is all
these checks read, so a page run costs next to nothing.  Logged out, every
page's URL is tried; logged in, two per role (``ROLE_LINKS``), the rest of
the role-by-page table being ``tests/app/test_deep_links.py``'s (AppTest).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from db.engine import Store, sqlite_url
from tests.app.browser_helpers import (
    ACCOUNTS,
    REPO,
    add_accounts,
    fill_login,
    serve_app,
    sqlite_env,
    wait_for_js,
    wait_for_value,
    wait_idle,
)
from tests.app.test_deep_links import DEFAULT_TITLE, PAGES, USER_OF_ROLE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# per role, the deep links tried after login: a page the role is offered and one it is not (the admin: two
# offered); tests/app/test_deep_links.py checks every page for every role through app.py's page registry
ROLE_LINKS = {"annotator": ("annotate", "review"), "reviewer": ("metrics", "admin"), "admin": ("models", "pooling")}


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    """The servers' environment: a store with one account per role and no collection (set up in-process)."""
    db = tmp_path_factory.mktemp("layout") / "pooljudge.db"
    store = Store(sqlite_url(db))
    with store.write() as s:
        add_accounts(s, {name: ACCOUNTS[name] for name in USER_OF_ROLE.values()})
    store.dispose()
    return sqlite_env(db)


def _pages_folder_copy(target: Path) -> Path:
    """``app.py`` and the page scripts copied to ``target`` with the pages in ``pages/``, as the project card has it."""
    shutil.copytree(REPO / "views", target / "pages", ignore=shutil.ignore_patterns("__pycache__"))
    app = (REPO / "app.py").read_text(encoding="utf-8")
    assert app.count('st.Page("views/') == len(PAGES) + 1  # + the annotator's own default Annotate page
    (target / "app.py").write_text(app.replace('st.Page("views/', 'st.Page("pages/'), encoding="utf-8")
    return target / "app.py"


def _titles(page) -> list[str]:
    return [t.strip() for t in page.locator("h1").all_inner_texts()]


def _settle(page, marker) -> None:
    """Until ``marker`` is shown and Streamlit runs no script (the page is complete)."""
    marker.first.wait_for(timeout=60_000)
    wait_for_js(page, "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)


def _logged_out_problems(page, base: str, paths) -> list[str]:
    problems = []
    for path in paths:  # no cookie yet: each goto is logged out
        title = PAGES[path][0]
        page.goto(f"{base}/{path}")
        login_screen = page.get_by_label("Username")
        try:
            _settle(page, login_screen.or_(page.get_by_text("You do not have access")))
        except Exception as exc:  # noqa: BLE001 - a page that shows neither is a finding, not a crash
            problems.append(f"/{path} logged out: neither the login screen nor a refusal ({type(exc).__name__})")
            continue
        body = page.inner_text("body")
        # settled: the run is over, so what is on the page now is all it shows
        if not login_screen.count():
            problems.append(f"/{path} logged out: no login screen, so app.py did not run ({body[:80]!r})")
        if title != "pooljudge" and title in _titles(page):
            problems.append(f"/{path} logged out: the page itself ran")
    return problems


def _session_cookie(page) -> str | None:
    return next((c["value"] for c in page.context.cookies() if c["name"] == "pooljudge_session"), None)


def _sign_in_here(page, user: str) -> None:
    """Log in as ``user`` on the login screen the page shows (no page load), until the new session's cookie is set."""
    before = _session_cookie(page)  # a signed-out browser may still hold the revoked token's cookie a moment
    fill_login(page, user)
    page.get_by_text(f"Logged in as {user}").wait_for(timeout=60_000)
    wait_for_value(
        lambda: _session_cookie(page) not in (None, before), True, what=f"{user}'s session cookie", timeout=30
    )
    wait_idle(page)


def _role_problems(page, base: str, role: str) -> list[str]:
    """Signed in as ``role`` on the login screen the page shows, the deep links of ``ROLE_LINKS``."""
    problems = []
    user = USER_OF_ROLE[role]
    _sign_in_here(page, user)  # the new session cookie signs every goto below in
    for path in ROLE_LINKS[role]:
        title, roles = PAGES[path]
        page.goto(f"{base}/{path}")
        # the sidebar's "Logged in as" is written by app.py only: a page run without it has none
        expected = title if role in roles else DEFAULT_TITLE[role]
        try:
            _settle(page, page.get_by_text(f"Logged in as {user}"))
            page.locator("h1", has_text=re.compile(f"^{re.escape(expected)}$")).first.wait_for(timeout=60_000)
        except Exception as exc:  # noqa: BLE001
            problems.append(
                f"/{path} as {role}: expected app.py's sidebar and the title {expected!r}, got "
                f"{_titles(page)} ({type(exc).__name__})"
            )
            continue
        if role not in roles and title in _titles(page):
            problems.append(f"/{path} as {role}: a page this role is not offered ran")
    return problems


def _log_out(page) -> None:
    """The sidebar's Log out button, until the login screen is back in the same page."""
    for attempt in range(3):
        # Streamlit's "Page not found" notice, after a deep link to a page the role is not offered, is modal: it
        # makes the page behind it inert until closed (Escape does nothing when it is not open)
        page.keyboard.press("Escape")
        try:
            page.get_by_role("button", name="Log out").click(timeout=15_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    page.get_by_label("Username").wait_for(timeout=60_000)


def deep_link_problems(
    browser_contexts,
    env: dict[str, str],
    script: Path,
    log: Path,
    paths=tuple(PAGES),
    roles=("annotator", "reviewer", "admin"),
) -> list[str]:
    """Every way a deep link to one of ``paths`` reached a page without ``app.py`` running first (empty: none)."""
    problems: list[str] = []
    context = browser_contexts.take()
    try:
        page = context.new_page()
        with serve_app(env, log, timeout=90, script=script) as base:
            problems += _logged_out_problems(page, base, paths)  # the server's first request: paths[0]
            if roles and problems:  # the login screen may be missing: start the roles from a fresh one
                page.context.clear_cookies()
                page.goto(base)
            for n, role in enumerate(roles):  # each on the login screen the previous one left
                if n:
                    _log_out(page)
                problems += _role_problems(page, base, role)
    finally:
        browser_contexts.give_back(context)
    return problems


def test_no_deep_link_bypasses_app_py(browser_contexts, env, tmp_path):
    """The repo's layout (pages in ``views/``): logged out, as an annotator, a reviewer and an admin."""
    problems = deep_link_problems(browser_contexts, env, REPO / "app.py", tmp_path / "streamlit.log")
    assert not problems, "\n".join(problems)


@pytest.mark.canary  # Streamlit's own behaviour, not pooljudge's: runs only with `pytest -m canary`
def test_a_pages_folder_would_be_served_without_app_py(browser_contexts, env, tmp_path):
    """Why the pages are not in ``pages/``: on a copy laid out that way, logged-out deep links skip ``app.py``.

    Streamlit 1.67 still discovers a ``pages/`` folder and, until ``app.py``
    has run once in a session, serves ``/pooling`` from it: no login screen,
    the page's own refusal, and Streamlit's automatic menu of every page.
    When this test fails, Streamlit no longer does that, and the pages can
    move to ``pages/`` (check :func:`test_no_deep_link_bypasses_app_py` on
    the moved layout then).  Only ``/pooling``, the server's first request, is
    asked for: that is the request the bypass happens on.
    """
    script = _pages_folder_copy(tmp_path / "app")
    problems = deep_link_problems(
        browser_contexts, env, script, tmp_path / "streamlit.log", paths=("pooling",), roles=()
    )
    bypassed = [p for p in problems if "app.py did not run" in p]
    assert "/pooling logged out" in " ".join(bypassed), (
        "a pages/ folder no longer bypasses app.py: the pages may move to pages/ (issue 13)\n" + "\n".join(problems)
    )
