"""Logging a user in against the environment's Cognito user pool: username and password for a JWT.

``InitiateAuth`` with ``USER_PASSWORD_AUTH`` on the pool's app client (created without a secret, so the flow
needs no ``SECRET_HASH``). The call is one of Cognito's unauthenticated APIs: the API function needs no IAM
permission for it. The token returned is the user's ID token: the users API's Cognito authorizer accepts ID
tokens (access tokens only on methods declaring OAuth scopes), and its ``cognito:groups`` claim carries the
user's roles. Local mode runs the same call against its embedded Cognito (moto's).
"""

from __future__ import annotations

from typing import Any

from updraft.api.errors import Unauthorized

# Cognito's answers to a wrong username or password (it does not say which, nor does Airflow).
_REFUSALS = ("NotAuthorizedException", "UserNotFoundException", "PasswordResetRequiredException",
             "UserNotConfirmedException")


def log_in(cognito: Any, client_id: str, username: str, password: str) -> str:
    """The user's ID token; 401 ``Invalid credentials`` (Airflow's words) when Cognito refuses them."""
    from botocore.exceptions import ClientError

    try:
        answer = cognito.initiate_auth(ClientId=client_id, AuthFlow="USER_PASSWORD_AUTH",
                                       AuthParameters={"USERNAME": username, "PASSWORD": password})
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in _REFUSALS:
            raise Unauthorized("Invalid credentials") from None
        raise
    result = answer.get("AuthenticationResult")
    if not result:  # a challenge: a user created with a temporary password must set their own first
        raise Unauthorized(f"Cognito asks this user to answer {answer.get('ChallengeName')} first (an admin can "
                           "set a permanent password: aws cognito-idp admin-set-user-password --permanent)")
    return str(result["IdToken"])
