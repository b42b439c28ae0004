"""``airflow.utils.deprecation_tools``."""

from updraft.sdk.deprecation_tools import DeprecatedImportWarning, add_deprecated_classes, getattr_with_deprecation

__all__ = ["DeprecatedImportWarning", "add_deprecated_classes", "getattr_with_deprecation"]
