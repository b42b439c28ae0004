"""Parsing real DAG files end to end: which DAGs Airflow 3 would find, and every way a file can fail."""

from __future__ import annotations

import textwrap
from pathlib import Path

from updraft.model.parse_results import ParsedFile
from updraft.parsing.folder import parse_dags_folder
from updraft.parsing.isolation import IsolatedParser
from updraft.parsing.loader import unique_module_name
from updraft.parsing.options import FileJob, ParseOptions

HEADER = """\
from datetime import datetime
from airflow.sdk import DAG, dag, task, chain
from airflow.providers.standard.operators.empty import EmptyOperator
START = datetime(2024, 1, 1)
"""

OPTIONS = ParseOptions(timeout_s=1.0, memory_limit_mb=400)


def write(folder: Path, rel: str, body: str, header: bool = True) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((HEADER if header else "") + textwrap.dedent(body))
    return path


def parse_folder(folder: Path, options: ParseOptions = OPTIONS):
    return parse_dags_folder(folder, options)


def by_file(result) -> dict[str, ParsedFile]:
    return {f.relative_path: f for f in result.files}


def test_finds_globals_with_blocks_and_dag_calls_but_not_unregistered(tmp_path):
    write(
        tmp_path,
        "multi.py",
        """\
        assigned = DAG(dag_id="assigned", schedule=None, start_date=START)
        with assigned:
            EmptyOperator(task_id="a")

        with DAG(dag_id="with_block_never_assigned", schedule=None, start_date=START):
            EmptyOperator(task_id="b")

        @dag(schedule=None, start_date=START)
        def decorated_never_assigned():
            @task
            def t():
                return 1
            t()

        decorated_never_assigned()

        DAG(dag_id="no_auto_register", schedule=None, start_date=START, auto_register=False)

        def factory(i):
            with DAG(dag_id=f"dynamic_{i}", schedule=None, start_date=START):
                EmptyOperator(task_id="x")

        for i in range(2):
            factory(i)
        """,
    )
    [parsed] = parse_folder(tmp_path).files
    assert parsed.import_errors == []
    assert parsed.dag_ids == [
        "assigned",
        "decorated_never_assigned",
        "dynamic_0",
        "dynamic_1",
        "with_block_never_assigned",
    ]
    dag = parsed.dags[0]["dag"]
    assert dag["relative_fileloc"] == "multi.py"
    assert dag["file_hash"] == parsed.file_hash


def test_same_file_gives_same_bytes(tmp_path):
    from updraft.serialization import canonical_json

    write(tmp_path, "d.py", 'with DAG(dag_id="d", schedule="@daily", start_date=START):\n    EmptyOperator(task_id="a")\n')
    first = parse_folder(tmp_path).files[0]
    second = parse_folder(tmp_path).files[0]
    assert canonical_json(first.dags[0]) == canonical_json(second.dags[0])


def test_cycle_is_an_import_error_and_other_dag_of_the_file_is_kept(tmp_path):
    write(
        tmp_path,
        "cyc.py",
        """\
        with DAG(dag_id="cyclic", schedule=None, start_date=START):
            a = EmptyOperator(task_id="a")
            b = EmptyOperator(task_id="b")
            a >> b >> a

        with DAG(dag_id="fine", schedule=None, start_date=START):
            EmptyOperator(task_id="x")
        """,
    )
    [parsed] = parse_folder(tmp_path).files
    assert parsed.dag_ids == ["fine"]
    [err] = parsed.import_errors
    assert err.dag_id == "cyclic"
    assert err.message.startswith("AirflowDagCycleException: Cycle detected in DAG")
    assert "a >> b >> a" in err.message or "b >> a >> b" in err.message
    assert err.lineno == 5  # the line that names the DAG


def test_duplicate_dag_id_across_files_is_an_error_on_the_later_file(tmp_path):
    body = 'with DAG(dag_id="same", schedule=None, start_date=START):\n    EmptyOperator(task_id="a")\n'
    write(tmp_path, "a_first.py", body)
    write(tmp_path, "b_second.py", body + 'with DAG(dag_id="other", schedule=None, start_date=START):\n    pass\n')
    result = parse_folder(tmp_path)
    files = by_file(result)
    assert files["a_first.py"].dag_ids == ["same"] and files["a_first.py"].import_errors == []
    assert files["b_second.py"].dag_ids == ["other"]
    [err] = files["b_second.py"].import_errors
    assert err.message == (
        "AirflowDagDuplicatedIdException: Ignoring DAG same from b_second.py - also found in a_first.py"
    )
    assert [d["dag"]["dag_id"] for d in result.dags] == ["other", "same"]


def test_broken_syntax_slow_and_hungry_files_do_not_stop_the_others(tmp_path):
    write(tmp_path, "a_broken.py", 'raise RuntimeError("cannot reach the config service")\n')
    write(tmp_path, "b_syntax.py", "with DAG(dag_id='s', schedule=None\n    x = 1\n")
    write(tmp_path, "c_slow.py", "while True:\n    pass\n")
    # One allocation past the limit fails at once, so the check does not depend on machine load.
    write(tmp_path, "d_hog.py", "big = bytearray(1024 * 1024 * 1024)\n")
    write(tmp_path, "e_good.py", 'with DAG(dag_id="good", schedule=None, start_date=START):\n    EmptyOperator(task_id="a")\n')
    files = by_file(parse_folder(tmp_path))

    [broken] = files["a_broken.py"].import_errors
    assert broken.message == "RuntimeError: cannot reach the config service"
    assert broken.lineno == 5
    assert 'a_broken.py", line 5' in broken.stacktrace

    [syntax] = files["b_syntax.py"].import_errors
    assert syntax.message.startswith("SyntaxError")
    assert syntax.lineno in (5, 6)

    [slow] = files["c_slow.py"].import_errors
    assert "timeout" in slow.message.lower() and slow.lineno in (5, 6)

    [hog] = files["d_hog.py"].import_errors
    assert "MemoryError" in hog.message and "400 MiB" in hog.message

    assert files["e_good.py"].dag_ids == ["good"] and files["e_good.py"].import_errors == []


def test_prints_are_kept_in_logs(tmp_path, capfd):
    write(tmp_path, "noisy.py", 'print("hello from the dag file")\nwith DAG(dag_id="noisy", schedule=None):\n    pass\n')
    [parsed] = parse_folder(tmp_path).files
    assert parsed.logs == "hello from the dag file\n"
    assert "hello from the dag file" not in capfd.readouterr().out


def test_sibling_module_and_subpackage_imports(tmp_path):
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text("")
    (tmp_path / "common" / "ids.py").write_text("PREFIX = 'team'\n")
    (tmp_path / "helpers.py").write_text(
        textwrap.dedent(
            """\
            from airflow.sdk import DAG
            from airflow.providers.standard.operators.empty import EmptyOperator

            def build(dag_id):
                with DAG(dag_id=dag_id, schedule=None) as d:
                    EmptyOperator(task_id="only")
                return d
            """
        )
    )
    write(
        tmp_path,
        "uses_siblings.py",
        """\
        from common.ids import PREFIX
        import helpers
        helpers.build(f"{PREFIX}_built_by_helper")
        """,
    )
    files = by_file(parse_folder(tmp_path))
    # helpers.py mentions both words, so Airflow would parse it as a DAG file too; it defines no DAG.
    assert files["helpers.py"].dags == [] and files["helpers.py"].import_errors == []
    parsed = files["uses_siblings.py"]
    assert parsed.import_errors == []
    assert parsed.dag_ids == ["team_built_by_helper"]
    assert parsed.dags[0]["dag"]["relative_fileloc"] == "uses_siblings.py"


def test_safe_mode_and_airflowignore_skip_files(tmp_path):
    write(tmp_path, "plain_helper.py", "def f():\n    return 1\n", header=False)
    write(tmp_path, "ignored/x.py", 'raise RuntimeError("must not run")\n')
    (tmp_path / ".airflowignore").write_text("ignored/\n")
    result = parse_folder(tmp_path)
    assert result.files == []
    assert result.skipped == ["plain_helper.py"]


def test_unique_module_name_matches_airflow():
    name = unique_module_name("/dags/my-dag.v2.py")
    assert name.startswith("unusual_prefix_") and name.endswith("_my_dag_v2")
    assert len(name.split("_")[2]) == 40


def test_module_name_and_dunder_file_inside_the_dag_file(tmp_path):
    path = write(
        tmp_path,
        "whoami.py",
        'print(__name__)\nprint(__file__)\nwith DAG(dag_id="w", schedule=None):\n    pass\n',
    )
    parsed = IsolatedParser(OPTIONS).parse_one(FileJob(str(path), "whoami.py", str(tmp_path)))
    name, file = parsed.logs.splitlines()
    assert name == unique_module_name(str(path))
    assert file == str(path)


def test_invalid_dag_argument_is_an_import_error_naming_the_line(tmp_path):
    write(
        tmp_path,
        "bad_id.py",
        """\
        with DAG(dag_id="ok_one", schedule=None, start_date=START):
            EmptyOperator(task_id="a")
        DAG(dag_id="bad id with spaces", schedule=None)
        """,
    )
    [parsed] = parse_folder(tmp_path).files
    # Airflow raises at construction, so the whole module fails: no DAG of the file is kept.
    assert parsed.dags == []
    [err] = parsed.import_errors
    assert "bad id with spaces" in err.message and err.lineno == 7


def test_template_files_are_read_at_parse_time_as_airflow_does(tmp_path):
    (tmp_path / "run.sh").write_text("echo {{ ds }}\n")
    (tmp_path / "sql").mkdir()
    (tmp_path / "sql" / "a.sql").write_text("select 1")
    write(
        tmp_path,
        "templated.py",
        """\
        from airflow.sdk import BaseOperator
        from airflow.providers.standard.operators.bash import BashOperator

        class Sql(BaseOperator):
            template_fields = ("sql",)
            template_ext = (".sql",)

            def __init__(self, sql, **kwargs):
                super().__init__(**kwargs)
                self.sql = sql

        with DAG("templated", schedule=None, template_searchpath=[__file__.rsplit("/", 1)[0] + "/sql"]):
            BashOperator(task_id="from_file", bash_command="run.sh")
            BashOperator(task_id="missing", bash_command="missing.sh")
            BashOperator(task_id="inline", bash_command="echo hi")
            Sql(task_id="listed", sql=["a.sql", "select 2"])
            Sql.partial(task_id="mapped").expand(sql=["a.sql"])
        """,
    )
    [parsed] = parse_folder(tmp_path).files
    assert parsed.import_errors == []
    values = {t["task_id"]: t["template_values"] for t in parsed.dags[0]["dag"]["tasks"]}
    assert values["from_file"]["bash_command"] == "echo {{ ds }}\n"
    assert values["missing"]["bash_command"] == "missing.sh"
    assert values["inline"]["bash_command"] == "echo hi"
    assert values["listed"]["sql"] == ["select 1", "select 2"]
    assert values["mapped"] == {}
