"""Plugin registration and plugins-folder loading, which custom timetables depend on."""

from __future__ import annotations

import sys
import textwrap

import pytest

import airflow.plugins_manager
import updraft.plugins
from updraft.plugins import (
    AirflowPlugin,
    AirflowPluginException,
    load_plugins_folder,
    plugin_import_errors,
    registered_plugins,
    registered_timetables,
)
from updraft.timetables import Timetable, decode_timetable, encode_timetable


def test_shim_exposes_the_same_base_class():
    assert airflow.plugins_manager.AirflowPlugin is AirflowPlugin
    assert airflow.plugins_manager.get_timetables_plugins() == registered_timetables()


def test_workday_plugin_registers_its_timetables(workday_module):
    timetables = registered_timetables()
    assert timetables["workday.AfterWorkdayTimetable"] is workday_module.AfterWorkdayTimetable
    assert (
        timetables["workday.SometimeAfterWorkdayTimetable"] is workday_module.SometimeAfterWorkdayTimetable
    )
    assert registered_plugins()["workday_timetable_plugin"] is workday_module.WorkdayTimetablePlugin


@pytest.mark.usefixtures("isolated_plugins")
class TestRegistration:
    def test_subclass_registers_on_definition(self):
        class Nightly(Timetable):
            pass

        class NightlyPlugin(AirflowPlugin):
            name = "nightly_plugin_for_test"
            timetables = [Nightly]

        assert registered_plugins()["nightly_plugin_for_test"] is NightlyPlugin
        path = f"{Nightly.__module__}.{Nightly.__qualname__}"
        assert registered_timetables()[path] is Nightly
        assert type(decode_timetable(encode_timetable(Nightly()))) is Nightly

    def test_plugin_needs_a_name(self):
        with pytest.raises(AirflowPluginException, match="needs a name"):

            class Nameless(AirflowPlugin):
                pass

    def test_same_name_from_elsewhere_is_skipped_and_reported(self):
        class First(AirflowPlugin):
            name = "clashing_plugin_for_test"

        class Second(AirflowPlugin):
            name = "clashing_plugin_for_test"

        assert registered_plugins()["clashing_plugin_for_test"] is First
        assert any("already registered" in message for message in plugin_import_errors().values())

    def test_failing_on_load_is_reported_not_raised(self):
        class Broken(AirflowPlugin):
            name = "broken_on_load_for_test"

            @classmethod
            def on_load(cls, *args, **kwargs):
                raise RuntimeError("boom")

        assert "broken_on_load_for_test" not in registered_plugins()
        assert "boom" in plugin_import_errors().values()


@pytest.mark.usefixtures("isolated_plugins")
class TestLoadPluginsFolder:
    @pytest.fixture
    def folder(self, tmp_path, monkeypatch):
        monkeypatch.setattr(sys, "path", list(sys.path))
        created = []

        def write(relative: str, source: str) -> None:
            path = tmp_path / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
            created.append(path.stem)

        yield tmp_path, write
        for name in created:
            sys.modules.pop(name, None)

    def test_imports_py_files_and_records_errors(self, folder):
        root, write = folder
        write(
            "good_plugin_for_test.py",
            """
            from airflow.plugins_manager import AirflowPlugin
            from airflow.timetables.base import Timetable

            class FolderTimetable(Timetable):
                pass

            class FolderPlugin(AirflowPlugin):
                name = "folder_plugin_for_test"
                timetables = [FolderTimetable]
            """,
        )
        write("nested/deeper_plugin_for_test.py", "VALUE = 1\n")
        write("broken_plugin_for_test.py", "import does_not_exist_anywhere\n")
        write("_private_for_test.py", "raise RuntimeError('must not be imported')\n")
        write("__pycache__/cached_for_test.py", "raise RuntimeError('must not be imported')\n")
        (root / "notes.txt").write_text("not python")

        result = load_plugins_folder(root)

        assert [p.name for p in result.plugins] == ["folder_plugin_for_test"]
        assert list(result.import_errors) == [str(root / "broken_plugin_for_test.py")]
        assert "does_not_exist_anywhere" in result.import_errors[str(root / "broken_plugin_for_test.py")]
        assert str(root / "broken_plugin_for_test.py") in plugin_import_errors()
        assert "good_plugin_for_test.FolderTimetable" in registered_timetables()
        assert sys.modules["deeper_plugin_for_test"].VALUE == 1
        assert "_private_for_test" not in sys.modules
        assert str(root) in sys.path

    def test_missing_folder_is_empty(self, tmp_path):
        result = load_plugins_folder(tmp_path / "absent")
        assert result.plugins == [] and result.import_errors == {}

    def test_reimporting_the_same_file_replaces_the_registration(self, folder):
        root, write = folder
        write(
            "reloaded_plugin_for_test.py",
            """
            from airflow.plugins_manager import AirflowPlugin

            class ReloadedPlugin(AirflowPlugin):
                name = "reloaded_plugin_for_test"
            """,
        )
        load_plugins_folder(root)
        first = registered_plugins()["reloaded_plugin_for_test"]
        load_plugins_folder(root)
        assert registered_plugins()["reloaded_plugin_for_test"] is not first
        assert not any("reloaded_plugin_for_test" in k for k in updraft.plugins._import_errors)
