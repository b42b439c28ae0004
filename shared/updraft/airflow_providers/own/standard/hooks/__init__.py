"""``airflow.providers.standard.hooks``: of the standard provider's hooks only ``package_index`` is bundled."""
