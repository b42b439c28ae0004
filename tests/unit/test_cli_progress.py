"""wait_for_run: following a run whose row disappears (deleted while the CLI waits)."""

from __future__ import annotations

import io

from updraft.cli.progress import wait_for_run


class _RunGone:
    def get_run(self, dag_id, run_id):
        return None

    def get_run_tis(self, dag_id, run_id):
        return []


def test_on_a_terminal_a_vanished_run_ends_the_wait_without_a_summary():
    out = io.StringIO()
    assert wait_for_run(_RunGone(), "d", "r", stream=out, tty=True, poll_interval=0.01) is None
    assert out.getvalue() == "\n"
