"""English descriptions of cron expressions, as Airflow shows them in the UI (via ``cron-descriptor``)."""

from __future__ import annotations

__all__ = ["describe_cron"]


def _describe(expression: str) -> str:
    from cron_descriptor import CasingTypeEnum, ExpressionDescriptor

    description = ExpressionDescriptor(expression, casing_type=CasingTypeEnum.Sentence, use_24hour_time_format=True,
                                       locale_code="en_US").get_description()
    return str(description)  # cron-descriptor ships no types


def describe_cron(expression: str) -> str:
    """Describe *expression* like Airflow's ``CronMixin`` does; raise ``ValueError`` when it cannot.

    When both day-of-month and day-of-week are restricted cron fires on either, so Airflow describes the
    two halves separately joined by "(or)".
    """
    try:
        fields = expression.split()
        if len(fields) >= 5 and fields[2] != "*" and fields[4] != "*":
            dom_only = " ".join([*fields[:4], "*", *fields[5:]])
            dow_only = " ".join([*fields[:2], "*", *fields[3:]])
            return f"{_describe(dom_only)} (or) {_describe(dow_only)}"
        return _describe(expression)
    except Exception as exc:  # cron-descriptor raises its own FormatException/MissingFieldException types
        raise ValueError(f"cannot describe cron expression {expression!r}") from exc
