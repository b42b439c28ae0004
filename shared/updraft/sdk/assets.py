"""Assets (Airflow 2's Datasets): named data that tasks produce (``outlets``) and DAGs may be scheduled on.

Validation and URI normalisation follow Airflow 3 so that two spellings of one asset compare equal here exactly
when they do in Airflow; ``as_expression()`` gives the JSON form Airflow stores for asset schedules, which is
what Updraft serializes.
"""

from __future__ import annotations

import inspect
import logging
import os
import urllib.parse
import warnings
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from updraft.sdk.exceptions import UnsupportedFeatureError

__all__ = [
    "Asset",
    "AssetAlias",
    "AssetAll",
    "AssetAny",
    "AssetNameRef",
    "AssetRef",
    "AssetUriRef",
    "AssetWatcher",
    "BaseAsset",
    "Dataset",
    "Metadata",
    "Model",
]

MAX_IDENTIFIER_LEN = 1500


def _s3_normalizer(parts: urllib.parse.SplitResult) -> urllib.parse.SplitResult:
    # The Amazon provider's rule; Updraft runs on AWS, so s3:// assets must be checked as there.
    if not parts.netloc:
        raise ValueError("URI format s3:// must contain a bucket name")
    return parts


# Scheme -> normaliser. In Airflow providers register these; only the ones an AWS deployment relies on are here.
_URI_NORMALIZERS: dict[str, Callable[[urllib.parse.SplitResult], urllib.parse.SplitResult]] = {
    "file": lambda parts: parts,
    "s3": _s3_normalizer,
}


def _sanitize_uri(value: Any) -> str:
    """Airflow's URI sanitising: lower-case scheme, no credentials, sorted query, no fragment or trailing slash."""
    uri = str(value)
    parsed = urllib.parse.urlsplit(uri)
    if not parsed.scheme and not parsed.netloc:  # Not a URI at all: a plain name is fine.
        return uri
    scheme = parsed.scheme.lower()
    if not scheme or scheme.startswith("x-"):
        return uri
    if scheme == "airflow":
        raise ValueError("Asset scheme 'airflow' is reserved")
    netloc = parsed.netloc
    if parsed.password:
        warnings.warn(
            "An Asset URI should not contain a password. User info has been automatically dropped.",
            UserWarning,
            stacklevel=4,
        )
        netloc = netloc.rpartition("@")[2]
    query = urllib.parse.urlencode(sorted(urllib.parse.parse_qsl(parsed.query))) if parsed.query else ""
    parsed = parsed._replace(scheme=scheme, netloc=netloc, path=parsed.path.rstrip("/") or "/", query=query,
                             fragment="")
    normalizer = _URI_NORMALIZERS.get(scheme)
    if normalizer is not None:
        parsed = normalizer(parsed)
    return urllib.parse.urlunsplit(parsed)


def _validate_identifier(owner: str, field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{owner} {field} must be a string")
    if len(value) > MAX_IDENTIFIER_LEN:
        raise ValueError(f"{owner} {field} cannot exceed {MAX_IDENTIFIER_LEN} characters")
    if value.isspace():
        raise ValueError(f"{owner} {field} cannot be just whitespace")
    return value


def _validate_non_empty_identifier(owner: str, field: str, value: Any) -> str:
    if not _validate_identifier(owner, field, value):
        raise ValueError(f"{owner} {field} cannot be empty")
    return value


class BaseAsset:
    """Anything that can appear in an asset schedule: ``&`` and ``|`` combine them as Airflow does."""

    def __bool__(self) -> bool:
        return True

    def __or__(self, other: BaseAsset) -> BaseAsset:
        if not isinstance(other, BaseAsset):
            return NotImplemented
        return AssetAny(self, other)

    def __and__(self, other: BaseAsset) -> BaseAsset:
        if not isinstance(other, BaseAsset):
            return NotImplemented
        return AssetAll(self, other)

    def as_expression(self) -> Any:
        """The JSON-able scheduling expression (Airflow's ``DagModel.asset_expression`` shape)."""
        raise NotImplementedError

    def iter_assets(self) -> Iterator[tuple[tuple[str, str], Asset]]:
        return iter(())

    def iter_asset_aliases(self) -> Iterator[tuple[str, AssetAlias]]:
        return iter(())

    def iter_asset_refs(self) -> Iterator[AssetRef]:
        return iter(())


class AssetWatcher:
    """Airflow 3's ``AssetWatcher(name, trigger)``: the asset gets an event whenever the trigger fires.

    Updraft has no triggerer: an SQS trigger is delivered by AWS to the environment (``updraft.triggers.aws_sources``),
    any other event trigger is polled by a Step Functions execution per watcher (``scheduling.asset_watchers``), and
    a trigger that is not an event trigger is refused here, when the DAG file is parsed.
    """

    def __init__(self, name: str, trigger: Any) -> None:
        # lazy: import cost (the AWS trigger table, 17 modules, only for an AssetWatcher)
        from updraft.triggers.aws_sources import watch_of

        self.name = name
        self.trigger = trigger
        self.watch: dict[str, Any] = watch_of(trigger)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, AssetWatcher):
            return NotImplemented
        return (self.name, self.watch) == (other.name, other.watch)

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"AssetWatcher(name={self.name!r}, trigger={self.trigger!r})"


def _validate_teams(field: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    for entry in value:
        if not isinstance(entry, str) or not entry or entry.isspace():
            raise ValueError(f"Each entry in {field} must be a non-empty string")
    return list(value)


class AssetAccessControl:
    """Airflow 3.3's ``AssetAccessControl``: which teams' producers (and consumers) an asset's events are for.

    Airflow applies it only in multi-team mode (``[core] multi_team``, off by default): with the mode off it is
    stored with the asset in the serialized DAG and filters nothing. Updraft has no teams, so that is what it
    does; multi-team mode itself is refused by name (``AIRFLOW__CORE__MULTI_TEAM=True`` makes building one an
    import error), since Updraft could not filter events by team.
    """

    def __init__(self, producer_teams: list[str] | None = None, consumer_teams: list[str] | None = None,
                 allow_global: bool = True) -> None:
        # lazy: import cost (the Airflow config only when an AssetAccessControl is built)
        from updraft import airflow_config

        if airflow_config.get_bool("core", "multi_team"):
            raise UnsupportedFeatureError(
                "[core] multi_team (AIRFLOW__CORE__MULTI_TEAM=True)",
                "Updraft has no teams, so it cannot filter asset events by AssetAccessControl; without multi_team, "
                "as in Airflow by default, access control is stored and has no effect")
        self.producer_teams = [] if producer_teams is None else _validate_teams("producer_teams", producer_teams)
        self.consumer_teams = _validate_teams("consumer_teams", consumer_teams)
        if not isinstance(allow_global, bool):
            raise TypeError(f"'allow_global' must be <class 'bool'> (got {allow_global!r} that is a "
                            f"{type(allow_global)}).")
        self.allow_global = allow_global

    def is_default(self) -> bool:
        """Whether it allows every producer and consumer (Airflow then leaves it out of the serialized asset)."""
        return not self.producer_teams and self.consumer_teams is None and self.allow_global

    def serialize(self) -> dict[str, Any]:
        """Airflow's serialized form (``airflow.serialization.encoders``)."""
        out: dict[str, Any] = {"producer_teams": self.producer_teams, "allow_global": self.allow_global}
        if self.consumer_teams is not None:
            out["consumer_teams"] = self.consumer_teams
        return out

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, AssetAccessControl):
            return NotImplemented
        return (self.producer_teams, self.consumer_teams, self.allow_global) == (
            other.producer_teams, other.consumer_teams, other.allow_global)

    __hash__ = None  # type: ignore[assignment]  # attrs' mutable default, as Airflow's

    def __repr__(self) -> str:
        return (f"AssetAccessControl(producer_teams={self.producer_teams!r}, consumer_teams={self.consumer_teams!r}, "
                f"allow_global={self.allow_global!r})")


class Asset(os.PathLike, BaseAsset):
    """An asset identified by ``name`` and ``uri``; either one alone stands for both, as in Airflow 3."""

    asset_type: ClassVar[str] = "asset"
    _FIELDS: ClassVar[tuple[str, ...]] = ("name", "uri", "group", "extra", "watchers", "access_control")

    def __init__(
        self,
        name: str | None = None,
        uri: str | os.PathLike | None = None,
        *,
        group: str | None = None,
        extra: dict[str, Any] | None = None,
        watchers: list | None = None,
        access_control: AssetAccessControl | None = None,
    ) -> None:
        if name is None and uri is None:
            raise TypeError("Asset() requires either 'name' or 'uri'")
        if name is None:
            name = str(uri)
        elif uri is None:
            uri = name
        for watcher in watchers or ():
            if not isinstance(watcher, AssetWatcher):
                raise UnsupportedFeatureError("Asset watchers that are not AssetWatcher(name=..., trigger=...)",
                                              f"got {type(watcher).__name__}")
        owner = type(self).__name__
        # Airflow (attrs) converts the uri first, then validates fields in declaration order.
        sanitized_uri = _sanitize_uri(uri)
        _validate_non_empty_identifier(owner, "name", name)
        if name in ("self", "context"):
            raise ValueError(f"prohibited name for asset: {name}")
        _validate_non_empty_identifier(owner, "uri", sanitized_uri)
        group = self.asset_type if group is None else group
        _validate_identifier(owner, "group", group)
        self.name: str = name
        self.uri: str = sanitized_uri
        self.group: str = group
        self.extra: dict[str, Any] = {} if extra is None else extra
        self.watchers: list[AssetWatcher] = list(watchers or ())
        if access_control is not None and not isinstance(access_control, AssetAccessControl):
            raise TypeError(f"access_control must be an AssetAccessControl, got {type(access_control).__name__}")
        self.access_control = access_control if access_control is not None else AssetAccessControl()

    @staticmethod
    def ref(*, name: str = "", uri: str = "") -> AssetRef:
        """A reference resolved by the scheduler to an asset declared elsewhere."""
        if name and uri:
            raise TypeError("Asset reference must be made to either name or URI, not both")
        if name:
            return AssetNameRef(name)
        if uri:
            return AssetUriRef(uri)
        raise TypeError("Asset reference expects keyword argument 'name' or 'uri'")

    def __fspath__(self) -> str:
        return self.uri

    def _key(self) -> tuple:
        return (self.name, self.uri, self.group, self.extra, self.watchers, self.access_control)

    def __eq__(self, other: Any) -> bool:
        # Compare only Asset's own fields, so subclasses (Dataset, Model) with equal fields are equal, as in Airflow.
        if not isinstance(other, Asset):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.name, self.uri, self.group))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self.name!r}, uri={self.uri!r}, group={self.group!r}, "
                f"extra={self.extra!r}, watchers={self.watchers!r})")

    @property
    def normalized_uri(self) -> str | None:
        """The URI after its scheme's normaliser, or None when the scheme has none (Airflow's AIP-60 rule)."""
        parsed = urllib.parse.urlsplit(self.uri)
        normalizer = _URI_NORMALIZERS.get(parsed.scheme.lower()) if parsed.scheme else None
        if normalizer is None:
            return None
        try:
            return urllib.parse.urlunsplit(normalizer(parsed))
        except ValueError:
            return None

    def as_expression(self) -> dict[str, Any]:
        expression: dict[str, Any] = {"uri": self.uri, "name": self.name, "group": self.group}
        if self.watchers:  # what each watcher's trigger watches, stored with the asset (asset_definitions)
            expression["watchers"] = [{"name": w.name, **w.watch} for w in self.watchers]
        return {"asset": expression}

    def iter_assets(self) -> Iterator[tuple[tuple[str, str], Asset]]:
        yield (self.name, self.uri), self


class Dataset(Asset):
    """Airflow 2's name for an Asset; its default group is ``dataset``."""

    asset_type: ClassVar[str] = "dataset"


class Model(Asset):
    asset_type: ClassVar[str] = "model"


class AssetRef(BaseAsset):
    """A reference to an asset by name or URI only; made with ``Asset.ref(...)``."""

    _field: ClassVar[str]

    def __init__(self, value: str) -> None:
        setattr(self, self._field, value)

    def _value(self) -> str:
        return getattr(self, self._field)

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._value() == other._value()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._field}={self._value()!r})"

    def as_expression(self) -> dict[str, Any]:
        return {"asset_ref": {self._field: self._value()}}

    def iter_asset_refs(self) -> Iterator[AssetRef]:
        yield self


class AssetNameRef(AssetRef):
    _field: ClassVar[str] = "name"
    name: str


class AssetUriRef(AssetRef):
    _field: ClassVar[str] = "uri"
    uri: str


class AssetAlias(BaseAsset):
    """A name under which tasks emit assets decided at run time."""

    def __init__(self, name: str, *, group: str = "asset") -> None:
        _validate_non_empty_identifier("AssetAlias", "name", name)
        _validate_identifier("AssetAlias", "group", group)
        self.name = name
        self.group = group

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, AssetAlias):
            return NotImplemented
        return (self.name, self.group) == (other.name, other.group)

    def __hash__(self) -> int:
        return hash((self.name, self.group))

    def __repr__(self) -> str:
        return f"AssetAlias(name={self.name!r}, group={self.group!r})"

    def as_expression(self) -> dict[str, Any]:
        return {"alias": {"name": self.name, "group": self.group}}

    def iter_asset_aliases(self) -> Iterator[tuple[str, AssetAlias]]:
        yield self.name, self


class AssetBooleanCondition(BaseAsset):
    """``AssetAny``/``AssetAll``: a condition over other asset expressions."""

    _operator: ClassVar[str]

    def __init__(self, *objects: BaseAsset) -> None:
        if not all(isinstance(o, BaseAsset) for o in objects):
            raise TypeError("expect asset expressions in condition")
        self.objects = objects

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.objects == other.objects

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.objects)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(str, self.objects))})"

    def as_expression(self) -> dict[str, Any]:
        return {self._operator: [o.as_expression() for o in self.objects]}

    def iter_assets(self) -> Iterator[tuple[tuple[str, str], Asset]]:
        for o in self.objects:
            yield from o.iter_assets()

    def iter_asset_aliases(self) -> Iterator[tuple[str, AssetAlias]]:
        for o in self.objects:
            yield from o.iter_asset_aliases()

    def iter_asset_refs(self) -> Iterator[AssetRef]:
        for o in self.objects:
            yield from o.iter_asset_refs()


class AssetAny(AssetBooleanCondition):
    """Any one of the objects: ``a | b``."""

    _operator: ClassVar[str] = "any"

    def __or__(self, other: BaseAsset) -> BaseAsset:
        if not isinstance(other, BaseAsset):
            return NotImplemented
        # X | Y | Z stays one flat AssetAny, as in Airflow.
        return AssetAny(*self.objects, other)


class AssetAll(AssetBooleanCondition):
    """All of the objects: ``a & b``."""

    _operator: ClassVar[str] = "all"

    def __and__(self, other: BaseAsset) -> BaseAsset:
        if not isinstance(other, BaseAsset):
            return NotImplemented
        return AssetAll(*self.objects, other)


class Metadata:
    """Extra data a task attaches to an asset event it emits (``yield Metadata(asset, {...})``)."""

    def __init__(self, target: str | Asset, extra: dict[str, Any], alias: AssetAlias | str | None = None) -> None:
        if isinstance(target, str):
            target = Asset(target)
        if isinstance(alias, str):
            alias = AssetAlias(name=alias)
        self.asset = (target.name, target.uri)
        self.extra = extra
        self.alias = alias.name if alias is not None else None

    def __repr__(self) -> str:
        return f"Metadata(asset={self.asset!r}, extra={self.extra!r}, alias={self.alias!r})"


def call_collecting_metadata(func: Callable[..., Any], args: Any, kwargs: Any, outlet_events: Any) -> Any:
    """Call a task's function; a generator's yielded ``Metadata`` become its outlet events' extras (Airflow's
    ``create_executable_runner``): the generator is exhausted here and its ``return`` value is the result."""
    if not inspect.isgeneratorfunction(func):
        return func(*args, **kwargs)
    generator = func(*args, **kwargs)
    while True:
        try:
            value = next(generator)
        except StopIteration as stop:
            return stop.value
        if not isinstance(value, Metadata):
            logging.getLogger("airflow.task").warning("Ignoring unknown data of %r received from task", type(value))
            continue
        if outlet_events is None:
            continue
        asset = Asset(name=value.asset[0], uri=value.asset[1])
        outlet_events[asset].extra.update(value.extra)
        if value.alias:
            outlet_events[AssetAlias(name=value.alias)].add(asset, extra=value.extra)
