"""Run the ``pooljudge`` command line in a test, the way a user types it."""

from __future__ import annotations

from pooljudge.cli import main


def run_cli(url: str, command: str, *args: object) -> int:
    """``pooljudge --db URL -q COMMAND ARGS``: the exit status.

    ``command`` is split on spaces (``"pool -c toy --name p"``); ``args`` follow as given (a path, an f-string,
    a value with spaces), each through ``str``.
    """
    return main(["--db", url, "-q", *command.split(), *(str(a) for a in args)])
