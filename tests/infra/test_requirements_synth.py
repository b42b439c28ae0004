"""An environment's requirements on AWS: ``cdk synth`` installs them for the Lambda platform against the lock of
Updraft's packages, into what runs DAG code only (the parser, worker and trigger-check bundles and the Fargate
worker image), with one lock. No index is used: the wheels are built on the spot (``fake_wheels``), and Updraft's
own packages are left out of the bundles (``bundle_dependencies=False``) as in the tier's other synths."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aws_cdk as cdk
import pytest

from infra.config import PLACEHOLDER_ACCOUNT, PLACEHOLDER_REGION, settings_for
from infra.constructs import UpdraftEnvironment
from infra.constructs.bundling import BUILD_FOLDER, LOCK_FILE, PROVIDERS_FILE, build, bundle_key
from infra.packages import RUNTIME_LOCK, Packages, read_lock, resolve
from tests.infra.cfn import render
from tests.unit.requirements.fake_wheels import build_wheel, fake_provider
from updraft.requirements.dag_packages import pythonpath
from updraft.requirements.install import RequirementsConflict
from updraft.resources import ResourceNames

ROOT = Path(__file__).resolve().parents[2]
DAG_CODE = ("parser", "worker", "trigger_check")
UPDRAFTS = ("scheduler", "api", "asset_events")
ACME_HOOK = "dag_packages/airflow/providers/acme/hooks/acme.py"
RUNTIME = read_lock(RUNTIME_LOCK.read_text())


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """pip sees only the wheels in this folder; the installs go to a cache of this module's own."""
    folder = tmp_path_factory.mktemp("wheels")
    saved = {k: os.environ.get(k) for k in ("PIP_NO_INDEX", "PIP_FIND_LINKS", "UPDRAFT_REQUIREMENTS_CACHE")}
    os.environ.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(folder),
                      UPDRAFT_REQUIREMENTS_CACHE=str(tmp_path_factory.mktemp("requirements-cache")))
    fake_provider(folder, requires=("six>=1.0",))  # six: one of Updraft's own packages (in the lock)
    build_wheel(folder, "six", RUNTIME["six"], {"six.py": "X = 1\n"})
    for version in ("1.0", "1.1"):
        build_wheel(folder, "acme-lib", version, {"acme_lib.py": f"VERSION = {version!r}\n"})
    build_wheel(folder, "old-aws-thing", "1.0", {"old_aws_thing.py": ""}, requires=("botocore<1.0",))
    yield folder
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _settings(tmp: Path, text: str) -> object:
    requirements = tmp / "requirements.txt"
    requirements.write_text(text)
    return dataclasses.replace(settings_for("dev"), name="req", requirements=str(requirements))


@dataclasses.dataclass(frozen=True)
class Synth:
    resources: dict
    outdir: Path
    assets: dict

    def function(self, name: str) -> dict:
        """Updraft's ``name`` function, by its name (an image function has no handler to find it by)."""
        wanted = getattr(ResourceNames("req"), f"{name}_function")
        (found,) = [r["Properties"] for r in self.resources.values()
                    if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("FunctionName") == wanted]
        return found

    def env(self, name: str) -> dict[str, str]:
        return render(self.function(name)["Environment"]["Variables"])

    def zip_folder(self, name: str) -> Path:
        key = self.function(name)["Code"]["S3Key"]
        (asset,) = [a for a in self.assets["files"].values()
                    if any(d["objectKey"] == key for d in a["destinations"].values())]
        return self.outdir / asset["source"]["path"]

    def image_contexts(self) -> dict[str, Path]:
        """Each image asset's staged context by its Dockerfile."""
        return {image["source"]["dockerFile"]: self.outdir / image["source"]["directory"]
                for image in self.assets["dockerImages"].values()}


def _synth(outdir: Path, settings: object, **kwargs: object) -> Synth:
    app = cdk.App(context=json.loads((ROOT / "cdk.json").read_text())["context"], outdir=str(outdir))
    stack = cdk.Stack(app, "Req", env=cdk.Environment(account=PLACEHOLDER_ACCOUNT, region=PLACEHOLDER_REGION))
    UpdraftEnvironment(stack, "Updraft", settings=settings, bundle_dependencies=False, **kwargs)  # type: ignore[arg-type]
    template = app.synth().get_stack_by_name("Req").template
    return Synth(template["Resources"], outdir, json.loads((outdir / "Req.assets.json").read_text()))


@pytest.fixture(scope="module")
def zipped(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Synth:
    tmp = tmp_path_factory.mktemp("zipped")
    return _synth(tmp / "cdk.out", _settings(tmp, "apache-airflow-providers-acme==1.0.0\nacme-lib==1.0\n"))


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_the_requirements_reach_dag_codes_functions_and_the_worker_image_with_one_lock(zipped: Synth) -> None:
    dag_code = {zipped.zip_folder(name) for name in DAG_CODE}
    updrafts = {zipped.zip_folder(name) for name in UPDRAFTS}
    assert len(dag_code) == 1 and len(updrafts) == 1 and dag_code != updrafts  # two bundles
    (bundle,), (own,) = dag_code, updrafts
    (context,) = zipped.image_contexts().values()
    image = context / "bundle"
    for folder in (bundle, image):
        assert {ACME_HOOK, "dag_packages/acme_lib.py", LOCK_FILE, PROVIDERS_FILE} <= _files(folder)
    # One lock: Updraft's packages and the requirements, the same in the bundle and the image.
    lock = read_lock((bundle / LOCK_FILE).read_text())
    assert (image / LOCK_FILE).read_text() == (bundle / LOCK_FILE).read_text()
    assert {k: lock[k] for k in RUNTIME} == RUNTIME
    assert {k: v for k, v in lock.items() if k not in RUNTIME} == {
        "apache-airflow-providers-acme": "1.0.0", "acme-lib": "1.0"}
    # six (which the provider needs) is Updraft's, at the lock's version, at the bundle's root: not copied twice.
    assert lock["six"] == RUNTIME["six"] and not [f for f in _files(bundle / "dag_packages") if "six" in f]
    # The scheduler's and the API's bundle holds no package of the requirements, only the providers' metadata.
    assert not (own / "dag_packages").exists()
    assert read_lock((own / LOCK_FILE).read_text()) == RUNTIME
    assert [info["package-name"] for info in json.loads((own / PROVIDERS_FILE).read_text())] == [
        "apache-airflow-providers-acme"]


def test_only_dag_codes_children_get_the_packages_on_their_path(zipped: Synth) -> None:
    for name in DAG_CODE:
        assert zipped.env(name)["UPDRAFT_DAG_PACKAGES"] == "/var/task/dag_packages"
    for name in UPDRAFTS:
        assert "UPDRAFT_DAG_PACKAGES" not in zipped.env(name)
    assert zipped.env("api")["UPDRAFT_PROVIDERS_INFO"] == "/var/task/providers.json"
    (task,) = [r["Properties"] for r in zipped.resources.values() if r["Type"] == "AWS::ECS::TaskDefinition"]
    container = {e["Name"]: render(e["Value"]) for e in task["ContainerDefinitions"][0]["Environment"]}
    assert container["UPDRAFT_DAG_PACKAGES"] == "/app/dag_packages"
    # A child started as the fork and task servers start DAG code (Updraft's root, then the DAG packages)
    # imports the provider from the deployed bundle; from Updraft's own bundle it cannot.
    script = "from airflow.providers.acme.hooks.acme import AcmeHook; import acme_lib; print(acme_lib.VERSION)"
    for name, found in (("worker", True), ("scheduler", False)):
        root = zipped.zip_folder(name)
        env = {**os.environ, **zipped.env(name)}
        env["UPDRAFT_DAG_PACKAGES"] = env.get("UPDRAFT_DAG_PACKAGES", "").replace("/var/task", str(root))
        env["PYTHONPATH"] = pythonpath(str(root), {**env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=root,
                              check=False)
        assert (done.returncode == 0, done.stdout.strip()) == ((True, "1.0") if found else (False, "")), done.stderr


def test_the_dag_code_asset_hash_follows_the_requirements(wheels: Path, tmp_path: Path) -> None:
    """A library's new version changes the DAG-code bundle (and so the image context's lock) only; a provider's
    also changes the providers' metadata Updraft's own bundle holds for the API."""
    def keys(text: str) -> tuple[str, str]:
        packages = resolve(_settings(tmp_path, text))  # type: ignore[arg-type]
        return (bundle_key(packages, dag_code=False, dependencies=True, architecture="x86_64"),
                bundle_key(packages, dag_code=True, dependencies=True, architecture="x86_64"))

    own, dag = keys("apache-airflow-providers-acme==1.0.0\nacme-lib==1.0\n")
    assert keys("apache-airflow-providers-acme==1.0.0\nacme-lib==1.0\n") == (own, dag)
    own_lib, dag_lib = keys("apache-airflow-providers-acme==1.0.0\nacme-lib==1.1\n")
    assert own_lib == own and dag_lib != dag
    fake_provider(wheels, version="1.1.0")
    own_provider, dag_provider = keys("apache-airflow-providers-acme==1.1.0\nacme-lib==1.0\n")
    assert own_provider != own and dag_provider not in (dag, dag_lib)
    no_requirements = Packages(RUNTIME, None)
    assert bundle_key(no_requirements, dag_code=False, dependencies=True, architecture="x86_64") not in (own, dag)


def test_a_conflict_with_updrafts_lock_fails_the_synth_naming_the_packages(wheels: Path, tmp_path: Path) -> None:
    app = cdk.App(outdir=str(tmp_path / "cdk.out"))
    stack = cdk.Stack(app, "Req")
    with pytest.raises(RequirementsConflict) as caught:
        UpdraftEnvironment(stack, "Updraft", settings=_settings(tmp_path, "old-aws-thing\n"),  # type: ignore[arg-type]
                           bundle_dependencies=False)
    message = str(caught.value)
    assert "environment 'req'" in message and "old-aws-thing 1.0 depends on botocore<1.0" in message
    assert f"Updraft runs with botocore=={RUNTIME['botocore']}" in message  # the lock's version, not this venv's


def test_a_set_too_large_for_a_zip_makes_dag_codes_functions_container_images(wheels: Path, tmp_path: Path) -> None:
    """The limit is Lambda's 250 MB unzipped; here it is set between Updraft's bundle and the DAG-code one."""
    settings = _settings(tmp_path, "apache-airflow-providers-acme==1.0.0\nacme-lib==1.0\n")
    own, dag = (build(resolve(settings), dag_code=dag_code, dependencies=False, architecture="x86_64",  # type: ignore[arg-type]
                      workdir=tmp_path / "cdk.out" / BUILD_FOLDER) for dag_code in (False, True))
    assert own.size < dag.size
    big = _synth(tmp_path / "cdk.out", settings, zip_limit_bytes=own.size)  # the synth finds both built
    for name in DAG_CODE:
        function = big.function(name)
        assert function["PackageType"] == "Image" and "ImageUri" in function["Code"]
        assert function["ImageConfig"] == {"Command": [f"functions.{name}.handler.handler"]}
        assert "Runtime" not in function and "Handler" not in function
        assert big.env(name)["UPDRAFT_DAG_PACKAGES"] == "/var/task/dag_packages"
    for name in UPDRAFTS:
        assert big.function(name)["Runtime"] == "python3.11" and "S3Key" in big.function(name)["Code"]
    images = big.image_contexts()
    assert set(images) == {"Dockerfile", "lambda.Dockerfile"}  # the Fargate worker's and the functions'
    lambda_context = images["lambda.Dockerfile"]
    assert {ACME_HOOK, LOCK_FILE} <= _files(lambda_context / "bundle")
    assert not (lambda_context / "Dockerfile").exists()
    assert (lambda_context / "bundle" / LOCK_FILE).read_text() == (
        images["Dockerfile"] / "bundle" / LOCK_FILE).read_text()
    dockerfile = (lambda_context / "lambda.Dockerfile").read_text()
    assert "FROM public.ecr.aws/lambda/python:3.11" in dockerfile and "COPY bundle/ ${LAMBDA_TASK_ROOT}/" in dockerfile
