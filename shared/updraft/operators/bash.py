"""BashOperator: a shell command, templated; exit code 99 (configurable) means "skipped"."""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any, ClassVar

from updraft.sdk.baseoperator import BaseOperator


class BashOperator(BaseOperator):
    template_fields: ClassVar[tuple[str, ...]] = ("bash_command", "env", "cwd")
    template_fields_renderers: ClassVar[dict[str, str]] = {"bash_command": "bash", "env": "json"}
    template_ext: ClassVar[tuple[str, ...]] = (".sh", ".bash")
    ui_color: ClassVar[str] = "#f0ede4"
    extra_serialized_fields: ClassVar[tuple[str, ...]] = ("skip_on_exit_code",)

    def __init__(
        self,
        *,
        bash_command: str | Any,
        env: dict[str, str] | None = None,
        append_env: bool = False,
        output_encoding: str = "utf-8",
        skip_on_exit_code: int | Container[int] | None = 99,
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
            self.skip_on_exit_code = sorted(skip_on_exit_code)  # type: ignore[arg-type]
        self.cwd = cwd
        self.output_processor = output_processor
