"""BashOperator: a shell command, templated; exit code 99 (configurable) means "skipped"."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from updraft.sdk.baseoperator import BaseOperator
from updraft.sdk.exceptions import AirflowException, AirflowSkipException


class BashOperator(BaseOperator):
    template_fields: ClassVar[tuple[str, ...]] = ("bash_command", "env", "cwd")
    template_fields_renderers: ClassVar[dict[str, str]] = {"bash_command": "bash", "env": "json"}
    template_ext: tuple[str, ...] = (".sh", ".bash")
    ui_color: ClassVar[str] = "#f0ede4"
    extra_serialized_fields: ClassVar[tuple[str, ...]] = ("skip_on_exit_code",)

    def __init__(
        self,
        *,
        bash_command: str | Any,
        env: dict[str, str] | None = None,
        append_env: bool = False,
        output_encoding: str = "utf-8",
        skip_on_exit_code: int | Iterable[int] | None = 99,
        cwd: str | None = None,
        output_processor: Callable[[str], Any] = lambda result: result,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.bash_command = bash_command
        self.env = env
        self.append_env = append_env
        self.output_encoding = output_encoding
        if skip_on_exit_code is None:
            self.skip_on_exit_code: list[int] = []
        elif isinstance(skip_on_exit_code, int):
            self.skip_on_exit_code = [skip_on_exit_code]
        else:
            self.skip_on_exit_code = sorted(skip_on_exit_code)
        self.cwd = cwd
        self.output_processor = output_processor
        # Decided on the command as written: once rendered, a template file's name is its content.
        self._is_inline_cmd = isinstance(bash_command, str) and not bash_command.endswith(tuple(self.template_ext))

    def execute(self, context: Any) -> Any:
        """``bash -c`` the rendered command; its output goes to the task log, its last line is the XCom."""
        if self.cwd is not None:
            if not os.path.exists(self.cwd):
                raise AirflowException(f"Can not find the cwd: {self.cwd}")
            if not os.path.isdir(self.cwd):
                raise AirflowException(f"The cwd {self.cwd} must be a directory")
        exit_code, output = run_bash(self.bash_command, env=self.get_env(context), cwd=self.cwd,
                                     encoding=self.output_encoding, log=self.log,
                                     as_script=not getattr(self, "_is_inline_cmd", True))
        if exit_code in self.skip_on_exit_code:
            raise AirflowSkipException(f"Bash command returned exit code {exit_code}. Skipping.")
        if exit_code != 0:
            raise AirflowException(f"Bash command failed. The command returned a non-zero exit code {exit_code}.")
        return self.output_processor(output)

    def get_env(self, context: Any) -> dict[str, str]:
        """Airflow's: the operator's env (or the worker's), plus AIRFLOW_CTX_* variables naming the try."""
        # lazy: the task child only (DAG parsing never imports sdk.execution)
        from updraft.sdk.execution import context_env_vars

        env = self.env
        if env is None:
            env = os.environ.copy()
        elif self.append_env:
            env = {**os.environ, **env}
        else:
            env = dict(env)
        env.update(context_env_vars(context))
        return env


def run_bash(command: str, *, env: dict[str, str], cwd: str | None, encoding: str,
             log: logging.Logger, as_script: bool = False) -> tuple[int, str]:
    """Airflow's SubprocessHook: stderr merged into stdout, each line logged, in a temp dir unless ``cwd``.

    ``as_script`` (a rendered ``.sh``/``.bash`` template file): the command is written to a temporary script in
    that directory and run as ``bash <script>``, as Airflow does, rather than passed with ``bash -c``.
    The process gets its own session so a timeout or failure kills the whole process group, not just bash.
    """
    bash = shutil.which("bash") or "bash"
    with contextlib.ExitStack() as stack:
        workdir = cwd or stack.enter_context(tempfile.TemporaryDirectory(prefix="airflowtmp"))
        argv = [bash, "-c", command]
        if as_script:
            script = stack.enter_context(tempfile.NamedTemporaryFile(mode="w", dir=workdir, suffix=".sh"))
            script.write(command)
            script.flush()
            argv = [bash, os.path.basename(script.name)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=workdir, env=env, start_new_session=True)
        last = ""
        try:
            log.info("Running command: %s", argv if as_script else [bash, "-c", command])
            log.info("Output:")
            assert proc.stdout is not None
            for raw in _lines(proc.stdout):
                last = raw.decode(encoding, errors="backslashreplace").rstrip()
                log.info("%s", last)
            proc.wait()
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
                if proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
            if proc.stdout is not None:
                proc.stdout.close()
        log.info("Command exited with return code %s", proc.returncode)
        return proc.returncode, last


def _lines(stream: Any) -> Any:
    """The output's lines, waiting at most 0.1 s at a time.

    Never blocking long in one system call keeps the thread running Python code, so a timeout raised into a
    worker thread (local mode) reaches the loop promptly instead of after the command's next line.
    """
    import selectors

    pending = b""
    fd = stream.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            if not selector.select(timeout=0.1):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            *complete, pending = pending.split(b"\n")
            yield from complete
    if pending:
        yield pending
