"""The README serves a user who has only the repository; pyproject.toml builds without deprecation warnings."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

from tests.make_dry_run import dry_run_steps

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_first_two_commands_are_make_run_and_make_test():
    first = re.search(r"```bash\n(.*?)```", README, re.S).group(1).splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make run", "make test"]
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    run_target = re.search(r"^run:(.*)$", makefile, re.M)
    assert run_target and run_target.group(1).split() == ["setup"]


def test_make_test_sets_up_lints_and_installs_the_system_packages_before_the_tests(tmp_path):
    """What ``make test`` would run in a checkout without ``.venv`` (``make --dry-run``), in order."""
    steps = dry_run_steps("test", tmp_path)
    assert steps[-1] == f"OMP_NUM_THREADS=1 {tmp_path}/bin/python -m pytest -q -n auto --dist loadgroup"
    before = "\n".join(steps[:-1])
    for step in ("-m venv", "compile_imported.py", "/bin/ruff check .", "/bin/mypy", "/bin/lint-imports", "apt-get"):
        assert step in before, step


def test_every_relative_link_points_into_the_repository():
    targets = re.findall(r"\]\(([^)#]+)\)", README) + re.findall(r"`((?:\.\./|docs/)[^`]+)`", README)
    assert "docs/architecture.md" in targets
    for target in targets:
        if "://" in target:
            continue
        assert not target.startswith("../"), target
        assert (REPO / target).exists(), target


def test_cli_examples_say_how_to_reach_the_venv_and_make_run_its_variables():
    command_line = README[README.index("## Command line") :]
    assert "source .venv/bin/activate" in command_line[:600] and ".venv/bin/pooljudge" in command_line[:600]
    assert "make run PORT=8502 POOLJUDGE_DB=" in README
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    defaults = makefile_defaults(makefile)
    assert defaults["PORT"] == ("8501", False)
    assert defaults["POOLJUDGE_DB"] == ("$(CURDIR)/data/pooljudge.db", True)  # exported: the app and CLI read it
    assert "torch==2.13.0" in makefile and "torch==2.13.0" in README and "CUDA build" in README


def makefile_defaults(makefile: str) -> dict[str, tuple[str, bool]]:
    """``{name: (value, exported)}`` of the Makefile's ``NAME ?= value`` lines, whatever their spacing."""
    found = re.findall(r"^(export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*\?=[ \t]*(.*?)[ \t]*$", makefile, re.M)
    return {name: (value, bool(export)) for export, name, value in found}


def test_makefile_defaults_are_read_whatever_their_spacing():
    text = "PORT ?=8501\nexport  POOLJUDGE_DB\t?= /x/y.db  \nPYTHON?=python3\nrun: setup\n"
    assert makefile_defaults(text) == {
        "PORT": ("8501", False),
        "POOLJUDGE_DB": ("/x/y.db", True),
        "PYTHON": ("python3", False),
    }


def test_pyproject_applies_without_a_deprecation_warning(monkeypatch):
    """What `pip install -e .` runs: the old `license = {text = ...}` table warned there, four times."""
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    monkeypatch.chdir(REPO)  # license-files are found relative to the project folder
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SetuptoolsDeprecationWarning included
        dist = apply_configuration(Distribution(), REPO / "pyproject.toml")
    assert (dist.metadata.license_expression, dist.metadata.license_files) == ("Apache-2.0", ["LICENSE"])
    assert (REPO / "LICENSE").read_text(encoding="utf-8").split()[:3] == ["Apache", "License", "Version"]


def test_make_test_installs_the_missing_system_packages_in_one_update_and_one_install():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    prerequisites = re.search(r"^test: (.*)$", makefile, re.M).group(1).split()
    assert prerequisites == ["prepare"]
    prepare = re.search(r"^prepare:\n\t(.*)\n", makefile, re.M).group(1).split()
    assert {"-j3", "setup", "lint", "system-packages"} <= set(prepare)  # side by side, before the tests
    recipe = re.search(r"^system-packages:\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert recipe.count("apt-get update") == 1
    assert recipe.count("apt-get install") == 2  # the required packages, then the optional headless shell
    for package in ("chromium", "fonts-noto-cjk", "postgresql", "sqlite3"):
        assert f'missing="$$missing {package}"' in recipe, package
