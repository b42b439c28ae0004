"""``GET /config`` and ``GET /config/section/{section}/option/{option}``: Airflow's configuration as this
environment's settings stand for it (:meth:`updraft.config.UpdraftConfig.airflow_options`: the Airflow options
Updraft reads from its settings; there is no airflow.cfg), shaped as Airflow's ``Config``.

Airflow's rules, kept: both routes are a 403 with Airflow's message unless ``[api] expose_config``
(``AIRFLOW__API__EXPOSE_CONFIG``) is true; sensitive options are always masked as ``< hidden >``; ``section=`` of
a section not listed and an option not listed are 404s worded as Airflow's; ``Accept: text/plain`` answers the
``[section]`` / ``key = value`` text Airflow writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from updraft.api.errors import Forbidden, NotFound
from updraft.api.formats import TEXT, json_or_text
from updraft.api.routing import Call, Reply, RouteTable
from updraft.config import SENSITIVE_OPTIONS

if TYPE_CHECKING:
    from updraft.api.models import Config

routes = RouteTable()

HIDDEN = "< hidden >"


def _options(call: Call) -> dict[str, dict[str, str]]:
    """The options as shown: a 403 unless exposed, sensitive values masked."""
    config = call.services.config
    if not config.expose_config:
        raise Forbidden("Your Airflow administrator chose not to expose the configuration, most likely for "
                        "security reasons.")
    return {section: {key: HIDDEN if (section, key) in SENSITIVE_OPTIONS else value for key, value in options.items()}
            for section, options in config.airflow_options().items()}


def _answer(sections: dict[str, dict[str, str]], mimetype: str) -> Config | Reply:
    if mimetype == TEXT:
        text = "\n".join(f"[{name}]\n" + "\n".join(f"{key} = {value}" for key, value in options.items()) + "\n"
                         for name, options in sections.items())
        return Reply(200, text, content_type=TEXT)
    return {"sections": [{"name": name, "options": [{"key": key, "value": value} for key, value in options.items()]}
                         for name, options in sections.items()]}


@routes.get("/config")
def get_config(call: Call) -> Config | Reply:
    section = call.query.string("section")
    call.query.check()
    mimetype = json_or_text(call.request.header("Accept"))
    options = _options(call)
    if section is not None:
        if section not in options:
            raise NotFound(f"Section {section} not found.")
        options = {section: options[section]}
    return _answer(options, mimetype)


@routes.get("/config/section/{section}/option/{option}")
def get_config_value(call: Call) -> Config | Reply:
    section, option = call.path("section"), call.path("option")
    call.query.check()
    mimetype = json_or_text(call.request.header("Accept"))
    options = _options(call)
    if option not in options.get(section, {}):
        raise NotFound(f"Option [{section}/{option}] not found.")
    return _answer({section: {option: options[section][option]}}, mimetype)
