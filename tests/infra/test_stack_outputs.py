"""The stack's outputs are what `updraft env add --stack` reads (updraft.cli.env's keys)."""

from __future__ import annotations

from updraft.cli import env
from updraft.resources import DAGS_PREFIX


def test_the_outputs_the_cli_reads(synth) -> None:
    outputs = synth.template.to_json()["Outputs"]
    assert {env.API_URL, env.USERS_API_URL, env.BUCKET, env.REGION, env.DAGS_PREFIX} <= set(outputs)
    assert outputs[env.API_URL]["Value"] != outputs[env.USERS_API_URL]["Value"]  # IAM's API, the users' API
    assert outputs[env.DAGS_PREFIX]["Value"] == DAGS_PREFIX
    assert outputs[env.REGION]["Value"] == "us-east-1"  # the placeholder region the test synthesizes for
    [bucket] = [key for key, r in synth.resources.items() if r["Type"] == "AWS::S3::Bucket"
                and "Updraft" in key and "Data" in key]
    assert outputs[env.BUCKET]["Value"] == {"Ref": bucket}
    url = outputs[env.API_URL]["Value"]["Fn::Join"][1]
    assert url[0] == "https://" and ".execute-api.us-east-1." in url
