"""``airflow.providers_manager``: what the installed provider packages declare."""

from updraft.sdk.providers_manager import DialectInfo, HookInfo, ProviderInfo, ProvidersManager

__all__ = ["DialectInfo", "HookInfo", "ProviderInfo", "ProvidersManager"]
