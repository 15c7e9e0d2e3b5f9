"""Entry point of ``fabricctl`` (the console script and ``python -m fabricctl``)."""

from __future__ import annotations

import sys

from controller import cli
from experiments import sweep, tune

# Modules above the controller that add commands: each has add_parser(subparsers) and COMMANDS.
PLUGINS = (sweep, tune)


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, PLUGINS)


if __name__ == "__main__":
    sys.exit(main())
