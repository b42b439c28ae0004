"""``PackageIndexHook``: a Python package index from a connection (the standard provider's, Apache License 2.0).

A virtualenv task's ``index_urls_from_connection_ids`` name connections whose host is an index URL and whose
login/password become the URL's basic-auth credentials, so an index's secret lives in a connection (a secrets
backend, an ``AIRFLOW_CONN_*`` variable or the metastore) instead of the DAG file.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlparse

from updraft.sdk.hooks import BaseHook


class PackageIndexHook(BaseHook):
    """Specify package indexes/Python package sources using Airflow connections."""

    conn_name_attr = "pi_conn_id"
    default_conn_name = "package_index_default"
    conn_type = "package_index"
    hook_name = "Package Index (Python)"

    def __init__(self, pi_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pi_conn_id = pi_conn_id

    @staticmethod
    def _get_basic_auth_conn_url(index_url: str, user: str | None, password: str | None) -> str:
        """``index_url`` with the credentials in its netloc (any it had replaced), quoted."""
        url = urlparse(index_url)
        host = url.netloc.split("@")[-1]
        if user:
            host = f"{quote(user)}:{quote(password)}@{host}" if password else f"{quote(user)}@{host}"
        return url._replace(netloc=host).geturl()

    def get_conn(self) -> Any:
        return self.get_connection_url()

    def get_connection_url(self) -> str:
        """The connection's index URL with its login and password embedded."""
        conn = self.get_connection(self.pi_conn_id)
        if not conn.host:
            raise ValueError("Please provide an index URL.")
        return self._get_basic_auth_conn_url(conn.host, conn.login, conn.password)
