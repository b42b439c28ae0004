"""Lambda on the embedded AWS for the deploy tier: every invoke moto receives runs the deployed function's real zip.

moto runs Lambda code only in Docker (shared/notes/aws-offline.md 2c): without it an invoke echoes its payload,
S3 notifications to Lambda are dropped and custom resources never answer. The one patch here replaces
``LambdaFunction.invoke`` (what moto's invoke API, its S3 notifications, EventBridge targets and custom resources
all call) with a Lambda-like process:

* the function's code as moto holds it (the zip CloudFormation read from the asset bucket), unzipped once into a
  root-owned folder the function's user can only read (``/var/task`` is read-only on Lambda);
* a clean Python 3.11 (``/usr/bin/python3.11 -I -S``: no site-packages, no PYTHONPATH; the bundle brings all it
  imports), run as uid/gid 65534, its own empty ``TMPDIR``, the function's environment from the template plus
  what Lambda sets, the function's timeout;
* the runtime's own boto3 (``/var/runtime`` on Lambda: CDK's custom-resource handlers import it) after the task
  root on the path, as Lambda orders them: a bundle's own boto3 comes first;
* the handler imported from the task root by ``lambda_bootstrap.py`` and called once (each invoke is a cold start).

Synchronous invokes (``RequestResponse``: the invoke API, Step Functions' lambda tasks) run at once. Asynchronous
ones (``Event`` invokes, and what moto's services invoke internally: S3 notifications, custom resources, rule
targets) wait in ``pending`` until the test drives them with :meth:`LambdaRuntime.drain`, so a test decides when
the deployed system moves, as a tick or a delivery would.

A function whose runtime is not Python (CDK's Node.js custom-resource providers) cannot run here: its custom
resource is answered SUCCESS by :meth:`LambdaRuntime.answer_node_custom_resource` and listed in ``stood_in``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.deploy.moto_patches import as_cloudformation_sends

BOOTSTRAP = Path(__file__).with_name("lambda_bootstrap.py")
MARKER = "\x1eUPDRAFT-LAMBDA-RESULT"
RUNTIME_PYTHON = "/usr/bin/python3.11"  # Debian's, outside any venv: the clean runtime interpreter
UID = 65534


@dataclasses.dataclass
class Invocation:
    """One run of a deployed function: what it was given and what it answered."""

    function: str
    event: Any
    asynchronous: bool
    result: Any = None
    error: dict[str, Any] | None = None
    import_ms: float | None = None
    invoke_ms: float | None = None
    wall_ms: float = 0.0
    output: str = ""
    role: str = ""  # the function's execution role (its ARN); a Fargate task's task role
    exit_code: int | None = None  # a Fargate task's container (``fargate_runtime``)
    calls: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # its AWS calls (lambda_bootstrap)


class LambdaRuntime:
    """Runs deployed functions as Lambda does (see the module notes); ``invocations`` keeps every run."""

    def __init__(self, endpoint_url: str, workdir: Path, runtime_packages: Path,
                 outside_request: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
                 ) -> None:
        self.endpoint_url = endpoint_url
        # A synchronous invoke runs while moto handles the invoke request: what lets the function's own calls
        # into the embedded AWS through meanwhile (its guard serializes the request threads of other services).
        self.outside_request = outside_request
        self.runtime_packages = runtime_packages
        self.workdir = workdir
        self.workdir.chmod(0o755)
        self.pending: list[tuple[Any, Any]] = []
        self.invocations: list[Invocation] = []
        self.stood_in: list[str] = []
        self._lock = threading.Lock()
        self._original: Callable[..., Any] | None = None

    # -- the moto patch -------------------------------------------------------------------------------------------
    def install(self) -> None:
        from moto.awslambda.models import LambdaFunction

        runtime = self
        self._original = LambdaFunction.invoke

        def invoke(fn: Any, body: str | bytes, request_headers: Any, response_headers: Any) -> bytes:
            event = as_cloudformation_sends(json.loads(body) if body else {})
            headers = {k.lower(): v for k, v in dict(request_headers or {}).items()}
            kind = headers.get("x-amz-invocation-type", "Event" if not headers else "RequestResponse")
            if kind != "RequestResponse":
                with runtime._lock:
                    runtime.pending.append((fn, event))
                return b""
            with runtime.outside_request():
                done = runtime.run(fn, event, asynchronous=False)
            if done.error is not None:
                response_headers["x-amz-function-error"] = "Unhandled"
                return json.dumps(done.error).encode()
            return json.dumps(done.result).encode()

        LambdaFunction.invoke = invoke  # type: ignore[method-assign]

    def uninstall(self) -> None:
        from moto.awslambda.models import LambdaFunction

        if self._original is not None:
            LambdaFunction.invoke = self._original  # type: ignore[method-assign]

    # -- driving ----------------------------------------------------------------------------------------------------
    def drain(self, *, limit: int = 50, only: Callable[[str], bool] | None = None) -> list[Invocation]:
        """Run the pending asynchronous invokes in order (those they queue too) until none is left or ``limit``
        ran; with ``only``, the others stay pending. Returns the runs."""
        ran: list[Invocation] = []
        while len(ran) < limit:
            with self._lock:
                index = next((i for i, (fn, _) in enumerate(self.pending)
                              if only is None or only(fn.function_name)), None)
                if index is None:
                    break
                fn, event = self.pending.pop(index)
            if not fn.run_time.startswith("python"):
                self.answer_node_custom_resource(fn, event)
                continue
            ran.append(self.run(fn, event, asynchronous=True))
        return ran

    def run(self, fn: Any, event: Any, *, asynchronous: bool) -> Invocation:
        """Run ``fn`` (a moto LambdaFunction) once on ``event`` in a Lambda-like process."""
        root = self._task_root(fn.code_bytes)
        private_tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=self.workdir))
        os.chown(private_tmp, UID, UID)
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": ":UTC", "TMPDIR": str(private_tmp),
            "LAMBDA_TASK_ROOT": str(root), "LAMBDA_RUNTIME_DIR": "/var/runtime",
            "AWS_REGION": fn.region, "AWS_DEFAULT_REGION": fn.region, "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_ACCESS_KEY_ID": "AKIADEPLOYEDROLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token",
            "AWS_EXECUTION_ENV": f"AWS_Lambda_{fn.run_time}", "AWS_LAMBDA_FUNCTION_NAME": fn.function_name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(fn.memory_size), "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_TIMEOUT": str(fn.timeout), "AWS_LAMBDA_LOG_GROUP_NAME": fn.logs_group_name,
            "UPDRAFT_TEST_FUNCTION_ARN": fn.function_arn, "UPDRAFT_TEST_REQUEST_ID": str(uuid.uuid4()),
            **{k: str(v) for k, v in fn.environment_vars.items()},
        }
        argv = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups",
                RUNTIME_PYTHON, "-I", "-S", str(self._bootstrap()), str(root), fn.handler, str(self.runtime_packages)]
        started = time.monotonic()
        done = Invocation(fn.function_name, event, asynchronous, role=fn.role)
        try:
            proc = subprocess.run(argv, input=json.dumps(event), capture_output=True, text=True, env=env,
                                  cwd=root, timeout=float(fn.timeout), check=False)
            output, _, answer = proc.stdout.rpartition(MARKER)
            done.output = output + proc.stderr
            if answer.strip():
                reply = json.loads(answer)
                done.import_ms, done.invoke_ms = reply.get("import_ms"), reply.get("invoke_ms")
                done.calls = reply.get("calls", [])
                if "errorType" in reply:
                    done.error = {k: reply[k] for k in ("errorType", "errorMessage", "stackTrace")}
                else:
                    done.result = reply["result"]
            else:
                done.error = {"errorType": "Runtime.ExitError", "errorMessage": f"exit {proc.returncode}",
                              "stackTrace": []}
        except subprocess.TimeoutExpired as exc:
            done.output = str(exc.stdout or "") + str(exc.stderr or "")
            done.error = {"errorType": "Sandbox.Timedout",
                          "errorMessage": f"Task timed out after {fn.timeout} seconds", "stackTrace": []}
        finally:
            shutil.rmtree(private_tmp, ignore_errors=True)
        done.wall_ms = round((time.monotonic() - started) * 1000, 1)
        self.invocations.append(done)
        return done

    def answer_node_custom_resource(self, fn: Any, event: dict[str, Any]) -> None:
        """A Node.js custom-resource provider (CDK's): its code cannot run here; its request is answered SUCCESS
        (recorded in ``stood_in``; the deploy test checks what stands in for it)."""
        assert "ResponseURL" in event, f"{fn.function_name}: only custom-resource requests can be stood in for"
        self.stood_in.append(f"{event['ResourceType']} {event['LogicalResourceId']} ({fn.run_time})")
        body = json.dumps({"Status": "SUCCESS", "PhysicalResourceId": event["LogicalResourceId"],
                           "StackId": event["StackId"], "RequestId": event["RequestId"],
                           "LogicalResourceId": event["LogicalResourceId"], "Data": {}}).encode()
        url = event["ResponseURL"]
        url = url if url.startswith("http") else f"http://{url}"
        urllib.request.urlopen(urllib.request.Request(url, data=body, method="PUT", headers={"Content-Type": ""}),
                               timeout=10).close()

    # -- code -------------------------------------------------------------------------------------------------------
    def _task_root(self, code: bytes) -> Path:
        """The zip unzipped once per content into a folder owned by root, readable (not writable) by the user."""
        root = self.workdir / "task" / hashlib.sha256(code).hexdigest()[:16]
        if not root.is_dir():
            staging = Path(tempfile.mkdtemp(dir=self.workdir))
            with zipfile.ZipFile(io.BytesIO(code)) as archive:
                archive.extractall(staging)
            for path in (staging, *staging.rglob("*")):
                path.chmod(0o755 if path.is_dir() else 0o644)
            root.parent.mkdir(mode=0o755, exist_ok=True)
            staging.rename(root)
        return root

    def _bootstrap(self) -> Path:
        target = self.workdir / BOOTSTRAP.name
        if not target.exists():
            shutil.copyfile(BOOTSTRAP, target)
            target.chmod(0o644)
        return target


RUNTIME_PACKAGES = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six.py")


def runtime_packages(site: Path, target: Path) -> Path:
    """``target`` holding what the Lambda Python runtime provides beside the interpreter (boto3 and its
    dependencies), copied from ``site`` (the Lambda platform's install of Updraft's lock)."""
    if not target.is_dir():
        staging = Path(tempfile.mkdtemp(dir=target.parent))
        for name in RUNTIME_PACKAGES:
            source = site / name
            if source.is_dir():
                shutil.copytree(source, staging / name)
            else:
                shutil.copyfile(source, staging / name)
        for path in (staging, *staging.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        staging.rename(target)
    return target


def zip_folder(folder: Path) -> bytes:
    """A folder zipped as cdk-assets zips a file asset (paths relative to it, files only)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()
