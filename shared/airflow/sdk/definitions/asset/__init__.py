"""``airflow.sdk.definitions.asset``: assets and asset expressions."""

from updraft.sdk._internal.unsupported import module_getattr
from updraft.sdk.assets import (
    Asset,
    AssetAccessControl,
    AssetAlias,
    AssetAll,
    AssetAny,
    AssetNameRef,
    AssetRef,
    AssetUriRef,
    AssetWatcher,
    BaseAsset,
    Dataset,
    Model,
)

__all__ = [
    "Asset",
    "AssetAccessControl",
    "AssetAlias",
    "AssetAll",
    "AssetAny",
    "AssetNameRef",
    "AssetRef",
    "AssetUriRef",
    "AssetWatcher",
    "BaseAsset",
    "Dataset",
    "Model",
]

# Names Airflow has here that Updraft does not support raise an ImportError naming them.
__getattr__ = module_getattr(__name__, globals())
