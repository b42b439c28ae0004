"""Partition mappers: an upstream event's partition key -> the downstream run's key(s) (Airflow's
``airflow.partition_mappers`` base, identity, allowed_key, fixed_key, product and chain modules)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from datetime import datetime
from typing import Any, ClassVar, TypeGuard

from updraft.timetables.partitions.wait_policies import WaitForAll, WaitPolicy
from updraft.timetables.partitions.windows import Window


class PartitionMapper(ABC):
    """Maps the key of an asset event to the key(s) of the downstream run it feeds."""

    is_rollup: ClassVar[bool] = False
    expected_decoded_type: ClassVar[type] = str

    def __init__(self, *, max_downstream_keys: int | None = None) -> None:
        if max_downstream_keys is not None and (not isinstance(max_downstream_keys, int) or max_downstream_keys < 1):
            raise ValueError(f"max_downstream_keys must be a positive integer or None, got {max_downstream_keys!r}")
        self.max_downstream_keys = max_downstream_keys

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        decode_overridden = cls.decode_downstream is not PartitionMapper.decode_downstream
        encode_overridden = cls.encode_upstream is not PartitionMapper.encode_upstream
        if decode_overridden ^ encode_overridden:
            raise TypeError(f"{cls.__qualname__} overrides only one side of the decode/encode pair. Both "
                            "'decode_downstream' and 'encode_upstream' must be overridden together or not at all.")

    @abstractmethod
    def to_downstream(self, key: str) -> str | Iterable[str]:
        """The downstream key (or keys) the upstream ``key`` maps to."""

    def decode_downstream(self, downstream_key: str) -> Any:
        """The decoded anchor of a downstream key a window iterates from (identity for string keys)."""
        return downstream_key

    def encode_upstream(self, decoded: Any) -> str:
        """An expected upstream member rendered back as the key producers emit (identity for string keys)."""
        return str(decoded)

    def to_partition_date(self, downstream_key: str) -> datetime | None:
        """The downstream run's ``partition_date``; None for keys with no temporal meaning."""
        return None

    def carry_partition_date(self, source_partition_date: datetime | None) -> datetime | None:
        """The producer's ``partition_date`` carried onto the consumer (only the identity mapper carries it)."""
        return None

    def serialize(self) -> dict[str, Any]:
        return {} if self.max_downstream_keys is None else {"max_downstream_keys": self.max_downstream_keys}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        return cls(max_downstream_keys=data.get("max_downstream_keys"))

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and isinstance(other, PartitionMapper)
                and self.serialize() == other.serialize())

    def __hash__(self) -> int:
        return hash((type(self), repr(self.serialize())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.serialize()!r})"


def _with_cap(mapper: PartitionMapper, data: dict[str, Any]) -> dict[str, Any]:
    if mapper.max_downstream_keys is not None:
        data["max_downstream_keys"] = mapper.max_downstream_keys
    return data


class IdentityMapper(PartitionMapper):
    """The downstream key is the upstream key (the default mapper)."""

    def to_downstream(self, key: str) -> str:
        return key

    def carry_partition_date(self, source_partition_date: datetime | None) -> datetime | None:
        return source_partition_date


class AllowedKeyMapper(PartitionMapper):
    """Passes a key through only when it is one of ``allowed_keys`` (any other key fails to map)."""

    def __init__(self, allowed_keys: list[str], *, max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.allowed_keys = list(allowed_keys)

    def to_downstream(self, key: str) -> str:
        if key not in self.allowed_keys:
            raise ValueError(f"Key {key!r} not in allowed keys {self.allowed_keys}")
        return key

    def serialize(self) -> dict[str, Any]:
        return _with_cap(self, {"allowed_keys": self.allowed_keys})

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        return cls(allowed_keys=data["allowed_keys"], max_downstream_keys=data.get("max_downstream_keys"))


class FixedKeyMapper(PartitionMapper):
    """Every upstream key maps to the one ``downstream_key`` (a categorical rollup's upstream mapper)."""

    def __init__(self, downstream_key: str, *, max_downstream_keys: int | None = None) -> None:
        if not downstream_key or not isinstance(downstream_key, str):
            raise ValueError(f"FixedKeyMapper downstream_key must be a non-empty str; got {downstream_key!r}.")
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.downstream_key = downstream_key

    def to_downstream(self, key: str) -> str:
        return self.downstream_key

    def serialize(self) -> dict[str, Any]:
        return _with_cap(self, {"downstream_key": self.downstream_key})

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        return cls(data["downstream_key"], max_downstream_keys=data.get("max_downstream_keys"))


class ProductMapper(PartitionMapper):
    """A composite key (``"us|2024-06-14T03:00:00"``): each ``delimiter``-separated segment through its mapper."""

    def __init__(self, mapper0: PartitionMapper, mapper1: PartitionMapper, /, *mappers: PartitionMapper,
                 delimiter: str = "|", max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.mappers = [mapper0, mapper1, *mappers]
        self.delimiter = delimiter

    def to_downstream(self, key: str) -> str:
        segments = key.split(self.delimiter)
        if len(segments) != len(self.mappers):
            raise ValueError(f"Expected {len(self.mappers)} segments in key, got {len(segments)}")
        results: list[str] = []
        for mapper, segment in zip(self.mappers, segments, strict=True):
            result = mapper.to_downstream(segment)
            if not isinstance(result, str):
                raise TypeError(f"ProductMapper child mappers must return a single key, but "
                                f"{type(mapper).__name__} returned multiple keys")
            results.append(result)
        return self.delimiter.join(results)

    def to_partition_date(self, downstream_key: str) -> datetime | None:
        """The one temporal segment's anchor; None with none or several (ambiguous)."""
        segments = downstream_key.split(self.delimiter)
        if len(segments) != len(self.mappers):
            return None
        anchors = [a for m, s in zip(self.mappers, segments, strict=True) if (a := m.to_partition_date(s)) is not None]
        return anchors[0] if len(anchors) == 1 else None

    def serialize(self) -> dict[str, Any]:
        # lazy: circle (timetables.partitions.codec imports this module)
        from updraft.timetables.partitions.codec import encode_partition_mapper

        return _with_cap(self, {"delimiter": self.delimiter,
                                "mappers": [encode_partition_mapper(m) for m in self.mappers]})

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        # lazy: circle (timetables.partitions.codec imports this module)
        from updraft.timetables.partitions.codec import decode_partition_mapper

        return cls(*[decode_partition_mapper(m) for m in data["mappers"]], delimiter=data.get("delimiter", "|"),
                   max_downstream_keys=data.get("max_downstream_keys"))


class ChainMapper(PartitionMapper):
    """The mappers one after another (a fan-out anywhere in the chain fans out the rest)."""

    def __init__(self, mapper0: PartitionMapper, mapper1: PartitionMapper, /, *mappers: PartitionMapper,
                 max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.mappers = [mapper0, mapper1, *mappers]

    def to_downstream(self, key: str) -> str | Iterable[str]:
        keys = [key]
        for mapper in self.mappers:
            next_keys: list[str] = []
            for current in keys:
                mapped = mapper.to_downstream(current)
                if isinstance(mapped, str):
                    next_keys.append(mapped)
                    continue
                if not isinstance(mapped, Iterable):
                    raise TypeError(f"ChainMapper child mappers must return a string or iterable of strings, but "
                                    f"{type(mapper).__name__} returned {type(mapped).__name__}")
                for item in mapped:
                    if not isinstance(item, str):
                        raise TypeError(f"ChainMapper child mappers must return an iterable of strings, but "
                                        f"{type(mapper).__name__} yielded {type(item).__name__}")
                    next_keys.append(item)
            keys = next_keys
        return keys[0] if len(keys) == 1 else keys

    def to_partition_date(self, downstream_key: str) -> datetime | None:
        return self.mappers[-1].to_partition_date(downstream_key)

    def serialize(self) -> dict[str, Any]:
        # lazy: circle (timetables.partitions.codec imports this module)
        from updraft.timetables.partitions.codec import encode_partition_mapper

        return _with_cap(self, {"mappers": [encode_partition_mapper(m) for m in self.mappers]})

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        # lazy: circle (timetables.partitions.codec imports this module)
        from updraft.timetables.partitions.codec import decode_partition_mapper

        return cls(*[decode_partition_mapper(m) for m in data["mappers"]],
                   max_downstream_keys=data.get("max_downstream_keys"))


class RollupMapper(PartitionMapper):
    """Many upstream keys -> one downstream key: ``upstream_mapper`` names the downstream key, ``window`` the
    upstream keys it needs, ``wait_policy`` (default: all of them) when the run may fire."""

    is_rollup: ClassVar[bool] = True

    def __init__(self, *, upstream_mapper: PartitionMapper, window: Window, wait_policy: WaitPolicy | None = None,
                 max_downstream_keys: int | None = None) -> None:
        if upstream_mapper.expected_decoded_type is not window.expected_decoded_type:
            raise TypeError(
                f"{type(window).__name__} expects decoded values of type {window.expected_decoded_type.__name__!r}, "
                f"but {type(upstream_mapper).__name__} decodes to "
                f"{upstream_mapper.expected_decoded_type.__name__!r}. Pair a window and an upstream mapper whose "
                "'expected_decoded_type' match.")
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.upstream_mapper = upstream_mapper
        self.window = window
        self.wait_policy = wait_policy if wait_policy is not None else WaitForAll()

    def to_downstream(self, key: str) -> str | Iterable[str]:
        return self.upstream_mapper.to_downstream(key)

    def to_upstream(self, downstream_key: str) -> frozenset[str]:
        """Every upstream key the downstream key's window needs."""
        decoded = self.upstream_mapper.decode_downstream(downstream_key)
        return frozenset(self.upstream_mapper.encode_upstream(item) for item in self.window.to_upstream(decoded))

    def to_partition_date(self, downstream_key: str) -> datetime | None:
        return self.upstream_mapper.to_partition_date(downstream_key)

    def serialize(self) -> dict[str, Any]:
        # lazy: circle (timetables.partitions.codec imports this module)
        from updraft.timetables.partitions.codec import encode_partition_mapper, encode_wait_policy, encode_window

        return _with_cap(self, {"upstream_mapper": encode_partition_mapper(self.upstream_mapper),
                                "window": encode_window(self.window),
                                "wait_policy": encode_wait_policy(self.wait_policy)})

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        # lazy: circle (timetables.partitions.codec imports this module)
        from updraft.timetables.partitions.codec import decode_partition_mapper, decode_wait_policy, decode_window

        return cls(upstream_mapper=decode_partition_mapper(data["upstream_mapper"]),
                   window=decode_window(data["window"]), wait_policy=decode_wait_policy(data["wait_policy"]),
                   max_downstream_keys=data.get("max_downstream_keys"))


def is_rollup(mapper: PartitionMapper) -> TypeGuard[RollupMapper]:
    return mapper.is_rollup
