"""``airflow.utils.module_loading``: objects by dotted path and back."""

from updraft.sdk.module_loading import (
    accepts_context,
    entry_points_with_dist,
    import_string,
    is_valid_dotpath,
    iter_namespace,
    qualname,
)

__all__ = ["accepts_context", "entry_points_with_dist", "import_string", "is_valid_dotpath", "iter_namespace",
           "qualname"]
