"""A parse whose *handling* fails (Updraft's own failure, not the file's import error), injected for the parser
handler's and local mode's retry tests."""

from __future__ import annotations

from typing import Any

import pytest

from updraft.scheduling.commands import dag_registration


def failing_registration(monkeypatch: pytest.MonkeyPatch, times: int | None) -> list[str]:
    """The file's store write raises ``times`` times (None: always), as a throttled table or a bug would; returns
    the files whose registration was attempted, in order."""
    register, calls = dag_registration.register_parsed_file, []

    def register_or_fail(store: Any, parsed: Any, **kwargs: Any) -> Any:
        calls.append(parsed.relative_path)
        if times is None or len(calls) <= times:
            raise RuntimeError(f"injected failure (attempt {len(calls)})")
        return register(store, parsed, **kwargs)

    monkeypatch.setattr(dag_registration, "register_parsed_file", register_or_fail)
    return calls
