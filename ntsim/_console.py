"""The ``ntsim`` console script's entry point: :func:`ntsim.cli.main` behind a light import.

Starting the command line takes seconds on a loaded machine (imports, argument parsing).
A Ctrl-C in those seconds used to end in a ``KeyboardInterrupt`` traceback from deep inside
an import or ``argparse``, before the command line's own interrupt handling was in place;
here it ends as every other interrupt does: ``ntsim: interrupted`` and exit status 130.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> int:
    """Import the command line, then run it (:func:`ntsim.cli.main`)."""
    try:
        from ntsim.cli import main as cli_main

        return cli_main()  # handles its own interrupts once its handler is in place
    except KeyboardInterrupt:  # while importing, or parsing the arguments before that
        print("ntsim: interrupted", file=sys.stderr)
        return 130
