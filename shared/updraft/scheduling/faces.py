"""How a face of ``updraft.scheduling`` hands out its names: each on first use, from the module that holds it.

A face (``updraft.scheduling``, ``updraft.scheduling.decisions``, ``updraft.scheduling.commands``) is the only part
of scheduling that code outside it imports. It lists its names in ``__all__`` and their homes in a table; importing
the face loads none of them, so a handler that asks a face for one name loads that name's module alone, as importing
the module did (cold start: the parser must not load the scheduler's pass to register a DAG file). The face's
``if TYPE_CHECKING:`` block imports the same names, so mypy sees their real types.

A face never exports a name equal to one of its package's submodules: once that submodule is imported, Python sets
the package's attribute to the module and the face's ``__getattr__`` is no longer asked (``test_faces`` checks).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_names(face: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``face`` that loads each name of ``homes`` from its home on first use.

    ``homes`` maps a name to ``"module"`` (the attribute of the same name) or ``"module:attribute"`` (the face gives
    the attribute another name, where two modules use one name or a name is a submodule's).
    """

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        return getattr(importlib.import_module(module), attribute or name)

    return __getattr__
