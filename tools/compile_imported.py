"""Import, once, what the app, its jobs, the CLI and the test suite import, so that Python writes their bytecode.

``make setup`` installs with ``pip --no-compile``: pip's own compilation writes the bytecode of every module of
every installed package (about 19,000 files, most of them never imported: torch's and transformers' model zoo),
which took about 70 of the 110 CPU-seconds of a fresh ``make setup``.  The modules that are imported, about 4,700,
compile in about 14 CPU-seconds here, once, instead of in each of the first processes that import them (the two
test workers would compile the same files side by side).  A module this script misses is still compiled, by the
first process that imports it.

Usage: python tools/compile_imported.py  (PYTHONDONTWRITEBYTECODE must be unset: the Makefile unexports it)
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIRST_PARTY = ("core", "db", "pooljudge")
# imported inside functions (a model loaded, a job started, a test run), so walking the first-party modules'
# top-level imports does not reach them
LAZY = (
    "torch",
    "transformers",
    "transformers.models.bert.modeling_bert",
    "transformers.models.bert.tokenization_bert",
    "sentence_transformers",
    "faiss",
    "bm25s",
    "rank_bm25",
    "jieba",
    "sklearn.cluster",
    "sklearn.metrics",
    "scipy.stats",
    "statsmodels.api",
    "krippendorff",
    "pandas",
    "plotly.graph_objects",
    "alembic.command",
    "psycopg",
    "streamlit.web.bootstrap",
    "streamlit.testing.v1",
    "playwright.sync_api",
    "pytest",
    "xdist",
)


def first_party_modules() -> list[str]:
    names = []
    for package in FIRST_PARTY:
        names.append(package)
        path = [str(REPO / package)]
        walked = pkgutil.walk_packages(path, prefix=f"{package}.", onerror=lambda _n: None)
        names += [info.name for info in walked if not info.name.endswith(".__main__")]  # that one runs the CLI
    return names


def main() -> int:
    if sys.flags.dont_write_bytecode:
        print("PYTHONDONTWRITEBYTECODE is set: nothing would be written", file=sys.stderr)
        return 1
    sys.path.insert(0, str(REPO))
    from streamlit.logger import set_log_level

    set_log_level("error")  # its caches warn that no server runs: none should
    from pooljudge.ui.warmup import page_imports

    failed = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Streamlit warns about a missing script run context, and others
        for name in [*LAZY, *first_party_modules(), *page_imports(REPO / "views")]:
            try:
                importlib.import_module(name)
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - a module that does not import is compiled when it does
                failed.append(f"{name} ({type(exc).__name__})")
    if failed:
        print(f"not imported (compiled on first use instead): {', '.join(failed)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
