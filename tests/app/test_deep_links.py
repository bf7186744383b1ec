"""Every deep link goes through ``app.py``: for each role, each page's URL opens that page if the role is
offered it and the role's default page otherwise, with ``app.py``'s sidebar (AppTest through the entry point).

The browser half is ``tests/app/test_page_layout_browser.py``: the same URLs typed into Chromium on a fresh
server, logged out, and a page offered and one refused per role.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db.users import add_user
from tests.app.apptest import VIEWS

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

APP = str(Path(__file__).resolve().parents[2] / "app.py")
# url path (Streamlit's, from the file name in views/) -> (the page's own title, the roles app.py offers it to)
PAGES = {
    "pooling": ("Pooling", {"admin"}),
    "home": ("pooljudge", {"admin", "reviewer"}),
    "import_collections": ("Import", {"admin"}),
    "runs": ("Runs and export", {"admin", "reviewer"}),
    "metrics": ("Metrics", {"admin", "reviewer"}),
    "dataset_statistics": ("Dataset statistics", {"admin", "reviewer"}),
    "labelling_simulation": ("Labelling simulation", {"admin", "reviewer"}),
    "errors": ("Error analysis", {"admin", "reviewer"}),
    "annotate": ("Annotate", {"admin", "reviewer", "annotator"}),
    "review": ("Review", {"admin", "reviewer"}),
    "admin": ("Admin", {"admin"}),
    "manage": ("Manage", {"admin"}),
    "models": ("Models", {"admin"}),
}
DEFAULT_TITLE = {"admin": "pooljudge", "reviewer": "pooljudge", "annotator": "Annotate"}
USER_OF_ROLE = {"admin": "admin", "reviewer": "rev1", "annotator": "ann1"}


def test_every_page_is_listed_once():
    """PAGES names every page script in views/ (a new page gets its row here, and so its checks)."""
    assert sorted(PAGES) == sorted(p.stem for p in VIEWS.glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("role", ["annotator", "reviewer", "admin"])
def test_each_page_url_opens_what_the_role_is_offered(db, role):
    """A page the role is offered opens under ``app.py``'s sidebar; any other is not in the role's page registry,
    which is what Streamlit matches a URL against (the browser test sees such a URL land on the default page)."""
    name = USER_OF_ROLE[role]
    with db.write() as s:
        uid = db.admin_id if role == "admin" else add_user(s, name, "correct horse", role).id
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["pooljudge_user_id"] = uid
    at.run()
    assert [t.value for t in at.title] == [DEFAULT_TITLE[role]]
    opened, refused = {}, []
    for path in PAGES:
        try:
            at.switch_page(str(VIEWS / f"{path}.py"))
        except ValueError as exc:
            assert "Could not find a navigation page" in str(exc)
            refused.append(path)
            continue
        at.run()
        assert not at.exception, (path, at.exception)
        # the sidebar's "Logged in as" is written by app.py only: a page run without it has none
        sidebar = [c.value for c in at.sidebar.caption]
        assert f"Logged in as **{name}** ({role})" in sidebar, (path, sidebar)
        opened[path] = [t.value for t in at.title]
    assert opened == {path: [title] for path, (title, roles) in PAGES.items() if role in roles}
    assert refused == [path for path, (_title, roles) in PAGES.items() if role not in roles]
