"""Fargate on the embedded AWS for the deploy tier: a task RunTask recorded runs as the container would run it.

moto's ECS records ``RunTask`` and runs nothing (shared/notes/aws-offline.md 2e). :meth:`FargateRuntime.run` plays
the task the deployed scheduler or worker started: the image's content (the DAG-code bundle the image copies to
``/app``: the image asset's build context, which ``cdk deploy`` would build) made read-only, the container's command
from the task's overrides (else the image's ``python -m functions.worker.handler``), its environment the task
definition's plus the overrides' (the dispatch in ``UPDRAFT_DISPATCH``), the same clean Python 3.11 as the image's
(no site-packages), a non-root user and a private ``TMPDIR``. Its AWS calls are recorded (``lambda_bootstrap``)
and judged against the task role like a function's (the run joins ``LambdaRuntime.invocations``).

``kill_when``: polled while the container runs; once true, the container's processes are SIGKILLed, as ECS stops
a task that ran out of memory (its exit code then is 137, what ECS reports).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.deploy.lambda_runtime import MARKER, RUNTIME_PYTHON, UID, Invocation, LambdaRuntime

IMAGE_COMMAND = ["python", "-m", "functions.worker.handler"]  # infra/worker_image/Dockerfile's CMD
KILLED = 128 + signal.SIGKILL  # the exit code ECS reports for a container killed (out of memory included)


class FargateRuntime:
    def __init__(self, runtime: LambdaRuntime, image_context: Path) -> None:
        self.runtime = runtime
        self.app = self._image_app(image_context / "bundle")

    def _image_app(self, bundle: Path) -> Path:
        """The image's ``/app``: the bundle copied once, root-owned, readable (not writable) by the task's user."""
        app = self.runtime.workdir / "app"
        if not app.is_dir():
            staging = Path(tempfile.mkdtemp(dir=self.runtime.workdir))
            shutil.copytree(bundle, staging / "app", symlinks=True)
            for path in (staging / "app", *(staging / "app").rglob("*")):
                if not path.is_symlink():
                    path.chmod(0o755 if path.is_dir() else 0o644)
            (staging / "app").rename(app)
            staging.rmdir()
        return app

    def run(self, task: dict[str, Any], definition: dict[str, Any], *, timeout: float = 120,
            kill_when: Callable[[], bool] | None = None) -> Invocation:
        """Run ``task`` (ECS's description of a task RunTask started) of ``definition`` (its task definition)."""
        (container,) = definition["containerDefinitions"]
        (override,) = [o for o in task["overrides"]["containerOverrides"] if o["name"] == container["name"]]
        command = override.get("command") or IMAGE_COMMAND
        assert command[:2] == ["python", "-m"], f"only a python -m entrypoint runs here: {command}"
        private_tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=self.runtime.workdir))
        os.chown(private_tmp, UID, UID)
        environment = {e["name"]: e["value"] for e in container.get("environment", [])}
        environment.update({e["name"]: e["value"] for e in override.get("environment", [])})
        region = task["taskArn"].split(":")[3]
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": str(private_tmp),
            "PYTHONUNBUFFERED": "1", "AWS_REGION": region, "AWS_DEFAULT_REGION": region,
            "AWS_ENDPOINT_URL": self.runtime.endpoint_url, "AWS_EXECUTION_ENV": "AWS_ECS_FARGATE",
            "AWS_ACCESS_KEY_ID": "AKIADEPLOYEDTASK", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token",
            **environment,
        }
        argv = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", RUNTIME_PYTHON, "-I", "-S",
                str(self.runtime._bootstrap()), str(self.app), f"-m:{command[2]}", ""]
        role = task.get("overrides", {}).get("taskRoleArn") or definition["taskRoleArn"]
        done = Invocation(f"fargate:{definition['family']}", dict(override), True, role=role)
        started = time.monotonic()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=self.app,
                                    start_new_session=True)
            try:
                while proc.poll() is None:
                    if (kill_when is not None and kill_when()) or time.monotonic() - started > timeout:
                        break
                    time.sleep(0.2)
            finally:
                _kill_container(proc)
                shutil.rmtree(private_tmp, ignore_errors=True)
            out.seek(0)
            err.seek(0)
            output, _, answer = out.read().decode(errors="replace").rpartition(MARKER)
            done.output = output + err.read().decode(errors="replace")
        reply = json.loads(answer) if answer.strip() else {}
        done.calls = reply.get("calls", [])
        done.exit_code = KILLED if proc.returncode == -signal.SIGKILL else proc.returncode
        if "errorType" in reply:
            done.error = {k: reply[k] for k in ("errorType", "errorMessage")}
        done.wall_ms = round((time.monotonic() - started) * 1000, 1)
        self.runtime.invocations.append(done)
        return done


def _kill_container(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the container's every process, as a task's stop does (its cgroup): the entrypoint and all below it,
    whatever session they made their own (the worker's try runs in a child that calls setsid)."""
    if proc.poll() is not None:
        return
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes() if entry.isdigit() else b""
        except OSError:
            continue
        if stat:
            parents[int(entry)] = int(stat[stat.rindex(b")") + 2:].split()[1])
    tree, frontier = [proc.pid], [proc.pid]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        tree += frontier
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait()
