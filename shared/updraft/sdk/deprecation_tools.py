"""Airflow's ``airflow.utils.deprecation_tools``: a package keeps old import paths of names it moved, each use
warning with ``DeprecatedImportWarning`` (provider packages call ``add_deprecated_classes`` in their
``__init__``)."""

from __future__ import annotations

import functools
import importlib
import sys
import warnings
from types import ModuleType
from typing import Any


class DeprecatedImportWarning(FutureWarning):
    """A name was imported from the old module it moved away from."""


def getattr_with_deprecation(imports: dict[str, str], module: str, override_deprecated_classes: dict[str, str],
                             extra_message: str, name: str, message_override: str = "") -> Any:
    """``module.name`` resolved to where ``imports`` says it moved (``"*"``: every name of a module), warning."""
    target = imports.get(name)
    if not target and "*" in imports and not (name.startswith("__") and name.endswith("__")):
        target = f"{imports['*']}.{name}"
    if not target:
        raise AttributeError(f"The module `{module!r}` has no attribute `{name!r}`")
    shown = override_deprecated_classes.get(name, target) if override_deprecated_classes else target
    if message_override:
        message = message_override.format(module=module, name=name, target=shown)
    else:
        message = f"The `{module}.{name}` attribute is deprecated. Please use `{shown!r}`."
        if extra_message:
            message += f" {extra_message}."
    warnings.warn(message, DeprecatedImportWarning, stacklevel=2)
    new_module, new_name = target.rsplit(".", 1)
    try:
        return getattr(importlib.import_module(new_module), new_name)
    except ImportError as exc:
        error = f"Could not import `{new_module}.{new_name}` while trying to import `{module}.{name}`."
        if extra_message:
            error += f" {extra_message}."
        raise ImportError(error) from exc


def add_deprecated_classes(module_imports: dict[str, dict[str, str]], package: str,
                           override_deprecated_classes: dict[str, dict[str, str]] | None = None,
                           extra_message: str | None = None, message: str | None = None) -> None:
    """Keep the old paths in ``module_imports`` working: a key naming ``package`` itself adds names to it, any
    other key becomes a virtual submodule ``package.<key>`` whose names resolve to their new homes."""
    overrides = override_deprecated_classes or {}
    for module_name, imports in module_imports.items():
        full_name = package if module_name == package else f"{package}.{module_name}"
        getattr_func = functools.partial(getattr_with_deprecation, imports, full_name,
                                         overrides.get(module_name, {}), extra_message or "",
                                         message_override=message or "")
        if module_name == package:
            if package not in sys.modules:
                raise ValueError(f"Module {package} not found in sys.modules")
            sys.modules[package].__getattr__ = getattr_func  # type: ignore[method-assign]
        else:
            virtual = ModuleType(full_name)
            virtual.__getattr__ = getattr_func  # type: ignore[method-assign]
            sys.modules.setdefault(full_name, virtual)
