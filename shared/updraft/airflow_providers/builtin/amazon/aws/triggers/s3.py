"""``airflow.providers.amazon.aws.triggers.s3``: S3KeyTrigger (the provider's other S3 trigger is an import error)."""

from updraft.sdk._internal.unsupported import module_getattr
from updraft.triggers.s3 import S3KeyTrigger

__all__ = ["S3KeyTrigger"]
__getattr__ = module_getattr(__name__, globals())
