"""Email from DAGs and tasks through Amazon SES: Airflow's ``send_email``, ``email_on_failure`` / ``email_on_retry``.

``ses`` sends one message from the environment's verified sender identity (``UPDRAFT_EMAIL_FROM``); ``email``
is Airflow's ``send_email`` on top of it; ``notifier`` is the email notifier (Airflow's ``SmtpNotifier`` role)
that renders the subject and body as templates; ``task_email`` (in the runtime) sends Airflow's default alert.
"""
