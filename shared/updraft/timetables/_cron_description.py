"""English descriptions of five-field cron expressions, as Airflow shows them in the UI.

Airflow fills ``CronMixin.description`` with the ``cron-descriptor`` package (sentence case, 24-hour
clock, en_US catalogue). That package is not one of Updraft's dependencies, so this module reproduces its
algorithm for the only input Airflow feeds it (five fields; longer expressions get no description), down
to its quirks, so that descriptions read identically. The tests compare outputs against strings produced
by cron-descriptor 2.2.1.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["describe_cron"]

_DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_DAY_ABBREVIATIONS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_MONTH_ABBREVIATIONS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_SPECIAL = ("/", "-", ",", "*")
_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}

# Positions in the seven-slot layout cron-descriptor normalizes to (seconds and year stay empty here).
_SEC, _MIN, _HOUR, _DOM, _MONTH, _DOW, _YEAR = range(7)

_Fmt = Callable[[str], str]


def _has_any(text: str, chars: tuple[str, ...]) -> bool:
    return any(c in text for c in chars)


def _parse(expression: str) -> list[str]:
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(f"expected 5 cron fields, got {len(fields)}")
    parts = ["", *fields, ""]

    parts[_DOM] = parts[_DOM].replace("?", "*")
    parts[_DOW] = parts[_DOW].replace("?", "*")
    for index, prefix in ((_MIN, "0/"), (_HOUR, "0/"), (_DOM, "1/"), (_MONTH, "1/"), (_DOW, "1/")):
        if parts[index].startswith(prefix):
            parts[index] = parts[index].replace(prefix, "*/")

    def sunday_is_zero(match: re.Match[str]) -> str:
        text = match.group()
        digits = re.sub(r"\D", "", text)
        return text.replace(digits, "0") if digits == "7" else text

    parts[_DOW] = re.sub(r"(^\d)|([^#/\s]\d)", sunday_is_zero, parts[_DOW])
    for number, name in enumerate(_DAY_ABBREVIATIONS):
        parts[_DOW] = parts[_DOW].upper().replace(name, str(number))
    for number, name in enumerate(_MONTH_ABBREVIATIONS, start=1):
        parts[_MONTH] = parts[_MONTH].upper().replace(name, str(number))

    # "*/5 3 * * *" reads as "every 5 minutes between 03:00 and 03:59".
    if not _has_any(parts[_HOUR], _SPECIAL) and _has_any(parts[_MIN], ("*", "/")):
        parts[_HOUR] += f"-{parts[_HOUR]}"

    for index in range(len(parts)):
        if parts[index] == "*/1":
            parts[index] = "*"
        part = parts[index]
        through = {_MONTH: "12", _DOW: "6", _YEAR: "9999"}.get(index)
        if through and "/" in part and not _has_any(part, ("*", "-", ",")):
            start, step = part.split("/")[:2]
            parts[index] = f"{start}-{through}/{step}"
    return parts


def _format_time(hour: str, minute: str) -> str:
    return f"{int(hour):02d}:{int(minute):02d}"


def _day_name(text: str) -> str:
    if "#" in text:
        text = text.split("#", maxsplit=1)[0]
    elif "L" in text:
        text = text.replace("L", "")
    return _DAY_NAMES[int(text)]


def _month_name(text: str) -> str:
    number = int(text)
    if not 1 <= number <= 12:
        raise ValueError(f"month {number} out of range")
    return _MONTH_NAMES[number - 1]


def _between(expression: str, fmt: _Fmt, single: _Fmt) -> str:
    first, second = expression.split("-")[:2]
    return fmt(expression).format(single(first), single(second).replace(":00", ":59"))


def _step_in_list(segment: str, interval_fmt: _Fmt, range_fmt: _Fmt, single: _Fmt) -> str:
    base, step = segment.split("/")[:2]
    text = interval_fmt(step).format(step).removeprefix(", ")
    if "-" in base:
        text += ", " + _between(base, range_fmt, single).replace(", ", "")
    elif base != "*":
        # cron-descriptor's en_US catalogue lacks "starting {0}" and renders it empty.
        text += ", "
    return text


def _segment(
    expression: str,
    all_description: str,
    single: _Fmt,
    interval_fmt: _Fmt,
    between_fmt: _Fmt,
    description_fmt: _Fmt,
    range_fmt: _Fmt,
) -> str:
    if not expression:
        return ""
    if expression == "*":
        return all_description
    if not _has_any(expression, ("/", "-", ",")):
        return description_fmt(expression).format(single(expression))
    if "," in expression:
        segments = expression.split(",")
        content = ""
        for i, segment in enumerate(segments):
            if i > 0 and len(segments) > 2:
                content += ","
                if i < len(segments) - 1:
                    content += " "
            if i > 0 and len(segments) > 1 and (i == len(segments) - 1 or len(segments) == 2):
                content += " and "
            if "/" in segment:
                content += _step_in_list(segment, interval_fmt, range_fmt, single)
            elif "-" in segment:
                content += _between(segment, range_fmt, single).replace(", ", "")
            else:
                content += single(segment)
        return description_fmt(expression).format(content)
    if "/" in expression:
        base, step = expression.split("/")[:2]
        description = interval_fmt(step).format(step)
        if "-" in base:
            between = _between(base, between_fmt, single)
            if not between.startswith(", "):
                description += ", "
            description += between
        elif not _has_any(base, ("*", ",")):
            item = description_fmt(base).format(single(base)).replace(", ", "")
            description += f", starting {item}"
        return description
    if "-" in expression:
        return _between(expression, between_fmt, single)
    return "?"


class _Describer:
    def __init__(self, parts: list[str]) -> None:
        self.parts = parts

    def full(self) -> str:
        description = self.time_of_day() + self.day_of_month() + self.day_of_week() + self.month()
        for verbose in (", every minute", ", every hour", ", every day"):
            description = description.replace(verbose, "")
        description = re.sub(r", ?$", "", description)
        if not description:
            raise ValueError("empty description")
        return description[0].upper() + description[1:]

    def time_of_day(self) -> str:
        minute, hour = self.parts[_MIN], self.parts[_HOUR]
        if not _has_any(minute, _SPECIAL) and not _has_any(hour, _SPECIAL):
            return "At " + _format_time(hour, minute)
        if "-" in minute and "," not in minute and not _has_any(hour, _SPECIAL):
            first, last = minute.split("-")[:2]
            return f"Every minute between {_format_time(hour, first)} and {_format_time(hour, last)}"
        if "," in hour and "-" not in hour and not _has_any(minute, _SPECIAL):
            hours = hour.split(",")
            text = "At"
            for i, item in enumerate(hours):
                text += " " + _format_time(item, minute)
                if i < len(hours) - 2:
                    text += ","
                if i == len(hours) - 2:
                    text += " and"
            return text
        pieces = [p for p in (self.minutes(), self.hours()) if p]
        return ", ".join(pieces)

    def minutes(self) -> str:
        hour = self.parts[_HOUR]
        is_hour_range = "-" in hour and not _has_any(hour, ("/", ","))

        def description_fmt(text: str) -> str:
            if text == "0" and not is_hour_range:
                return ""
            return "at {0} minutes past the hour"

        return _segment(
            self.parts[_MIN],
            "every minute",
            lambda s: s,
            lambda s: f"every {s} minutes",
            lambda _: "minutes {0} through {1} past the hour",
            description_fmt,
            lambda _: ", {0} through {1}",
        )

    def hours(self) -> str:
        return _segment(
            self.parts[_HOUR],
            "every hour",
            lambda s: _format_time(s, "0"),
            lambda s: f"every {s} hours",
            lambda _: "between {0} and {1}",
            lambda _: "at {0}",
            lambda _: ", {0} through {1}",
        )

    def day_of_week(self) -> str:
        expression = self.parts[_DOW]
        if expression == "*":
            return ""

        def description_fmt(text: str) -> str:
            if "#" in text:
                try:
                    ordinal = _ORDINALS.get(int(text[text.find("#") + 1 :]), "")
                except ValueError:
                    ordinal = ""
                return ", on the " + ordinal + " {0} of the month"
            if "L" in text:
                return ", on the last {0} of the month"
            if self.parts[_DOM] != "*":
                return ", or on {0}"
            return ", only on {0}"

        if "/" in expression and expression.split("/", 1)[1].isdigit():
            base, step = expression.split("/", 1)
            days: str | None = None
            if "," in base:
                days = _segment(
                    base,
                    "",
                    _day_name,
                    lambda s: f", every {s} days of the week",
                    lambda _: ", {0} through {1}",
                    lambda _: ", only on {0}",
                    lambda _: ", {0} through {1}",
                )
            elif "-" in base:
                first, last = base.split("-")
                if int(step) >= (int(last) or 7) - int(first) + 1:
                    if int(last) == 6:
                        days = f", only on {_day_name(first)}"
                    else:
                        days = _between(base, lambda _: ", {0} through {1}", _day_name)
            if days is not None:
                return f", every {step} weeks" + days

        return _segment(
            expression,
            ", every day",
            _day_name,
            lambda s: f", every {s} days of the week",
            lambda _: ", {0} through {1}",
            description_fmt,
            lambda _: ", {0} through {1}",
        )

    def month(self) -> str:
        return _segment(
            self.parts[_MONTH],
            "",
            _month_name,
            lambda s: f", every {s} months",
            lambda _: ", {0} through {1}",
            lambda _: ", only in {0}",
            lambda _: ", {0} through {1}",
        )

    def day_of_month(self) -> str:
        expression = self.parts[_DOM]
        if expression == "L":
            return ", on the last day of the month"
        if expression in ("LW", "WL"):
            return ", on the last weekday of the month"
        if match := re.match(r"(\d{1,2}W)|(W\d{1,2})", expression):
            day = int(match.group().replace("W", ""))
            day_text = "first weekday" if day == 1 else f"weekday nearest day {day}"
            return f", on the {day_text} of the month"
        if expression == "*" and self.parts[_DOW] != "*":
            return ""
        if match := re.match(r"L-(\d{1,2})", expression):
            return f", {match.group(1)} days before the last day of the month"
        return _segment(
            expression,
            ", every day",
            lambda s: s,
            lambda s: ", every day" if s == "1" else f", every {s} days",
            lambda _: ", between day {0} and {1} of the month",
            lambda _: ", on day {0} of the month",
            lambda _: ", {0} through {1}",
        )


def _describe(expression: str) -> str:
    return _Describer(_parse(expression)).full()


def describe_cron(expression: str) -> str:
    """Describe *expression* like Airflow's ``CronMixin`` does; raise ``ValueError`` when it cannot.

    When both day-of-month and day-of-week are restricted cron fires on either, so Airflow describes the
    two halves separately joined by "(or)"; that wrapper is reproduced here too.
    """
    try:
        fields = expression.split()
        if len(fields) < 5:
            return _describe(expression)
        dom, dow = fields[2], fields[4]
        if dom != "*" and dow != "*":
            dom_only = " ".join([*fields[:4], "*", *fields[5:]])
            dow_only = " ".join([*fields[:2], "*", *fields[3:]])
            return f"{_describe(dom_only)} (or) {_describe(dow_only)}"
        return _describe(expression)
    except (ValueError, IndexError, KeyError) as exc:
        raise ValueError(f"cannot describe cron expression {expression!r}") from exc
