"""DAG and task params: a default plus a JSON Schema, validated the way Airflow's ``Param`` validates them.

jsonschema is imported only when a value is validated, so parsing a DAG file that merely declares params stays
cheap.
"""

from __future__ import annotations

import copy
import json
from collections.abc import ItemsView, Iterator, Mapping, MutableMapping, ValuesView
from typing import Any

from updraft.sdk.exceptions import ParamValidationError
from updraft.sdk.notset import NOTSET, ArgNotSet

__all__ = ["NOTSET", "Param", "ParamsDict"]


class Param:
    """A param value with its schema; ``resolve`` returns the value once it passes the schema."""

    CLASS_IDENTIFIER = "__class"

    def __init__(self, default: Any = NOTSET, description: str | None = None, source: str | None = None,
                 **kwargs: Any) -> None:
        if isinstance(default, Param):
            default, description, kwargs = default.value, default.description, {**default.schema, **kwargs}
        self.value: Any = default
        self.description = description
        self.schema = kwargs.pop("schema") if "schema" in kwargs else kwargs
        self.source = source
        if self.value is not NOTSET:
            self._check_json(self.value)

    @staticmethod
    def _check_json(value: Any) -> None:
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise ParamValidationError(
                "All provided parameters must be json-serializable. "
                f"The value '{value}' is not serializable."
            ) from None

    @property
    def has_value(self) -> bool:
        return self.value is not NOTSET and self.value is not None

    def resolve(self, value: Any = NOTSET, suppress_exception: bool = False) -> Any:
        """The final value: ``value`` if given else the default, checked against the schema."""
        import jsonschema
        from jsonschema import FormatChecker

        if value is not NOTSET:
            self._check_json(value)
        final = self.value if value is NOTSET else value
        if isinstance(final, ArgNotSet):
            if suppress_exception:
                return None
            raise ParamValidationError("No value passed and Param has no default value")
        try:
            jsonschema.validate(final, self.schema, format_checker=FormatChecker())
        except jsonschema.ValidationError as err:
            if suppress_exception:
                return None
            raise ParamValidationError(err.message) from None
        return final

    def dump(self) -> dict[str, Any]:
        return {"value": self.value, "description": self.description, "schema": self.schema,
                "source": self.source}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Param) and self.dump() == other.dump()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Param({self.value!r}, description={self.description!r}, schema={self.schema!r})"

    def __copy__(self) -> Param:
        return Param(self.value, self.description, self.source, schema=dict(self.schema))


class ParamsDict(MutableMapping[str, Any]):
    """A mapping of param name to ``Param``; plain values are wrapped, reading gives the (unchecked) value."""

    __slots__ = ("__dict", "suppress_exception")

    def __init__(self, dict_obj: Mapping[str, Any] | None = None, suppress_exception: bool = False) -> None:
        self.__dict: dict[str, Param] = {}
        self.suppress_exception = suppress_exception
        for key, value in (dict_obj or {}).items():
            self.__dict[key] = value if isinstance(value, Param) else Param(value)

    def __setitem__(self, key: str, value: Any) -> None:
        """A plain value for an existing param is checked against its schema first (and kept only if valid)."""
        if isinstance(value, Param):
            self.__dict[key] = value
            return
        if key in self.__dict:
            param = self.__dict[key]
            try:
                resolved = param.resolve(value, suppress_exception=self.suppress_exception)
            except ParamValidationError as err:
                raise ParamValidationError(f"Invalid input for param {key}: {err}") from None
            if resolved is not None or value is None:
                param.value = value
        else:
            self.__dict[key] = Param(value)

    def __getitem__(self, key: str) -> Any:
        """The value, validated (Airflow resolves on read, so an invalid default raises here too)."""
        return self.__dict[key].resolve(suppress_exception=self.suppress_exception)

    def get_param(self, key: str) -> Param:
        return self.__dict[key]

    def __delitem__(self, key: str) -> None:
        del self.__dict[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dict)

    def __len__(self) -> int:
        return len(self.__dict)

    def __contains__(self, key: object) -> bool:
        return key in self.__dict

    def items(self) -> ItemsView[str, Any]:
        return ItemsView(self)

    def values(self) -> ValuesView[Any]:
        return ValuesView(self)

    def params(self) -> dict[str, Param]:
        return dict(self.__dict)

    def update(self, *args: Any, **kwargs: Any) -> None:
        other = dict(*args, **kwargs)
        if isinstance(args[0] if args else None, ParamsDict):
            other = args[0].params()
        for key, value in other.items():
            self[key] = value

    def dump(self) -> dict[str, Any]:
        """Every value, or None where a value is missing or invalid (never raises, like Airflow's)."""
        return {k: v.resolve(suppress_exception=True) for k, v in self.__dict.items()}

    def validate(self) -> dict[str, Any]:
        """Resolve every param; the error names the param that failed."""
        resolved = {}
        for key, param in self.__dict.items():
            try:
                resolved[key] = param.resolve(suppress_exception=self.suppress_exception)
            except ParamValidationError as err:
                raise ParamValidationError(f"Invalid input for param {key}: {err}") from None
        return resolved

    def deep_merge(self, data: Mapping[str, Any] | None) -> ParamsDict:
        params = copy.deepcopy(self)
        if data:
            for key, value in data.items():
                params[key] = value
        return params

    def __deepcopy__(self, memo: dict) -> ParamsDict:
        out = ParamsDict(suppress_exception=self.suppress_exception)
        for key, param in self.__dict.items():
            out[key] = Param(copy.deepcopy(param.value, memo), param.description, param.source,
                             schema=copy.deepcopy(param.schema, memo))
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ParamsDict):
            return self.params() == other.params()
        if isinstance(other, Mapping):
            return self.dump() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ParamsDict({self.dump()!r})"
