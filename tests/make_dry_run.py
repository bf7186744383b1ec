"""What a ``make`` target would run, read from ``make --dry-run`` (the recipes, not the Makefile's text)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# set by a `make` that runs the suite (`make test`): a make started under them prints "Entering directory"
# lines and inherits that run's flags
MAKE_VARIABLES = ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")


def dry_run_steps(target: str, venv: Path) -> list[str]:
    """The commands ``make TARGET`` would run in a checkout whose ``.venv`` is ``venv`` and absent, in order."""
    env = {name: value for name, value in os.environ.items() if name not in MAKE_VARIABLES}
    done = subprocess.run(
        ["make", "--dry-run", "--always-make", "--no-print-directory", target, f"VENV={venv}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [line.strip() for line in done.stdout.splitlines() if line.strip() and not line.lstrip().startswith("#")]
