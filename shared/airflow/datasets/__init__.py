"""``airflow.datasets`` (Airflow 2): Datasets are Airflow 3's Assets."""

from updraft.sdk.assets import (
    AssetAlias as DatasetAlias,
)
from updraft.sdk.assets import (
    AssetAll as DatasetAll,
)
from updraft.sdk.assets import (
    AssetAny as DatasetAny,
)
from updraft.sdk.assets import (
    Dataset,
)

__all__ = ["Dataset", "DatasetAlias", "DatasetAll", "DatasetAny"]
