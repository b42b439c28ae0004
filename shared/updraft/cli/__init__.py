"""The ``updraft`` command line (console script ``updraft = updraft.cli:main``)."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point; imports click and the commands only when called.

    The process is made non-dumpable first: it holds the user's credentials or local mode's, and `updraft local`
    and `updraft dags test` serve user code from it (``updraft.process_guard``)."""
    # lazy: this __init__ runs for every updraft.cli module; only main needs it
    from updraft.process_guard import make_undumpable

    make_undumpable()
    # lazy: the process is made undumpable before click and the commands load
    from updraft.cli.app import cli

    cli.main(args=argv, prog_name="updraft")
