"""Airflow's ``BaseOperatorLink``: a named link from a task to the external system it drove (a console page of
the job it started), and which links a task has.

As in Airflow 3, a link's URL is computed where the try runs, once the try ends (the task runner's ``finalize``):
``get_link(operator=..., ti_key=...)`` is called and its answer stored as the try's XCom under ``xcom_key``
(``updraft.runtime.operator_links``). The parser records each task's link names and XCom keys in the serialized
DAG (``SerializedTask.extra_links``), and the API's ``links`` route answers the XComs stored under them: the
scheduler and the API never import DAG code or plugins.

A task's links (:func:`task_links`) are Airflow's: the operator's own ``operator_extra_links`` (a class attribute,
a property, or set by its ``__init__``), overridden by a plugin's ``operator_extra_links`` whose ``operators`` name
the task's class, then a plugin's ``global_operator_extra_links`` under names the task does not use yet. One
difference: Airflow computes a global link in its API server (plugins are loaded there); Updraft computes it in
the try, as the task's own links, so a task that runs no try (an ``EmptyOperator``) shows none.
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Any, ClassVar


class BaseOperatorLink(metaclass=ABCMeta):
    """Subclasses name the link and build its URL from the operator and the try."""

    operators: ClassVar[list[type]] = []

    @property
    @abstractmethod
    def name(self) -> str:
        """The link's label (the button in the UI)."""

    @property
    def xcom_key(self) -> str:
        """The XCom key the link's URL is stored under (``_link_<class name>`` unless overridden)."""
        return f"_link_{type(self).__name__}"

    @abstractmethod
    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        """The URL for ``operator``'s try ``ti_key`` (empty when there is none)."""

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self), self.name))


def _plugin_links() -> tuple[list[Any], list[Any]]:
    """(global links, operator links) of the registered plugins, in registration order."""
    # lazy: cold start (plugins load only when operator links are asked for)
    from updraft.plugins import registered_plugins

    plugins = registered_plugins().values()
    return ([link for p in plugins for link in p.global_operator_extra_links],
            [link for p in plugins for link in p.operator_extra_links])


def _checked(link: Any, task_id: str) -> Any:
    """``link``, once its name and XCom key are strings (the serialized DAG and the API key on them)."""
    name, xcom_key = getattr(link, "name", None), getattr(link, "xcom_key", None)
    if not isinstance(name, str) or not name or not isinstance(xcom_key, str) or not xcom_key:
        raise TypeError(f"operator extra link {link!r} of task {task_id!r} must have a non-empty string name and "
                        f"xcom_key (got name={name!r}, xcom_key={xcom_key!r})")
    return link


def task_links(task: Any) -> dict[str, Any]:
    """The task's operator extra links by name, as Airflow resolves them (see the module notes). A mapped task's
    are its prototype's (Airflow reads its operator class's)."""
    global_links, plugin_links = _plugin_links()
    operator_class = getattr(task, "operator_class", type(task))
    own = getattr(task, "operator_extra_links", None) or ()
    links = {link.name: link for link in (_checked(link, task.task_id) for link in own)}
    for link in plugin_links:  # a plugin's link for this class wins over the operator's own of the same name
        if any(op.__name__ == operator_class.__name__ and op.__module__ == operator_class.__module__
               for op in getattr(link, "operators", ())):
            links[_checked(link, task.task_id).name] = link
    for link in global_links:
        links.setdefault(_checked(link, task.task_id).name, link)
    return links
