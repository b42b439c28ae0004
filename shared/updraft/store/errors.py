"""Domain errors the store raises at its edge (DynamoDB's exceptions never leak past it)."""

from __future__ import annotations


class StoreError(Exception):
    pass


class PoolNotFound(StoreError):
    pass


class DefaultPoolCannotBeDeleted(StoreError):
    def __init__(self) -> None:
        super().__init__("default_pool cannot be deleted")


class ValueTooLarge(StoreError):
    """A serialized DAG or XCom is larger than an item may hold and the store has no S3 bucket/client."""
