"""What the command-line tools share: how their --help reads, and how a missing file is said."""
import argparse
import sys


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The module docstring as written, and every option's default."""


def run(main) -> None:
    """main() as a command: a file that is not there (a data set not fetched: datasets.MissingData names the command
    that gets it) is said in one line, not a traceback."""
    try:
        sys.exit(main())
    except FileNotFoundError as error:
        sys.exit(f"error: {error}")
