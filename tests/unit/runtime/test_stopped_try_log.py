"""A worker stopped while it waits for its try's child writes the log the child had already sent.

The child sends what the try prints in pieces; a stop (``logs.write_open_logs``, from a SIGTERM handler that
interrupted the worker's wait) used to write only the pieces the worker had read, so a line printed just before
the stop, still on the socket, was lost. The stop is played here by the wait itself, at the moment a signal
would land: the pieces are already on the socket and nobody read them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from multiprocessing import Pipe
from pathlib import Path

import pytest

from updraft.model.records import TIKey
from updraft.runtime import logs
from updraft.runtime.store_proxy import TryScope
from updraft.runtime.supervisor import TaskSupervisor

KEY = TIKey("talker", "stopped", "talk")
SCOPE = TryScope(KEY, "try-1", lambda: dt.datetime.now(dt.UTC), try_number=1)


class Stopped(Exception):
    """What the SIGTERM handler's ``os._exit`` is here: the wait never returns."""


def test_a_stop_during_the_wait_writes_the_pieces_already_on_the_socket(tmp_path: Path, monkeypatch) -> None:
    ours, theirs = Pipe()
    theirs.send_bytes(json.dumps({"piece": "halfway through the work\n"}).encode())
    theirs.send_bytes(json.dumps({"piece": "and a little more\n"}).encode())
    theirs.send_bytes(json.dumps({"call": "get_variable", "args": {}}).encode())
    theirs.send_bytes(json.dumps({"piece": "after the call: not sent before its answer\n"}).encode())

    def stopped_while_waiting(connection, deadline, lost):
        logs.write_open_logs("the process running this try was stopped (SIGTERM) before the try ended")
        raise Stopped

    monkeypatch.setattr(TaskSupervisor, "_wait", staticmethod(stopped_while_waiting))
    sink = logs.LocalLogSink(tmp_path)
    with logs.relay(sink, KEY, 1) as relayed, pytest.raises(Stopped):
        TaskSupervisor()._serve(ours, 0, None, SCOPE, relayed, None, None)  # type: ignore[arg-type]

    written = sink.read(KEY, 1)
    assert written is not None
    assert re.fullmatch(r"halfway through the work\nand a little more\n\[[^]]+\] the process running this try was "
                        r"stopped \(SIGTERM\) before the try ended\n", written), written


def test_once_the_child_answered_a_stop_reads_nothing_from_the_socket(tmp_path: Path) -> None:
    """Only an interrupted wait leaves the socket to the stop: anywhere else the serving loop may be halfway
    through a message."""
    ours, theirs = Pipe()
    theirs.send_bytes(json.dumps({"piece": "done\n"}).encode())
    theirs.send_bytes(json.dumps({"result": {"state": "success"}}).encode())
    sink = logs.LocalLogSink(tmp_path)
    with logs.relay(sink, KEY, 1) as relayed:
        assert TaskSupervisor()._serve(ours, 0, None, SCOPE, relayed, None, None) == {"state": "success"}  # type: ignore[arg-type]
        theirs.send_bytes(json.dumps({"piece": "late\n"}).encode())
        assert relayed.catch_up is not None
        relayed.catch_up()
        assert ours.poll(0), "the catch-up read the socket outside the wait"
    assert sink.read(KEY, 1) == "done\n"
