"""A try's log kept within its size limit (``UPDRAFT_TASK_LOG_MAX_BYTES``), in time linear in what is written.

A try may print without bound; what it keeps is at most ``limit`` UTF-8 bytes: the log's head, one line saying
how many bytes were left out, and its tail (the last ``tail_budget`` bytes: the end of the try, a traceback, the
line saying why a try was ended are there). Below the limit the text is kept whole. Every write only appends to a
list or a deque (and drops from the deque's left), so a write costs its own length whatever was written before;
the text is joined only when it is read (:meth:`CappedLog.text`).

A cut falls between two lines where one ends near it. Where the log is cut, no registered secret is cut in two:
a secret half kept would escape the masking applied to the text afterwards. Each cut moves to the start (head) or
the end (tail) of a secret that would straddle it, for secrets up to ``OVERLAP`` characters long; the kept text is
masked as a whole afterwards, as before.
"""

from __future__ import annotations

from collections import deque

from updraft.config import MIN_TASK_LOG_MAX_BYTES, UpdraftConfig
from updraft.secrets.masker import secret_spans

# Bytes beyond the head and before the tail kept only to see whether a secret straddles a cut (never shown).
OVERLAP = 8 * 1024
# The most the tail keeps; a quarter of a smaller limit.
TAIL_MAX = 1024 * 1024
# How far a cut moves to fall between two lines (a longer line is cut inside).
LINE_ALIGN = 4096
# Room kept for the cut line within the limit (the line is about 200 bytes).
CUT_LINE_RESERVE = 512
# The limit of every log captured or relayed in this process; None: the environment's (``UpdraftConfig``). A try's
# child is given its worker's (the child's environment holds no ``UPDRAFT_*`` setting).
LIMIT: int | None = None


def limit_in_force() -> int:
    return LIMIT if LIMIT is not None else UpdraftConfig.from_env().task_log_max_bytes


def utf8_len(text: str) -> int:
    """``len(text.encode("utf-8"))`` without encoding ASCII text (``isascii`` is O(1)); a lone surrogate (from
    output Python could not decode) counts the 3 bytes it is written as."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _head_chars(text: str, budget: int) -> int:
    """How many characters of ``text`` fit in ``budget`` UTF-8 bytes (never splitting a character)."""
    if text.isascii():
        return min(len(text), budget)
    return len(text.encode("utf-8", "surrogatepass")[:budget].decode("utf-8", "ignore"))


def _tail_chars(text: str, budget: int) -> int:
    """How many characters at the end of ``text`` fit in ``budget`` UTF-8 bytes."""
    if text.isascii():
        return min(len(text), budget)
    data = text.encode("utf-8", "surrogatepass")
    return len(data[max(0, len(data) - budget):].decode("utf-8", "ignore"))


def cut_line(left_out: int, limit: int) -> str:
    return (f"[... {left_out:,} bytes of this try's log left out here: the log passed its limit of {limit:,} bytes "
            f"(UPDRAFT_TASK_LOG_MAX_BYTES); its beginning and its end are kept ...]\n")


class CappedLog:
    """Text appended piece by piece, kept within ``limit`` bytes (see the module notes). Not thread-safe: the
    caller holds its own lock around :meth:`add` (``logs._Buffer``)."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, MIN_TASK_LOG_MAX_BYTES)
        self.tail_budget = min(self.limit // 4, TAIL_MAX)
        self.head_budget = self.limit - self.tail_budget - CUT_LINE_RESERVE
        self.writes = 0  # how many pieces were added (a reader's "has it grown?"; a clear does not reset it)
        self.clear()

    def clear(self) -> None:
        self.head: list[str] = []
        self.head_bytes = 0
        self.tail: deque[str] = deque()
        self.tail_bytes = 0
        self.size = 0  # every byte added since the last clear, kept or not

    @property
    def head_capacity(self) -> int:
        return self.head_budget + OVERLAP

    @property
    def tail_capacity(self) -> int:
        return self.tail_budget + OVERLAP

    def add(self, piece: str) -> None:
        if not piece:
            return
        size = utf8_len(piece)
        self.size += size
        self.writes += 1
        room = self.head_capacity - self.head_bytes
        if room > 0:
            if size <= room:
                self.head.append(piece)
                self.head_bytes += size
                return
            chars = _head_chars(piece, room)
            self.head.append(piece[:chars])
            self.head_bytes += utf8_len(piece[:chars])
            piece = piece[chars:]
            size = utf8_len(piece)
        self.tail.append(piece)
        self.tail_bytes += size
        while self.tail_bytes > self.tail_capacity:
            excess = self.tail_bytes - self.tail_capacity
            first = self.tail[0]
            first_size = utf8_len(first)
            if first_size <= excess:
                self.tail.popleft()
                self.tail_bytes -= first_size
            else:
                kept = first[len(first) - _tail_chars(first, first_size - excess):]
                self.tail[0] = kept
                self.tail_bytes -= first_size - utf8_len(kept)

    def text(self) -> str:
        """The log as kept: whole below the limit, else head, cut line and tail."""
        head, tail = "".join(self.head), "".join(self.tail)
        if self.size <= self.limit:
            return head + tail
        head_end = _head_chars(head, self.head_budget)
        line_end = head.rfind("\n", max(0, head_end - LINE_ALIGN), head_end)
        head_end = line_end + 1 if line_end >= 0 else head_end
        window_start = max(0, head_end - OVERLAP)
        for start, end in secret_spans(head[window_start:]):
            if window_start + start < head_end < window_start + end:
                head_end = window_start + start
                break
        tail_start = len(tail) - _tail_chars(tail, self.tail_budget)
        if tail_start and tail[tail_start - 1] != "\n":
            line_end = tail.find("\n", tail_start, tail_start + LINE_ALIGN)
            tail_start = line_end + 1 if line_end >= 0 else tail_start
        window_end = min(len(tail), tail_start + OVERLAP)
        for start, end in secret_spans(tail[:window_end]):
            if start < tail_start < end:
                tail_start = end
        kept_head, kept_tail = head[:head_end], tail[tail_start:]
        left_out = self.size - utf8_len(kept_head) - utf8_len(kept_tail)
        newline = "" if not kept_head or kept_head.endswith("\n") else "\n"
        return kept_head + newline + cut_line(left_out, self.limit) + kept_tail
