"""The DAG-code role: the only AWS identity user code runs with (DAG files at parse time, tasks, callbacks and a
polling trigger's look).

Updraft's own roles (parser, worker, Fargate task) hold the table, the queues and the bucket. Code in a DAG file
must not: the parser and the workers keep their credentials in their own process and give the child process that
runs user code short-lived STS credentials of this role instead (``updraft.runtime.dag_code_credentials``).

The role starts with no permissions at all: not the table, not the queues, not the bucket (the worker and the
parser mirror the DAG files for the child, so it needs no ``dags/`` read either), not the secrets backend
(Variables and Connections are read by the worker and served to the child). Users attach their own policies to it,
as to MWAA's execution role: the role's ARN is the stack output ``DagCodeRoleArn``.

Its trust policy names the four roles that assume it (the parser's, the worker's, the Fargate task's and the
trigger check's), by ARN, with ``sts:TagSession`` (the session is tagged
``updraft:purpose=dag-code``). In the same account a trust policy that names a role's ARN is enough for that role
to assume it: the assumers' own policies gain nothing. Sessions last one hour (the workers refresh them ten
minutes before expiry).

Fargate: the task's role stays the worker's (the runtime's writes), and the container runs user code in a child
with this role's credentials, exactly as the worker Lambda does. Why not make the task role the DAG-code role and
send the runtime's writes through a narrow API: that would be a second write path to keep fenced and idempotent,
for the same guarantee; the container credentials' URI is scrubbed from the child's environment and the worker
process is not dumpable (its ``/proc/<pid>/environ`` is closed to the child), and Fargate offers no instance
metadata endpoint, so the child has no way to the task role's credentials.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from constructs import Construct

SESSION = Duration.hours(1)


class DagCodeRole(Construct):
    """The role, trusted by ``assumers`` (the parser's, the worker's, the Fargate task's and the trigger check's)."""

    def __init__(self, scope: Construct, construct_id: str, *, assumers: Sequence[iam.IRole]) -> None:
        super().__init__(scope, construct_id)
        principals = [iam.ArnPrincipal(role.role_arn).with_session_tags() for role in assumers]
        self.role = iam.Role(self, "Role", assumed_by=iam.CompositePrincipal(*principals),
                             max_session_duration=SESSION,
                             description="Updraft DAG code (tasks, parse-time code): attach your own policies")
