"""Airflow's ``conf`` as DAG code and provider packages read it (``airflow.configuration.conf``,
``airflow.sdk.configuration.conf``, ``airflow.providers.common.compat.sdk.conf``).

A value is looked up in Airflow's order, first found wins:

1. the environment: ``AIRFLOW__{SECTION}__{KEY}``; for options Airflow marks sensitive, also
   ``AIRFLOW__{SECTION}__{KEY}_CMD`` (the command's output) and ``..._SECRET`` (the value the environment's secrets
   backend, ``[secrets] backend``, holds under that name);
2. Airflow 3.3's core defaults (``airflow_config_defaults.json.gz``, cut from Airflow's ``config.yml`` by
   ``bench/refresh_airflow_config_defaults.py``);
3. the defaults each installed provider declares in ``get_provider_info()["config"]``;
4. the caller's ``fallback=``; otherwise ``AirflowConfigException``, as Airflow raises.

There is no ``airflow.cfg``: Updraft is configured by environment variables only (locally the process's, on AWS
the functions' and the Fargate task's). Setting a value (``conf.set``) is refused: it would change only the process
that set it, while Airflow's is the deployment's configuration.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shlex
import subprocess
import sys
from datetime import timedelta
from functools import cached_property
from importlib import resources
from typing import Any

from updraft.airflow_config import variable
from updraft.sdk.exceptions import AirflowConfigException, UnsupportedFeatureError

log = logging.getLogger(__name__)

_NOT_FOUND = object()


def _expand(value: str) -> str:
    """Environment variables and ``~`` expanded until nothing changes (Airflow's ``expand_env_var``)."""
    while True:
        expanded = os.path.expanduser(os.path.expandvars(value))
        if expanded == value:
            return expanded
        value = expanded


def run_command(command: str) -> str:
    """The output of ``command`` (an ``_CMD`` option); AirflowConfigException when it fails."""
    process = subprocess.run(shlex.split(command), capture_output=True, check=False)
    output, stderr = (stream.decode(sys.getdefaultencoding(), "ignore") for stream in (process.stdout, process.stderr))
    if process.returncode != 0:
        raise AirflowConfigException(f"Cannot execute {command}. Error code is: {process.returncode}. "
                                     f"Output: {output}, Stderr: {stderr}")
    return output


class AirflowConfigParser:
    """Airflow's configuration reader, over the environment and the core and provider defaults (module doc)."""

    @cached_property
    def _core(self) -> dict[str, Any]:
        raw = resources.files("updraft.sdk").joinpath("airflow_config_defaults.json.gz").read_bytes()
        return json.loads(gzip.decompress(raw))

    @cached_property
    def _provider_descriptions(self) -> dict[str, dict[str, Any]]:
        """Section -> option -> description, from every installed provider's ``config`` (read once)."""
        # lazy: cold start (provider discovery, 22 modules, only when a provider's option is asked for)
        from updraft.sdk.providers_manager import ProvidersManager

        sections: dict[str, dict[str, Any]] = {}
        for _package, config in ProvidersManager().provider_configs:
            for section, body in config.items():
                sections.setdefault(section, {}).update(body.get("options") or {})
        return sections

    def _provider_default(self, section: str, key: str) -> Any:
        option = self._provider_descriptions.get(section, {}).get(key)
        if option is None or option.get("default") is None:
            return _NOT_FOUND
        return str(option["default"])

    def is_sensitive(self, section: str, key: str) -> bool:
        """Whether Airflow treats the option as a secret (``_CMD``/``_SECRET`` are read only for those)."""
        if [section, key] in self._core["sensitive"]:
            return True
        return bool(self._provider_descriptions.get(section, {}).get(key, {}).get("sensitive"))

    def _from_environment(self, section: str, key: str) -> Any:
        name = variable(section.replace(".", "_"), key)
        if name in os.environ:
            return _expand(os.environ[name])
        if name + "_CMD" in os.environ and self.is_sensitive(section, key):
            return run_command(os.environ[name + "_CMD"])
        if name + "_SECRET" in os.environ and self.is_sensitive(section, key):
            return self._from_secrets_backend(os.environ[name + "_SECRET"])
        return _NOT_FOUND

    def _from_secrets_backend(self, config_key: str) -> Any:
        # lazy: import cost (sdk.execution only when a secrets backend is read)
        from updraft.sdk.execution import secrets_backend

        if not os.environ.get(variable("secrets", "backend")):
            return _NOT_FOUND  # no backend configured: Airflow reads nothing and goes on to the defaults
        backend = secrets_backend()
        if backend is None:
            raise AirflowConfigException(f"{config_key!r} is read from the secrets backend, which is set up only "
                                         "where a task runs (not while a DAG file is parsed)")
        value = backend.get_config(config_key)
        return _NOT_FOUND if value is None else value

    def _lookup(self, section: str, key: str) -> Any:
        section, key = section.lower(), key.lower()
        value = self._from_environment(section, key)
        if value is _NOT_FOUND:
            value = self._core["defaults"].get(section, {}).get(key, _NOT_FOUND)
        if value is _NOT_FOUND:
            value = self._provider_default(section, key)
        return value

    def get(self, section: str, key: str, fallback: Any = _NOT_FOUND, **kwargs: Any) -> Any:
        """The option's value as a string; ``fallback`` when nothing sets it, else AirflowConfigException."""
        value = self._lookup(section, key)
        if value is not _NOT_FOUND:
            return value
        if fallback is not _NOT_FOUND:
            return fallback
        raise AirflowConfigException(f"section/key [{section}/{key}] not found in config")

    def getboolean(self, section: str, key: str, **kwargs: Any) -> bool:
        raw = self.get(section, key, **kwargs)
        if isinstance(raw, bool):
            return raw
        val = str(raw).lower().strip().split("#")[0].strip()
        if val in ("t", "true", "1"):
            return True
        if val in ("f", "false", "0"):
            return False
        raise AirflowConfigException(f'Failed to convert value to bool. Please check "{key}" key in "{section}" '
                                     f'section. Current value: "{val}".')

    def getint(self, section: str, key: str, **kwargs: Any) -> int:
        val = self.get(section, key, **kwargs)
        if val is None:
            raise AirflowConfigException(f'Failed to convert value None to int. Please check "{key}" key in '
                                         f'"{section}" section is set.')
        try:
            return int(val)
        except ValueError:
            try:
                if (float_val := float(val)) != (int_val := int(float_val)):
                    raise ValueError from None
                return int_val
            except (ValueError, OverflowError):
                raise AirflowConfigException(f'Failed to convert value to int. Please check "{key}" key in '
                                             f'"{section}" section. Current value: "{val}".') from None

    def getfloat(self, section: str, key: str, **kwargs: Any) -> float:
        val = self.get(section, key, **kwargs)
        if val is None:
            raise AirflowConfigException(f'Failed to convert value None to float. Please check "{key}" key in '
                                         f'"{section}" section is set.')
        try:
            return float(val)
        except ValueError:
            raise AirflowConfigException(f'Failed to convert value to float. Please check "{key}" key in '
                                         f'"{section}" section. Current value: "{val}".') from None

    def getlist(self, section: str, key: str, delimiter: str = ",", **kwargs: Any) -> Any:
        val = self.get(section, key, **kwargs)
        if isinstance(val, list) or val is None:
            return val
        return [] if val == "" else [item.strip() for item in val.split(delimiter)]

    def getimport(self, section: str, key: str, **kwargs: Any) -> Any:
        """The object the option names by dotted path (None when the option is empty)."""
        # lazy: import cost (module loading only for getimport)
        from updraft.sdk.module_loading import import_string

        path = self.get(section, key, **kwargs)
        if not path:
            return None
        try:
            return import_string(path)
        except ImportError as exc:
            log.warning(exc)
            raise AirflowConfigException(f'The object could not be loaded. Please check "{key}" key in "{section}" '
                                         f'section. Current value: "{path}".') from None

    def getjson(self, section: str, key: str, fallback: Any = None, **kwargs: Any) -> Any:
        """The option parsed as JSON; ``fallback`` (not parsed) when it is unset or empty."""
        data = self.get(section, key, fallback=None)
        if data is None or data == "":
            return fallback
        try:
            return json.loads(data)
        except json.JSONDecodeError as exc:
            raise AirflowConfigException(f"Unable to parse [{section}] {key!r} as valid json") from exc

    def gettimedelta(self, section: str, key: str, fallback: Any = None, **kwargs: Any) -> timedelta | None:
        val = self.get(section, key, fallback=fallback)
        if not val or isinstance(val, timedelta):
            return val or fallback
        try:
            return timedelta(seconds=int(val))
        except ValueError:
            raise AirflowConfigException(f'Failed to convert value to int. Please check "{key}" key in "{section}" '
                                         f'section. Current value: "{val}".') from None

    def get_mandatory_value(self, section: str, key: str, **kwargs: Any) -> str:
        value = self.get(section, key, **kwargs)
        if value is None:
            raise ValueError(f"The value {section}/{key} should be set!")
        return value

    def has_option(self, section: str, option: str, **kwargs: Any) -> bool:
        """Whether anything (environment, core or provider defaults) sets the option."""
        try:
            return self._lookup(section, option) is not _NOT_FOUND
        except AirflowConfigException:
            return False

    def getsection(self, section: str, **kwargs: Any) -> dict[str, Any] | None:
        """The section's options (defaults, then the environment's) with ints, floats and booleans converted;
        None when no default nor variable has the section."""
        section = section.lower()
        values: dict[str, Any] = {
            **{k: o["default"] for k, o in self._provider_descriptions.get(section, {}).items()
               if o.get("default") is not None},
            **self._core["defaults"].get(section, {}),
        }
        prefix = variable(section.replace(".", "_"), "")
        for name in sorted(os.environ):
            if name.startswith(prefix) and not name.endswith("_SECRET"):
                key = name[len(prefix):].removesuffix("_CMD").lower()
                value = self._from_environment(section, key)
                if value is not _NOT_FOUND:
                    values[key] = value
        if not values and not self.has_section(section):
            return None
        for key, val in values.items():
            values[key] = _converted(val)
        return values

    def has_section(self, section: str) -> bool:
        return section.lower() in self._core["defaults"] or section.lower() in self._provider_descriptions

    def set(self, section: str, option: str, value: str | None = None) -> None:
        raise UnsupportedFeatureError("conf.set", "Updraft's configuration is its environment variables; set "
                                      f"{variable(section, option)} in the environment instead")


def _converted(val: Any) -> Any:
    try:
        return int(val)
    except (TypeError, ValueError):
        pass
    try:
        return float(val)
    except (TypeError, ValueError):
        pass
    if isinstance(val, str) and val.lower() in ("t", "true"):
        return True
    if isinstance(val, str) and val.lower() in ("f", "false"):
        return False
    return val


conf = AirflowConfigParser()
