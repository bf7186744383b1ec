"""Run the ``pooljudge`` command line in a test, the way a user types it, in the test's own process."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from pooljudge.cli import main


def run_cli(url: str, command: str, *args: object) -> int:
    """``pooljudge --db URL -q COMMAND ARGS``: the exit status.

    ``command`` is split on spaces (``"pool -c toy --name p"``); ``args`` follow as given (a path, an f-string,
    a value with spaces), each through ``str``.
    """
    return main(["--db", url, "-q", *command.split(), *(str(a) for a in args)])


@dataclass(frozen=True)
class CliRun:
    """What a ``pooljudge`` command did: its exit status and what it printed."""

    status: int
    stdout: str
    stderr: str


def run_captured(argv: Sequence[str], env: Mapping[str, str | None]) -> CliRun:
    """``pooljudge ARGV`` run by :func:`pooljudge.cli.main` in this process, as a subprocess would run it.

    ``env`` holds the environment variables of the call (a value ``None`` removes the variable), restored when
    it returns; stdout and stderr are captured; argparse's exit (a usage error: status 2) is an exit status.
    """
    out, err = io.StringIO(), io.StringIO()
    with _environ(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exc:  # raised by argparse only, after it printed its message
            status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return CliRun(status, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _environ(changes: Mapping[str, str | None]) -> Iterator[None]:
    # only the named variables change and come back: unittest.mock.patch.dict would empty the whole environment
    # for a moment when restoring it, under the feet of the test process's other threads (Playwright's)
    saved = {name: os.environ.get(name) for name in changes}
    try:
        _apply(changes)
        yield
    finally:
        _apply(saved)


def _apply(values: Mapping[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
