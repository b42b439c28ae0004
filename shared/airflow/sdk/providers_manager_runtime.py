"""``airflow.sdk.providers_manager_runtime``: the task SDK's name of the providers manager."""

from updraft.sdk.providers_manager import HookInfo, ProviderInfo
from updraft.sdk.providers_manager import ProvidersManager as ProvidersManagerTaskRuntime

__all__ = ["HookInfo", "ProviderInfo", "ProvidersManagerTaskRuntime"]
