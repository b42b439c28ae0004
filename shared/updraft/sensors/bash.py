"""BashSensor: runs a bash command on each poke; exit code 0 means done."""

from __future__ import annotations

from subprocess import PIPE, STDOUT, Popen
from tempfile import NamedTemporaryFile, TemporaryDirectory, gettempdir
from typing import Any, ClassVar

from updraft.sdk.exceptions import AirflowFailException
from updraft.sensors.base import BaseSensorOperator


class BashSensor(BaseSensorOperator):
    """Airflow's exit-code contract: 0 is done; ``retry_exit_code`` (when set) pokes again and any other code
    fails the task without retries; without it every non-zero code pokes again until the timeout.

    ``bash_command`` and ``env`` are template fields; ``env`` replaces the inherited environment when given.
    """

    template_fields: ClassVar[tuple[str, ...]] = ("bash_command", "env")

    def __init__(
        self,
        *,
        bash_command: str,
        env: dict[str, str] | None = None,
        output_encoding: str = "utf-8",
        retry_exit_code: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.bash_command = bash_command
        self.env = env
        self.output_encoding = output_encoding
        self.retry_exit_code = retry_exit_code

    def poke(self, context: Any) -> bool:
        """Run the command from a script in a fresh temporary directory, in its own session (as Airflow)."""
        bash_command = self.bash_command
        self.log.info("Tmp dir root location: %s", gettempdir())
        with TemporaryDirectory(prefix="airflowtmp") as tmp_dir, \
                NamedTemporaryFile(dir=tmp_dir, prefix=self.task_id) as script:
            script.write(bytes(bash_command, "utf_8"))
            script.flush()
            self.log.info("Temporary script location: %s", script.name)
            self.log.info("Running command: %s", bash_command)
            with Popen(["bash", script.name], stdout=PIPE, stderr=STDOUT, close_fds=True, cwd=tmp_dir,
                       env=self.env, start_new_session=True) as resp:
                if resp.stdout:
                    self.log.info("Output:")
                    for line in iter(resp.stdout.readline, b""):
                        self.log.info(line.decode(self.output_encoding).strip())
                resp.wait()
                self.log.info("Command exited with return code %s", resp.returncode)
                if resp.returncode == 0:
                    return True
                if self.retry_exit_code is not None:
                    if resp.returncode == self.retry_exit_code:
                        self.log.info("Return code matches retry code, will retry later")
                        return False
                    raise AirflowFailException(f"Command exited with return code {resp.returncode}")
                self.log.info("Non-zero return code and no retry code set, will retry later")
                return False
