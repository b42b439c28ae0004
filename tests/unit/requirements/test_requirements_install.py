"""Installing an environment's requirements: into a cache keyed by content, apart from Updraft's packages, with
the providers' metadata read at install time and conflicts with Updraft's own packages named. No index is used:
the wheels are built on the spot (``fake_wheels``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.unit.requirements.fake_wheels import build_wheel, fake_provider
from updraft.requirements import install as installer
from updraft.requirements.constraints import runtime_versions
from updraft.requirements.install import Platform, RequirementsConflict, install

pytestmark = pytest.mark.slow


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """pip sees only the wheels in the returned folder."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    return wheels


def test_a_provider_is_installed_once_into_the_cache_with_its_lock_metadata_and_refusals(offline, tmp_path,
                                                                                          monkeypatch):
    fake_provider(offline)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("apache-airflow-providers-acme==1.0.0\napache-airflow==2.10.0\n")
    cache = tmp_path / "cache"
    first = install(requirements, cache)
    assert (first.site / "airflow" / "providers" / "acme" / "hooks" / "acme.py").is_file()
    assert not (first.site / "airflow" / "__init__.py").exists()  # the shim's stays the only airflow/__init__
    assert first.lock == ("apache-airflow-providers-acme==1.0.0\n"  # and Updraft's own providers, as stubs
                          "apache-airflow-providers-common-messaging==2.1.2+updraft\n"
                          "apache-airflow-providers-standard==1.21.0+updraft\n")
    assert first.providers == [{"package-name": "apache-airflow-providers-acme", "name": "Acme", "version": "1.0.0",
                                "documentation-url": None,  # the wheel names no "Documentation" project URL
                                "connection-types": [{"connection-type": "acme", "hook-class-name":
                                                      "airflow.providers.acme.hooks.acme.AcmeHook",
                                                      "hook-name": "Acme"}]}]
    assert [(line.text, line.action) for line in first.not_installed] == [("apache-airflow==2.10.0", "refuse")]
    assert json.loads((first.root / "report.json").read_text())[0]["text"] == "apache-airflow==2.10.0"

    monkeypatch.setattr(installer, "_build", lambda *args: pytest.fail("installed again"))
    assert install(requirements, cache).root == first.root  # the same file: the cache answers

    monkeypatch.undo()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(offline))
    fake_provider(offline, version="1.1.0")
    requirements.write_text("apache-airflow-providers-acme==1.1.0\n")
    changed = install(requirements, cache)
    assert changed.root != first.root and changed.lock.startswith("apache-airflow-providers-acme==1.1.0\n")
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) == sorted(
        [first.root.name, changed.root.name])


def test_a_provider_needing_airflow_gets_updrafts_stub_and_never_apache_airflow(offline, tmp_path):
    """Every provider requires apache-airflow: the stub meets it (3.3.2, nothing installed but metadata)."""
    fake_provider(offline, requires=("apache-airflow>=2.11.0", "apache-airflow-providers-standard>=1.0"))
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("apache-airflow-providers-acme\n")
    # The stub requires what Airflow's core brings: empty stand-ins here (at Updraft's version where Updraft has
    # the package too), as no index is reachable.
    ours = runtime_versions()
    for spec in installer.stubs.CORE_BRINGS:
        name = spec.split(">")[0].split("!")[0]
        build_wheel(offline, name, ours.get(name, "99.0"), {})
    installed = install(requirements, tmp_path / "cache")
    lock = installed.lock.splitlines()
    assert "apache-airflow==3.3.2+updraft" in lock and "apache-airflow-providers-standard==1.21.0+updraft" in lock
    assert not any(line.startswith(("apache-airflow-core==3.3.2\n", "apache-airflow-task-sdk==1.3.2\n"))
                   for line in lock)
    files = sorted(str(p.relative_to(installed.site)) for p in installed.site.rglob("*") if p.is_file()
                   and "apache_airflow-" in str(p))
    assert files and all(".dist-info/" in f for f in files)  # metadata only


def test_a_conflict_with_updrafts_own_packages_fails_the_install_naming_both_sides(offline, tmp_path):
    build_wheel(offline, "old-aws-thing", "1.0", {"old_aws_thing.py": ""}, requires=("botocore<1.0",))
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("old-aws-thing\n")
    with pytest.raises(RequirementsConflict) as caught:
        install(requirements, tmp_path / "cache")
    message = str(caught.value)
    assert "old-aws-thing 1.0 depends on botocore<1.0" in message
    assert "Updraft runs with botocore==" in message
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")] == []  # nothing kept


def test_dag_code_finds_an_installed_provider_beside_updrafts_own_even_after_airflow_was_imported(offline, tmp_path):
    fake_provider(offline)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("apache-airflow-providers-acme\n")
    site = install(requirements, tmp_path / "cache").site
    script = ("import airflow.providers.standard.operators.python as std, airflow.providers.amazon as builtin\n"
              "from updraft.requirements.dag_packages import activate, from_environment\n"
              "activate(from_environment())\n"
              "from airflow.providers.acme.hooks.acme import AcmeHook\n"
              "print(AcmeHook.conn_type, std.PythonOperator.__module__, builtin.__file__.split('/')[-3])\n")
    env = {**os.environ, "UPDRAFT_DAG_PACKAGES": str(site)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["acme", "updraft.operators.python", "builtin"]


def test_a_deployment_installs_for_its_platform_against_its_own_pinned_versions(offline, tmp_path):
    """What ``cdk synth`` does (infra.packages): Updraft's versions are the deployed lock's, not this interpreter's
    (here a botocore this venv does not have), and the install is for the Lambda platform, cached apart."""
    build_wheel(offline, "old-aws-thing", "1.0", {"old_aws_thing.py": ""}, requires=("botocore<1.0",))
    build_wheel(offline, "botocore", "0.9", {"botocore_marker.py": ""})
    build_wheel(offline, "botocore", "0.8", {"botocore_marker.py": ""})
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("old-aws-thing\n")
    lambda_platform = Platform("3.11", ("manylinux2014_x86_64",))
    assert lambda_platform.pip_args() == ("--platform", "manylinux2014_x86_64", "--python-version", "3.11",
                                          "--implementation", "cp", "--only-binary=:all:")
    deployed = install(requirements, tmp_path / "cache", runtime={"botocore": "0.8"}, platform=lambda_platform)
    assert deployed.lock == ("apache-airflow-providers-common-messaging==2.1.2+updraft\n"  # Updraft's own, as stubs
                             "apache-airflow-providers-standard==1.21.0+updraft\n"
                             "botocore==0.8\nold-aws-thing==1.0\n")  # the pin, not the newest (0.9)
    with pytest.raises(RequirementsConflict, match="Updraft runs with botocore=="):
        install(requirements, tmp_path / "cache")  # this interpreter's botocore: the conflict stays
    local = install(requirements, tmp_path / "cache", runtime={"botocore": "0.8"})
    assert local.root != deployed.root  # another platform: another folder
