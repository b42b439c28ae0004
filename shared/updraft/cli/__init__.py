"""The ``updraft`` command line (console script ``updraft = updraft.cli:main``)."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point; imports click and the commands only when called."""
    from updraft.cli.app import cli

    cli.main(args=argv, prog_name="updraft")
