"""Airflow's ``BaseOperatorLink``: a named link from a task to the external system it drove (a console page of
the job it started), listed on the operator's ``operator_extra_links``.

As in Airflow 3, a link is computed once the try's ``execute`` ends: ``get_link(operator, ti_key=...)`` is called
where the try runs and its URL stored as the try's XCom under ``xcom_key``; the API's ``links`` route reads those
XComs (the API never imports DAG code).
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
