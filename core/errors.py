"""Errors raised by strict readers and validators."""

from __future__ import annotations

import os


class FormatError(ValueError):
    """A problem in an input file, located by file and line.

    Parameters
    ----------
    path : str or os.PathLike
        The file as the user named it.
    line : int or None
        1-based line number; ``None`` for problems with the file as a whole
        (missing, unreadable).
    message : str
        What was wrong and what was expected.
    """

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str) -> None:
        self.path = os.fspath(path)
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"

    def __reduce__(self) -> tuple[type[FormatError], tuple[str, int | None, str]]:  # picklable across processes
        return (type(self), (self.path, self.line, self.message))
