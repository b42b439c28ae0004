"""The REST API: API Gateway with IAM authorization on every method, proxying to the API Lambda.

Callers sign requests with SigV4 (``execute-api:Invoke`` on this API in their own IAM policies); the Lambda
sees the caller's ARN in ``requestContext.identity``. The stack outputs the base URL (``...RestApiEndpoint...``):
the health route is ``<url>api/v2/monitor/health``. Routes live in the function (Powertools'
``APIGatewayRestResolver``), so API Gateway holds one ``{proxy+}`` resource.

No stage access logging: it needs the account-wide API Gateway CloudWatch role (``AWS::ApiGateway::Account``),
a singleton that one environment's stack must not own (``cloud_watch_role=False``). The function's own log group
records every request.
"""

from __future__ import annotations

from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from updraft.resources import ResourceNames


class UpdraftApi(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, names: ResourceNames, handler: lambda_.IFunction
                 ) -> None:
        super().__init__(scope, construct_id)
        self.rest_api = apigw.LambdaRestApi(
            self, "RestApi", handler=handler, proxy=True, rest_api_name=f"{names.prefix}-api",
            description=f"Updraft {names.environment}: Airflow-style REST routes (IAM authorization)",
            cloud_watch_role=False,
            endpoint_types=[apigw.EndpointType.REGIONAL],
            deploy_options=apigw.StageOptions(stage_name=names.environment),
            default_method_options=apigw.MethodOptions(authorization_type=apigw.AuthorizationType.IAM))
