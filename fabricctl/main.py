"""Entry point of ``fabricctl``: ``controller.cli`` with the experiment commands plugged in.

The controller sits below ``experiments`` (an experiment drives the controller), so the
controller's CLI cannot import them; this module sits above both and hands the experiment
commands to it (``controller.cli.main(argv, plugins)``).
"""

from __future__ import annotations

import argparse
import sys

from controller import cli
from experiments import cli as experiment_cli
from experiments import sweep, tune

PLUGINS = (experiment_cli, sweep, tune)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line as installed (the controller's commands and the plugins')."""
    return cli.build_parser(PLUGINS)


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, PLUGINS)


if __name__ == "__main__":
    sys.exit(main())
