"""Issue 23: ``pooljudge/cli/`` is one module per command, each registered in ``COMMANDS``.

A command module has ``add_parser(subparsers)`` (registering exactly one subcommand) and ``run(args)``;
besides them the package holds only ``__init__``, ``__main__`` and ``common``.  ``pooljudge --help`` lists
every command, and no module of the package nears the 800-line limit of issue 23.
"""

from __future__ import annotations

import argparse
import pkgutil
from pathlib import Path

import pytest

import pooljudge.cli as cli
from pooljudge.cli import COMMANDS, build_parser, main

NOT_COMMANDS = {"common", "__main__"}
EXPECTED = [
    "import",
    "export",
    "eval",
    "level",
    "index",
    "retrieve",
    "pool",
    "job",
    "train",
    "models",
    "assign",
    "freeze",
    "leakage",
    "simulate-labelling",
    "user",
    "archive",
    "restore",
    "rename",
    "archived",
    "collections",
    "demo",
    "formats",
    "db",
    "lexicon",
]


def _registered(module) -> list[str]:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    module.add_parser(sub)
    return list(sub.choices)


def test_every_module_is_a_registered_command_or_the_shared_one() -> None:
    modules = {info.name for info in pkgutil.iter_modules(cli.__path__)}
    commands = {module.__name__.rpartition(".")[2] for module in COMMANDS}
    assert modules - NOT_COMMANDS == commands
    assert len(COMMANDS) == len(commands) == 24  # no module listed twice


def _handlers(parser: argparse.ArgumentParser) -> set:
    """The ``func`` a subcommand runs: its own default, or those of its actions (``lexicon add``, ...)."""
    if parser.get_default("func") is not None:
        return {parser.get_default("func")}
    nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {f for action in nested for p in action.choices.values() for f in _handlers(p)}


def test_each_command_module_registers_exactly_one_subcommand_that_runs_its_run() -> None:
    names = []
    for module in COMMANDS:
        registered = _registered(module)
        assert len(registered) == 1, (module.__name__, registered)
        names += registered
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        module.add_parser(sub)
        assert _handlers(sub.choices[registered[0]]) == {module.run}, module.__name__
    assert names == EXPECTED  # COMMANDS is in --help order


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    listed = out.split("{", 1)[1].split("}", 1)[0].split(",")
    assert listed == EXPECTED
    for name in EXPECTED:
        assert f"\n    {name} " in out or f"\n    {name}\n" in out, name  # each with its help line
    assert build_parser().prog == "pooljudge"


def test_export_usage_errors_exit_2_with_argparse_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.db"
    for args, message in (
        (["export", "run", "-c", "toy"], "export run needs --run NAME"),
        (["export", "beir", "-c", "toy"], "export beir needs --output FOLDER"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(["--db", str(db), *args])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("usage: pooljudge ")
        assert err.rstrip().endswith(f"pooljudge: error: {message}")
    assert not db.exists()  # refused before the store is opened


def test_no_cli_module_over_300_lines() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in Path(cli.__file__).parent.glob("*.py")}
    assert len(sizes) == 27
    assert {name: n for name, n in sizes.items() if n > 300} == {}
