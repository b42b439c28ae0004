"""A try's log within its limit, in linear time (issue 34): the worker's relay copied the whole log for every
piece (2 MB 2.2 s, 4 MB 13.8 s, 8 MB 70 s), and a log had no limit."""

from __future__ import annotations

import re
import time

import pytest

from updraft.config import ConfigError, UpdraftConfig
from updraft.model.records import TIKey
from updraft.runtime import log_limit
from updraft.runtime.log_limit import CappedLog, utf8_len
from updraft.runtime.logs import LocalLogSink, RelayedLog, capture
from updraft.secrets.masker import mask_secret, redact_text, reset_masker

CUT = re.compile(r"\[\.\.\. ([\d,]+) bytes of this try's log left out here: the log passed its limit of ([\d,]+) bytes")


def _relay_seconds(total: int, piece: str) -> float:
    """CPU seconds the relay takes to receive ``total`` characters in ``piece``-sized pieces (best of three)."""
    best = float("inf")
    for _ in range(3):
        log = RelayedLog()
        started = time.process_time()
        for _ in range(total // len(piece)):
            log.extend(piece)
        best = min(best, time.process_time() - started)
    return best


def test_the_relay_takes_time_linear_in_the_log_it_receives(monkeypatch):
    """Four times the log costs about four times the time (a copy of the log so far per piece: sixteen)."""
    monkeypatch.setattr(log_limit, "LIMIT", 64 * 1024 * 1024)  # nothing cut: the whole log is kept
    piece = "0123456789abcde\n"
    small, large = _relay_seconds(256 * 1024, piece), _relay_seconds(1024 * 1024, piece)
    assert large / small < 8, (small, large)


def test_a_log_past_its_limit_keeps_its_head_and_tail_and_says_how_many_bytes_were_left_out():
    log = CappedLog(64 * 1024)
    written = 0
    for n in range(20_000):
        line = f"line {n:05d} é{'x' * 30}\n"
        log.add(line)
        written += utf8_len(line)
    text = log.text()
    assert utf8_len(text) <= 64 * 1024
    (cut,) = CUT.finditer(text)
    left_out, limit = (int(group.replace(",", "")) for group in cut.groups())
    assert limit == 64 * 1024
    head, tail = text[:cut.start()], text[text.index("\n", cut.start()) + 1:]
    assert left_out == written - utf8_len(head) - utf8_len(tail)  # every byte is kept or counted
    assert head.startswith("line 00000 ") and tail.endswith("line 19999 é" + "x" * 30 + "\n")
    assert head.endswith("\n") and tail.startswith("line ")  # cut between lines
    assert utf8_len(tail) > 10_000  # the end of the try is there


def test_a_log_within_its_limit_is_kept_whole():
    log = CappedLog(64 * 1024)
    text = "".join(f"{n}: ünïcode\n" for n in range(3000))
    log.add(text[:1000])
    log.add(text[1000:])
    assert utf8_len(text) <= 64 * 1024 and log.text() == text


@pytest.mark.parametrize("where", ["head", "tail"])
def test_a_cut_never_splits_a_secret(where):
    reset_masker()
    secret = "s3cr3t-" + "k" * 300
    mask_secret(secret)
    try:
        log = CappedLog(64 * 1024)
        fill = "a" * (log.head_budget - 100) if where == "head" else "a" * 20_000
        after = "b" * 200_000 if where == "head" else "b" * 200_000 + "c" * (log.tail_budget - 100)
        if where == "head":
            log.add(fill + secret + after)
        else:
            log.add(fill + after[:-log.tail_budget + 100] + secret + after[-log.tail_budget + 100:])
        masked = redact_text(log.text())
        assert "s3cr3t" not in masked and "kkkkkkkk" not in masked
    finally:
        reset_masker()


def test_a_captured_try_keeps_the_configured_limit_and_ends_with_its_end_line(tmp_path, monkeypatch):
    """In-process capture (local mode's threads, ``dags test``) keeps the limit of ``UPDRAFT_TASK_LOG_MAX_BYTES``."""
    monkeypatch.setenv("UPDRAFT_TASK_LOG_MAX_BYTES", str(32 * 1024))
    sink = LocalLogSink(tmp_path)
    key = TIKey("d", "r", "t")
    with capture(sink, key, 1):
        for n in range(10_000):
            print(f"printed {n}")
    stored = sink.read(key, 1)
    assert stored is not None and utf8_len(stored) <= 32 * 1024
    assert CUT.search(stored) and "printed 9999\n" in stored and stored.rstrip().endswith("end of try 1")


def test_the_limit_is_a_setting_with_a_floor():
    assert UpdraftConfig.from_env({}).task_log_max_bytes == 50 * 1024 * 1024
    config = UpdraftConfig.from_env({"UPDRAFT_TASK_LOG_MAX_BYTES": "1000000"})
    assert config.task_log_max_bytes == 1_000_000
    assert UpdraftConfig.from_env(config.to_env()).task_log_max_bytes == 1_000_000
    with pytest.raises(ConfigError, match="at least 16384"):
        UpdraftConfig.from_env({"UPDRAFT_TASK_LOG_MAX_BYTES": "100"})
