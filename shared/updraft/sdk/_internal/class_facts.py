"""Facts about an operator class, worked out once per class and kept on the class itself.

Every task a DAG file builds asks them (several times a task), and a try's child builds every task of its file
again. Kept in the class's own ``__dict__`` (not inherited: a subclass works out its own), so the lookup is a
plain one, and a class a DAG file defines takes its facts with it when it goes (a module-level cache would have
to hold classes weakly, and a ``WeakKeyDictionary`` lookup is Python code).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def known_per_class(cls: type, name: str, work_out: Callable[[type], T]) -> T:
    """``work_out(cls)``, the first time ``cls`` is asked; ``name`` is where the class keeps it."""
    found: T | None = cls.__dict__.get(name)
    if found is None:
        found = work_out(cls)
        setattr(cls, name, found)
    return found
