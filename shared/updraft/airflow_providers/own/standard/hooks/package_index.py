"""``airflow.providers.standard.hooks.package_index``."""

from updraft.hooks.package_index import PackageIndexHook

__all__ = ["PackageIndexHook"]
