"""The state: the DynamoDB table (built from ``updraft.store.tables.TABLE``), the bucket, and the KMS key that
encrypts variables and connections in the table."""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Token
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from updraft.resources import ResourceNames
from updraft.store.tables import TABLE, IndexSpec, KeyAttr, TableSpec

_TYPES = {"S": ddb.AttributeType.STRING, "N": ddb.AttributeType.NUMBER, "B": ddb.AttributeType.BINARY}
_PROJECTIONS = {"ALL": ddb.ProjectionType.ALL, "KEYS_ONLY": ddb.ProjectionType.KEYS_ONLY}


def _attr(key: KeyAttr) -> ddb.Attribute:
    return ddb.Attribute(name=key.name, type=_TYPES[key.type])


class UpdraftData(Construct):
    """The table with point-in-time recovery and every index the store queries, and the versioned, private,
    TLS-only bucket that holds DAG files (``dags/``) and large store items (``store/``); task logs go to the task
    log group (the bucket's ``logs/`` is local mode's).

    The table is named ``names.table``, as in local mode. The bucket is named ``names.bucket`` (which holds the
    account and region, bucket names being global) only when the stack's account and region are concrete: in an
    environment-agnostic stack they are deploy-time tokens, the name could not be checked at synth, and a
    CDK-generated name is the safe choice (handlers read it from ``UPDRAFT_BUCKET`` either way).

    Without ``retain`` the bucket is deleted with the stack, and emptied before that by CDK's auto-delete custom
    resource (its provider Lambda may delete the bucket's objects and versions, granted by the bucket policy).
    """

    def __init__(self, scope: Construct, construct_id: str, *, retain: bool, names: ResourceNames,
                 spec: TableSpec = TABLE) -> None:
        super().__init__(scope, construct_id)
        removal = RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY
        self.table = ddb.Table(
            self, "Table",
            table_name=names.table,
            partition_key=_attr(spec.partition_key), sort_key=_attr(spec.sort_key),
            billing_mode=ddb.BillingMode.PAY_PER_REQUEST if spec.billing_mode == "PAY_PER_REQUEST"
            else ddb.BillingMode.PROVISIONED,
            point_in_time_recovery_specification=ddb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True),
            encryption=ddb.TableEncryption.AWS_MANAGED,
            time_to_live_attribute=spec.ttl_attribute,
            removal_policy=removal,
        )
        for index in spec.global_indexes:
            self.table.add_global_secondary_index(**self._index(index))
        for index in spec.local_indexes:
            kwargs = self._index(index)
            kwargs.pop("partition_key")  # an LSI shares the table's partition key
            self.table.add_local_secondary_index(**kwargs)

        concrete = not (Token.is_unresolved(names.account) or Token.is_unresolved(names.region))
        self.bucket = s3.Bucket(
            self, "Bucket",
            bucket_name=names.bucket if concrete else None,
            versioned=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            encryption=s3.BucketEncryption.S3_MANAGED,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            removal_policy=removal,
            # Deleted with the stack: emptied first (every version and delete marker: a bucket that holds any
            # cannot be deleted, and `cdk destroy` would end in DELETE_FAILED once a DAG was uploaded).
            auto_delete_objects=not retain,
        )

        # Variables' values and connections' passwords and extras are stored encrypted with this key (the store's
        # KmsCipher), on top of the table's own encryption: the workers and the API may use it, nothing else.
        self.secrets_key = kms.Key(
            self, "SecretsKey", enable_key_rotation=True, removal_policy=removal,
            description=f"Updraft {names.environment}: variables and connections in the table")

    @staticmethod
    def _index(index: IndexSpec) -> dict:
        return {"index_name": index.name, "partition_key": _attr(index.partition_key),
                "sort_key": _attr(index.sort_key), "projection_type": _PROJECTIONS[index.projection]}
