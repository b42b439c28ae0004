"""A requirements file, line by line: what is installed, what is Updraft's own, and what is refused and why.

The file is pip's format (MWAA's ``requirements.txt``). Each line ends in one of three places, and every line that
is not installed is reported with its reason, never dropped silently:

* installed: a requirement (``pandas==2.2.3``, ``apache-airflow-providers-amazon``, a local wheel or folder), or a
  pip option that only says where packages come from (``--index-url``, ``--extra-index-url``, ``--find-links``,
  ``--trusted-host``, ``--pre``, ``--only-binary``, ``--no-binary``, ``--prefer-binary``); ``-r``/``-c`` of a
  local file is read in place (its lines are judged the same way);
* Updraft's own: the standard and common-messaging providers, which Updraft runs natively
  (``updraft.requirements.dag_packages``); their wheels are never installed;
* refused: Airflow itself (``apache-airflow``, ``-core``, ``-task-sdk``: Updraft is the Airflow), the providers
  for executors Updraft has no place for (Kubernetes, Docker, Celery: Fargate runs a task in its own container),
  a ``--constraint`` of a URL (MWAA's pin of Airflow's own dependency set, unreachable offline, and Updraft
  resolves against its own packages instead), an editable install and any other pip option.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

OWN = {
    "apache-airflow-providers-standard": "Updraft runs the standard provider's operators natively",
    "apache-airflow-providers-common-messaging": ("Updraft runs MessageQueueTrigger natively "
                                                  "(SQS through the environment's asset-events queue)"),
}
_FARGATE = 'run the task in its own container on Fargate instead: executor="fargate" on the task'
REFUSED_PACKAGES = {
    "apache-airflow": "Updraft is the Airflow here; it follows Airflow 3.3.2 and is not installed from PyPI",
    "apache-airflow-core": "Updraft is the Airflow here; it follows Airflow 3.3.2 and is not installed from PyPI",
    "apache-airflow-task-sdk": "Updraft provides the task SDK (airflow.sdk) itself",
    "apache-airflow-providers-cncf-kubernetes": f"Updraft has no Kubernetes cluster; {_FARGATE}",
    "apache-airflow-providers-docker": f"Updraft runs no Docker daemon; {_FARGATE}",
    "apache-airflow-providers-celery": 'Updraft has no Celery workers; choose executor="lambda" or "fargate" per task',
}
# pip options that only say where packages come from: passed to pip as they are.
SOURCE_OPTIONS = ("--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--trusted-host", "--pre",
                  "--only-binary", "--no-binary", "--prefer-binary")
_CONSTRAINT_URL = ("a constraints URL pins Airflow's own dependency set (and is not reachable offline); Updraft "
                   "resolves your requirements against its own packages instead, and reports any conflict")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def canonical(name: str) -> str:
    """PEP 503's normalized project name (``Apache_Airflow.Providers`` -> ``apache-airflow-providers``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclasses.dataclass(frozen=True)
class Line:
    """One meaningful line: where it came from and what happens to it (``action``: install, own or refuse)."""

    source: str  # "requirements.txt:3"
    text: str
    action: str
    reason: str = ""


class RequirementsError(ValueError):
    """The requirements file cannot be read (missing, a loop of ``-r``), or installing it failed; the message
    says which line or which packages."""


def read(path: Path) -> list[Line]:
    """Every meaningful line of ``path`` and of the local files it includes, judged (see the module notes)."""
    return list(_read(path.resolve(), seen=()))


def _read(path: Path, seen: tuple[Path, ...]) -> list[Line]:
    if path in seen:
        raise RequirementsError(f"{path} includes itself (through {' -> '.join(str(p) for p in seen)})")
    try:
        text = path.read_text()
    except OSError as exc:
        raise RequirementsError(f"cannot read the requirements file {path}: {exc.strerror or exc}") from exc
    out: list[Line] = []
    for number, raw in enumerate(_joined(text), start=1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        source = f"{path.name}:{number}"
        include = re.match(r"^(-r|--requirement|-c|--constraint)(?:\s+|=)(\S+)$", line)
        if include:
            flag, target = include.groups()
            target = target.strip("\"'")  # MWAA's example quotes the URL
            if re.match(r"^[a-z][a-z0-9+.-]*://", target):
                reason = _CONSTRAINT_URL if flag in ("-c", "--constraint") else "a requirements URL is not read"
                out.append(Line(source, line, "refuse", reason))
                continue
            included = _read((path.parent / target).resolve(), (*seen, path))
            if flag in ("-c", "--constraint"):
                out.extend(dataclasses.replace(item, text=f"--constraint-line {item.text}")
                           if item.action == "install" else item for item in included)
            else:
                out.extend(included)
            continue
        out.append(_judge(source, _absolute(line, path.parent)))
    return out


def _absolute(line: str, base: Path) -> str:
    """A local path requirement made absolute against its file's folder (pip would read it against its cwd)."""
    if re.match(r"^(\.{1,2}/|~/|/)", line):
        target, sep, rest = line.partition(";")
        return str((base / Path(target.strip()).expanduser()).resolve()) + (sep + rest if sep else "")
    return line


def local_paths(lines: list[Line]) -> list[Path]:
    """The local wheels and folders the installed lines name (their content is part of the cache key)."""
    return [Path(line.text.split(";")[0].strip()) for line in lines
            if line.action == "install" and line.text.startswith("/")]


def _joined(text: str) -> list[str]:
    """The file's lines with pip's ``\\`` continuations joined (line numbers count joined lines once)."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        if raw.endswith("\\"):
            pending += raw[:-1]
            continue
        lines.append(pending + raw)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _judge(source: str, line: str) -> Line:
    if line.startswith("-"):
        option = re.split(r"[\s=]", line, maxsplit=1)[0]
        if option in SOURCE_OPTIONS:
            return Line(source, line, "install")
        if option in ("-e", "--editable"):
            return Line(source, line, "refuse", "editable installs need a source tree that is not deployed; "
                                                "build a wheel and list its path")
        return Line(source, line, "refuse", f"the pip option {option} is not supported in a requirements file here")
    match = _NAME.match(line)
    spec = line.split(";", maxsplit=1)[0].split("@", maxsplit=1)[0]
    if match and not re.match(r"^[.~/]", line) and "://" not in spec:
        name = canonical(match.group(1))
        if name in REFUSED_PACKAGES:
            return Line(source, line, "refuse", REFUSED_PACKAGES[name])
        if name in OWN:
            return Line(source, line, "own", OWN[name])
    return Line(source, line, "install")


def pip_lines(lines: list[Line]) -> tuple[list[str], list[str]]:
    """What pip gets: the requirement and source-option lines, and the constraint lines of included ``-c`` files."""
    requirements = [line.text for line in lines if line.action == "install"
                    and not line.text.startswith("--constraint-line ")]
    constraints = [line.text.removeprefix("--constraint-line ") for line in lines if line.action == "install"
                   and line.text.startswith("--constraint-line ")]
    return requirements, constraints
