"""``airflow.utils.timezone``: aware-datetime helpers (UTC default timezone)."""

from updraft.sdk.timezone import (
    convert_to_utc,
    datetime,
    is_naive,
    make_aware,
    make_naive,
    parse,
    utc,
    utcnow,
)

__all__ = ["convert_to_utc", "datetime", "is_naive", "make_aware", "make_naive", "parse", "utc", "utcnow"]
