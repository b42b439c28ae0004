"""``airflow.providers.standard.triggers.file``."""

from updraft.sdk._internal.unsupported import module_getattr
from updraft.triggers.file import FileTrigger

__all__ = ["FileTrigger"]

# FileDeleteTrigger and DirectoryFileDeleteTrigger (asset watchers on local files) raise an ImportError naming why.
__getattr__ = module_getattr(__name__, globals())
