"""``airflow.utils.yaml``: PyYAML's ``safe_load``/``dump``..., imported at first use as in Airflow (PyYAML is the
environment's package, not Updraft's)."""

from typing import Any

__all__ = ["dump", "full_load", "safe_dump", "safe_load"]


def safe_load(stream: Any) -> Any:
    import yaml  # type: ignore[import-untyped]

    return yaml.load(stream, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def full_load(stream: Any) -> Any:
    import yaml  # type: ignore[import-untyped]

    return yaml.load(stream, Loader=getattr(yaml, "CFullLoader", yaml.FullLoader))


def dump(data: Any, **kwargs: Any) -> Any:
    import yaml  # type: ignore[import-untyped]

    return yaml.dump(data, Dumper=getattr(yaml, "CDumper", yaml.Dumper), **kwargs)


def safe_dump(data: Any, **kwargs: Any) -> Any:
    import yaml  # type: ignore[import-untyped]

    return yaml.dump(data, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), **kwargs)
