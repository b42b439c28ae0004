"""The deploy tier: ``cdk deploy -c env=dev`` on the embedded AWS, once per session (``environment``; the module
``test_vpc_mode`` deploys the same environment in an existing VPC, made first on that AWS, with ``embedded_aws``).

The dev stack is synthesized as ``cdk synth -c env=dev`` does, with the real bundle (Updraft's lock installed for
the Lambda platform: from the requirements cache after the first run, else from the package index), then deployed
as the CLI deploys it (``deployment``) onto a moto server in this process whose Lambda runs each invoke in a
Lambda-like process from the function's deployed zip (``lambda_runtime``), with the few moto mends the stack needs
(``moto_patches``). Docker is made unusable before aws_cdk starts, as in the infra tier: synth needs none.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ["CDK_DOCKER"] = "/nonexistent/docker-is-not-needed-at-synth"
cdk = pytest.importorskip("aws_cdk", reason="the infra extra is not installed (pip install -e '.[infra]')")

from tests.deploy.deployment import Deployed, create_stack  # noqa: E402
from tests.deploy.lambda_runtime import RUNTIME_PYTHON, LambdaRuntime, runtime_packages  # noqa: E402

if TYPE_CHECKING:
    from infra.config import EnvironmentSettings

ROOT = Path(__file__).resolve().parents[2]
STACK = "Updraft-dev"
ACCOUNT, REGION = "123456789012", "us-east-1"
# Where the functions' files go (each deployed zip unzipped, the image's /app, every run's private /tmp): a tmpfs
# when there is one. Unzipping and deleting a bundle's ~6,000 files on a disk mounted with online discard took up
# to 30 s per module under load (the files written back by then); on tmpfs, well under a second.
WORK_ROOT = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else tempfile.gettempdir()


@dataclass(frozen=True)
class Assembly:
    outdir: Path
    template: dict[str, Any]

    @property
    def resources(self) -> dict[str, Any]:
        resources: dict[str, Any] = self.template["Resources"]
        return resources


class Session:
    """boto3 clients on the embedded AWS (what a deployer or a test caller uses; never a function's)."""

    def __init__(self, url: str) -> None:
        import boto3

        self.url = url
        self._session = boto3.Session(region_name=REGION, aws_access_key_id="AKIADEPLOYER",
                                      aws_secret_access_key="secret")
        self._clients: dict[str, Any] = {}

    def client(self, name: str) -> Any:
        if name not in self._clients:
            self._clients[name] = self._session.client(name, endpoint_url=self.url)  # type: ignore[call-overload]
        return self._clients[name]


@dataclass(frozen=True)
class Environment:
    """The deployed stack: its resources, the AWS it is on and the Lambda runtime running its functions."""

    assembly: Assembly
    deployed: Deployed
    session: Session
    runtime: LambdaRuntime

    def function(self, name: str) -> str:
        """The deployed name of Updraft's ``name`` function (its handler ``functions.<name>.handler.handler``)."""
        (found,) = [self.deployed.physical[k] for k, v in self.assembly.resources.items()
                    if v["Type"] == "AWS::Lambda::Function"
                    and v["Properties"].get("Handler") == f"functions.{name}.handler.handler"]
        return found


def synthesize(outdir: Path, stack_name: str, settings: EnvironmentSettings) -> Assembly:
    """``stack_name`` of ``settings`` as ``cdk synth`` builds it into ``outdir``, the real bundle included. The built
    bundles are kept beside the requirements cache across sessions (keyed by their content, built atomically, as in
    cdk.out). Asset staging is off (CDK's ``aws:cdk:disable-asset-staging``, as SAM's CLI sets it): the asset
    manifest names the bundles where they were built instead of a copy of each in ``outdir`` (the same files, so
    what is published is what ``cdk deploy`` publishes), sparing a copy of every bundle per synth."""
    from infra.constructs.bundling import BUILD_FOLDER
    from infra.stack import UpdraftStack
    from updraft.requirements.install import default_cache

    bundles = default_cache().parent / "deploy-tier-bundles"
    bundles.mkdir(parents=True, exist_ok=True)
    (outdir / BUILD_FOLDER).symlink_to(bundles, target_is_directory=True)
    context = {**json.loads((ROOT / "cdk.json").read_text())["context"], "aws:cdk:disable-asset-staging": True}
    app = cdk.App(context=context, outdir=str(outdir))
    UpdraftStack(app, stack_name, settings=settings, env=cdk.Environment(account=ACCOUNT, region=REGION))
    template = app.synth().get_stack_by_name(stack_name).template
    return Assembly(outdir, template)


@pytest.fixture(scope="session")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    """The dev stack as ``cdk synth -c env=dev`` builds it (:func:`synthesize`), once per session."""
    from infra.config import settings_for

    return synthesize(tmp_path_factory.mktemp("cdk.out"), STACK, settings_for("dev"))


@dataclass(frozen=True)
class EmbeddedAws:
    """A fresh embedded AWS whose Lambda runs deployed zips (``runtime``), before anything is deployed on it."""

    session: Session
    runtime: LambdaRuntime

    def deploy(self, assembly: Assembly, stack_name: str = STACK) -> Environment:
        """``cdk deploy`` of ``assembly``'s ``stack_name``: CREATE_COMPLETE (else raises)."""
        return Environment(assembly, create_stack(self.session, self.runtime, assembly.outdir, stack_name),
                           self.session, self.runtime)


@contextlib.contextmanager
def embedded_aws() -> Iterator[EmbeddedAws]:
    """A moto server in this process whose Lambda runs every invoke in a Lambda-like process, with the moto mends
    the stack needs; moto's state (global to the process) is reset and its Lambda unpatched on leaving, so the
    worker's next tests start clean. The functions' files (task roots, private ``/tmp``) live in :data:`WORK_ROOT`."""
    if not Path(RUNTIME_PYTHON).exists() or shutil.which("setpriv") is None:
        pytest.skip(f"the deploy tier runs functions with {RUNTIME_PYTHON} (a Python 3.11 outside any venv) "
                    "through setpriv (util-linux): not both here")
    from moto import settings
    from moto.awslambda.models import LambdaFunction

    from infra.packages import runtime_site
    from tests.deploy.moto_patches import patched
    from updraft.local.moto_server import EmbeddedAwsServer

    assert LambdaFunction.invoke  # moto's Lambda models are loaded before the patch
    work = Path(tempfile.mkdtemp(prefix="updraft-deploy-", dir=WORK_ROOT))
    server = EmbeddedAwsServer(concurrent=True).start()
    try:
        # Lambda keeps moto's default (Docker) backend, whose invoke the runtime replaces: moto's no-Docker
        # backend answers the invoke API with the request's payload without reaching a function.
        _moto_config(server.url, execute_state_machine=True)
        @contextlib.contextmanager
        def outside_request() -> Iterator[None]:
            """Let go of the server's guard (an RLock this request thread holds) while the function runs."""
            others = server.guard._others
            others.release()
            try:
                yield
            finally:
                others.acquire()

        runtime = LambdaRuntime(server.url, work, runtime_packages(runtime_site("x86_64").site, work / "runtime"),
                                outside_request)
        runtime.install()
        try:
            with patched(server.host, server.port):
                assert settings.moto_server_port() == str(server.port)
                yield EmbeddedAws(Session(server.url), runtime)
        finally:
            runtime.uninstall()
            server.reset()
            # moto's config is the process's (its models are module globals): the next tests in this worker
            # expect state machines that do not run (a deferral's execution stays RUNNING until stopped).
            _moto_config(server.url, execute_state_machine=False)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def environment(assembly: Assembly) -> Iterator[Environment]:
    """The dev stack deployed (CREATE_COMPLETE) on a fresh embedded AWS for a test module."""
    with embedded_aws() as aws:
        yield aws.deploy(assembly)


def _moto_config(url: str, *, execute_state_machine: bool) -> None:
    """Whether moto's Step Functions runs the states of an execution (off by default)."""
    config = {"stepfunctions": {"execute_state_machine": execute_state_machine}}
    urllib.request.urlopen(urllib.request.Request(
        f"{url}/moto-api/config", data=json.dumps(config).encode(), method="POST",
        headers={"Content-Type": "application/json"}), timeout=10).close()
