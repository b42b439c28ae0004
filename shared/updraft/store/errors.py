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
    """A value larger than the store keeps: a serialized DAG or XCom over an item with no S3 bucket/client, a
    variable or connection over one item (``updraft.store.item_size``), a secret over KMS's limit. The message
    names the value and says by how much; the API answers it as the client's error."""
