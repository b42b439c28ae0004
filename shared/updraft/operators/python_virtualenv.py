"""Create a virtualenv, write the script that calls a task's function in it, and run that script: ported from the
standard provider's ``utils/python_virtualenv.py`` (Apache License 2.0), with the same commands and template.

Where Updraft differs, and why:

* the interpreter a venv is built from is the task's own (``sys.executable``) unless ``python_version`` asks for
  ``python<version>`` from PATH: Airflow's ``python`` from PATH is its worker's interpreter, and on Lambda there is
  no ``python`` on PATH at all;
* ``system_site_packages`` gives the venv the packages the task itself imports. When the task's interpreter is a
  venv itself (local mode), ``--system-site-packages`` alone would reach only the base interpreter's, so a
  ``.pth`` file adds the task interpreter's site-packages directories after the venv's own;
* with nothing to install, the venv is created without pip (a second instead of ten); pip is seeded when
  requirements are installed, as Airflow always does;
* the install method is ``[standard] venv_install_method`` (``AIRFLOW__STANDARD__VENV_INSTALL_METHOD``): ``auto``
  uses ``uv`` when it is on PATH, as in Airflow, else ``python -m venv`` and pip.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import site
import subprocess
import sys
from pathlib import Path

from updraft import airflow_config

log = logging.getLogger(__name__)

SCRIPT_TEMPLATE = "python_virtualenv_script.jinja2"


def use_uv() -> bool:
    """Airflow's ``_use_uv``: ``auto`` (the default) means uv when it is installed."""
    method = airflow_config.get("standard", "venv_install_method", "auto").lower()
    if method == "auto":
        return bool(shutil.which("uv"))
    if method not in ("uv", "pip"):
        raise ValueError(f"{airflow_config.variable('standard', 'venv_install_method')} must be auto, uv or pip, "
                         f"got {method!r}")
    return method == "uv"


def python_binary(python_version: str | None) -> str:
    """The interpreter a venv is built from: the task's own, or ``python<version>`` found on PATH."""
    if not python_version:
        return sys.executable
    found = shutil.which(f"python{python_version}")
    if found is None:
        raise FileNotFoundError(f"python_version={python_version!r}: no python{python_version} on PATH on this "
                                "worker; Lambda and the Fargate image have Python "
                                f"{sys.version_info.major}.{sys.version_info.minor} only")
    return found


def _venv_cmd(venv_directory: str, python_bin: str, system_site_packages: bool, seed: bool) -> list[str]:
    if use_uv():
        cmd = ["uv", "venv", "--allow-existing", "--python", python_bin]
        cmd += ["--seed"] if seed else []
    else:
        cmd = [python_bin, "-m", "venv", venv_directory]
        cmd += [] if seed else ["--without-pip"]
    if system_site_packages:
        cmd.append("--system-site-packages")
    if cmd[0] == "uv":
        cmd.append(venv_directory)
    return cmd


def _install_cmd(venv_directory: str, requirements_file_path: str, pip_install_options: list[str]) -> list[str]:
    if use_uv():
        return ["uv", "pip", "install", "--python", f"{venv_directory}/bin/python", *pip_install_options,
                "-r", requirements_file_path]
    return [f"{venv_directory}/bin/pip", "install", *pip_install_options, "-r", requirements_file_path]


def _write_pip_conf(conf_file: Path, index_urls: list[str]) -> None:
    """Airflow's ``_generate_pip_conf``: an empty list of index URLs means no index at all."""
    if index_urls:
        options = f"index-url = {index_urls[0]}"
        if len(index_urls) > 1:
            options += f"\nextra-index-url = {' '.join(index_urls[1:])}"
    else:
        options = "no-index = true"
    conf_file.write_text(f"[global]\n{options}")


def _uv_index_env(index_urls: list[str] | None) -> dict[str, str]:
    if not index_urls:
        return {}
    env = {"UV_DEFAULT_INDEX": index_urls[0]}
    if len(index_urls) > 1:
        env["UV_INDEX"] = " ".join(index_urls[1:])
    return env


def _task_site_packages() -> list[str]:
    """The task interpreter's own site-packages directories, when it is a venv (local mode's .venv)."""
    if sys.prefix == sys.base_prefix:
        return []
    return [path for path in site.getsitepackages() if os.path.isdir(path)]


def _link_task_site_packages(venv_directory: str) -> None:
    paths = _task_site_packages()
    if not paths:
        return
    for site_dir in Path(venv_directory).glob("lib/python*/site-packages"):
        (site_dir / "_updraft_task_site_packages.pth").write_text("\n".join(paths) + "\n")


def execute_in_subprocess(cmd: list[str], env: dict[str, str] | None = None) -> None:
    """Run ``cmd``, its output (stdout and stderr) logged line by line; a non-zero exit raises
    ``CalledProcessError``."""
    log.info("Executing cmd: %s", " ".join(shlex.quote(c) for c in cmd))
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0, env=env) as proc:
        log.info("Output:")
        assert proc.stdout is not None
        with proc.stdout:
            for line in iter(proc.stdout.readline, b""):
                log.info("%s", line.decode(errors="replace").rstrip())
        exit_code = proc.wait()
    if exit_code != 0:
        raise subprocess.CalledProcessError(exit_code, cmd)


def prepare_virtualenv(
    venv_directory: str,
    python_bin: str,
    system_site_packages: bool,
    requirements_file_path: str,
    pip_install_options: list[str] | None = None,
    index_urls: list[str] | None = None,
) -> str:
    """Create the venv in ``venv_directory`` and install the requirements file into it; the venv's python."""
    has_requirements = any(line.strip() and not line.strip().startswith("#")
                           for line in Path(requirements_file_path).read_text().splitlines())
    if index_urls is not None:
        _write_pip_conf(Path(venv_directory) / "pip.conf", index_urls)
    env = {**os.environ, **_uv_index_env(index_urls)}
    execute_in_subprocess(_venv_cmd(venv_directory, python_bin, system_site_packages, seed=has_requirements),
                          env=env)
    if system_site_packages:
        _link_task_site_packages(venv_directory)
    if has_requirements:
        execute_in_subprocess(_install_cmd(venv_directory, requirements_file_path, pip_install_options or []),
                              env=env)
    return f"{venv_directory}/bin/python"


def write_python_script(jinja_context: dict, filename: str, render_template_as_native_obj: bool = False) -> None:
    """Render the script the venv runs (Airflow's template, beside this module) into ``filename``."""
    import jinja2
    import jinja2.nativetypes

    loader = jinja2.FileSystemLoader(searchpath=os.path.dirname(__file__))
    env: jinja2.Environment
    if render_template_as_native_obj:
        env = jinja2.nativetypes.NativeEnvironment(loader=loader, undefined=jinja2.StrictUndefined)
    else:
        env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined,
                                 autoescape=jinja2.select_autoescape(["html", "xml"]))
    env.get_template(SCRIPT_TEMPLATE).stream(**jinja_context).dump(filename)
