"""Who a request comes from, as API Gateway's request context tells it (the audit log and roles read it)."""

from updraft.api.request import Request
from updraft.local.api_gateway import proxy_event


def test_a_signed_iam_request_is_its_callers_arn():
    context = proxy_event("GET", "/api/v2/dags", {}, b"", account="111122223333")["requestContext"]
    request = Request("GET", "/api/v2/dags", context=context)
    assert request.caller.startswith("arn:aws:iam::111122223333:user/")


def test_a_token_user_wins_over_the_gateway_identity():
    context = {"authorizer": {"claims": {"cognito:username": "ana", "sub": "1234"}},
               "identity": {"userArn": None}}
    assert Request("GET", "/", context=context).caller == "ana"


def test_no_identity_is_anonymous():
    assert Request("GET", "/").caller == "anonymous"
