"""``airflow.providers.amazon.aws.sensors.s3``: S3KeySensor (the provider's other S3 sensor is an import error)."""

from updraft.sdk._internal.unsupported import module_getattr
from updraft.sensors.s3 import S3KeySensor

__all__ = ["S3KeySensor"]
__getattr__ = module_getattr(__name__, globals())
