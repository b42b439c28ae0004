"""A requirements file, line by line: installed, Updraft's own, or refused with its reason (never dropped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from updraft.requirements.lines import RequirementsError, pip_lines, read


def _file(tmp_path: Path, text: str, name: str = "requirements.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_an_mwaa_requirements_file_is_judged_line_by_line_with_a_reason_for_each_line_not_installed(tmp_path):
    path = _file(tmp_path, (
        '--constraint "https://raw.githubusercontent.com/apache/airflow/constraints-2.10.3/constraints-3.11.txt"\n'
        "# a comment\n\n"
        "apache-airflow-providers-snowflake==6.20.0  # trailing comment\n"
        "apache-airflow==2.10.3\n"
        "Apache_Airflow.Providers.Standard>=1.0\n"
        "apache-airflow-providers-cncf-kubernetes\n"
        "pandas>=2 ; python_version >= '3.9'\n"
        "-e ./src/mylib\n"
        "--require-hashes\n"
        "--extra-index-url https://pypi.example/simple\n"))
    judged = {line.text: (line.action, line.reason) for line in read(path)}
    assert judged["apache-airflow-providers-snowflake==6.20.0"] == ("install", "")
    assert judged["pandas>=2 ; python_version >= '3.9'"] == ("install", "")
    assert judged["--extra-index-url https://pypi.example/simple"] == ("install", "")
    action, reason = judged['--constraint "https://raw.githubusercontent.com/apache/airflow/constraints-2.10.3/'
                            'constraints-3.11.txt"']
    assert action == "refuse" and "Airflow's own dependency set" in reason
    assert judged["apache-airflow==2.10.3"][0] == "refuse" and "Updraft is the Airflow" in judged[
        "apache-airflow==2.10.3"][1]
    assert judged["Apache_Airflow.Providers.Standard>=1.0"][0] == "own"
    assert "Fargate" in judged["apache-airflow-providers-cncf-kubernetes"][1]
    assert judged["-e ./src/mylib"][0] == "refuse"
    assert judged["--require-hashes"] == ("refuse", "the pip option --require-hashes is not supported in a "
                                                    "requirements file here")
    assert [line.source for line in read(path)][:2] == ["requirements.txt:1", "requirements.txt:4"]


def test_included_files_are_read_in_place_local_paths_made_absolute_and_a_loop_is_an_error(tmp_path):
    (tmp_path / "sub").mkdir()
    _file(tmp_path / "sub", "./wheels/lib-1.0-py3-none-any.whl\nrequests==2.34.2\n", "more.txt")
    _file(tmp_path / "sub", "urllib3<3\n", "pins.txt")
    path = _file(tmp_path, "-r sub/more.txt\n--constraint sub/pins.txt\nclick\n")
    wanted, constraints = pip_lines(read(path))
    assert wanted == [str(tmp_path / "sub" / "wheels" / "lib-1.0-py3-none-any.whl"), "requests==2.34.2", "click"]
    assert constraints == ["urllib3<3"]
    _file(tmp_path, "-r b.txt\n", "a.txt")
    _file(tmp_path, "-r a.txt\n", "b.txt")
    with pytest.raises(RequirementsError, match="includes itself"):
        read(tmp_path / "a.txt")
    with pytest.raises(RequirementsError, match="cannot read the requirements file"):
        read(tmp_path / "missing.txt")
