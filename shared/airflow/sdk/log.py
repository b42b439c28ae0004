"""``airflow.sdk.log``: ``mask_secret``, which hides a value in the try's log (Airflow's secrets masker)."""

from updraft.secrets.masker import mask_secret

__all__ = ["mask_secret"]
