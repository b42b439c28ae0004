"""The real provider set the tests use, as `make install` installed it: Airflow met by stubs, Updraft's packages
shared, and no file of Updraft's ``airflow`` package is a file of any provider wheel."""

from __future__ import annotations

import csv
from importlib import metadata
from pathlib import Path

import airflow
from tests.provider_packages import installed_providers
from updraft.requirements.constraints import runtime_versions

SHIM = Path(airflow.__file__).parent


def test_the_providers_install_without_airflow_itself_and_with_updrafts_own_versions():
    installed = installed_providers()
    lock = dict(line.split("==") for line in installed.lock.splitlines())
    assert lock["apache-airflow"] == "3.3.2+updraft"
    assert "apache-airflow-core" not in lock or lock["apache-airflow-core"].endswith("+updraft")
    assert not (installed.site / "airflow" / "__init__.py").exists()
    assert not (installed.site / "airflow" / "sdk").exists()  # the task SDK is Updraft's
    ours = runtime_versions()
    shared = {name: version for name, version in lock.items() if name.lower().replace("_", "-") in ours}
    assert shared and all(ours[name.lower().replace("_", "-")] == version for name, version in shared.items())
    names = {info["package-name"] for info in installed.providers}
    assert {"apache-airflow-providers-amazon", "apache-airflow-providers-http",
            "apache-airflow-providers-common-sql", "apache-airflow-providers-snowflake"} <= names
    http = next(info for info in installed.providers if info["package-name"] == "apache-airflow-providers-http")
    assert http["version"] == "6.3.0"
    assert [t["connection-type"] for t in http["connection-types"]] == ["http"]


def test_no_file_of_updrafts_airflow_package_is_a_file_a_provider_wheel_installs():
    ours = {str(path.relative_to(SHIM.parent)) for path in SHIM.rglob("*.py")}
    assert sorted(str(p.relative_to(SHIM / "providers")) for p in (SHIM / "providers").rglob("*.py")) == ["__init__.py"]
    theirs: set[str] = set()
    for dist in metadata.distributions(path=[str(installed_providers().site)]):
        record = dist.read_text("RECORD") or ""
        theirs |= {row[0] for row in csv.reader(record.splitlines()) if row and row[0].startswith("airflow/")}
    assert theirs, "the providers' RECORDs list their files"
    assert ours & theirs == set()
