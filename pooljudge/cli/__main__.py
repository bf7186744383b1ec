"""``python -m pooljudge.cli``: the ``pooljudge`` command line (as the background jobs start it)."""

import sys

from pooljudge.cli import main

sys.exit(main())
