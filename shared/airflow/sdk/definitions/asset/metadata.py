"""``airflow.sdk.definitions.asset.metadata``: extra data for emitted asset events."""

from updraft.sdk.assets import Metadata

__all__ = ["Metadata"]
