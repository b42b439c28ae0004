"""``cdk deploy`` of a synthesized cloud assembly onto the embedded AWS, as the CLI does it.

What ``cdk bootstrap`` leaves in an account (the assets bucket, the container-assets repository, the SSM
parameter the template's bootstrap-version rule reads), then what ``cdk-assets`` publishes from the asset
manifest (each file asset zipped or copied to its bucket and key; each image asset pushed to its repository and
tag), then ``CreateStack`` with the template's ``TemplateURL`` and the capabilities the CLI passes, waited for.

Image assets cannot be built without Docker: each is stood in for by an image manifest pushed under the asset's
tag, and :func:`publish` returns their build contexts so the test checks what the image would hold.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from tests.deploy.lambda_runtime import LambdaRuntime, zip_folder

BOOTSTRAP_QUALIFIER = "hnb659fds"  # CDK's default
BOOTSTRAP_VERSION = "30"


@dataclasses.dataclass(frozen=True)
class Deployed:
    stack_name: str
    stack_id: str
    seconds: float  # CreateStack until CREATE_COMPLETE, custom resources included
    outputs: dict[str, str]
    physical: dict[str, str]  # logical id -> physical id (list_stack_resources)
    image_contexts: dict[str, Path]  # image asset tag -> its build context (the folder Docker would build)


def bootstrap(session: Any, account: str, region: str) -> None:
    """What ``cdk bootstrap`` creates that a deploy of this app uses."""
    session.client("s3").create_bucket(Bucket=f"cdk-{BOOTSTRAP_QUALIFIER}-assets-{account}-{region}")
    session.client("ecr").create_repository(
        repositoryName=f"cdk-{BOOTSTRAP_QUALIFIER}-container-assets-{account}-{region}")
    session.client("ssm").put_parameter(Name=f"/cdk-bootstrap/{BOOTSTRAP_QUALIFIER}/version", Type="String",
                                        Value=BOOTSTRAP_VERSION)


# A file asset's zip by the asset's id (its content hash, which names its object key): zipped once per process,
# however many deploys publish it (a bundle is ~70 MB of ~6,000 files).
_ZIPPED: dict[str, bytes] = {}


def publish(session: Any, outdir: Path, manifest: dict[str, Any]) -> dict[str, Path]:
    """cdk-assets: every file asset to its bucket and key; every image asset (stood in for: a manifest naming
    the context's digest) to its repository and tag. Returns the image assets' build contexts by tag."""
    s3, ecr = session.client("s3"), session.client("ecr")
    for asset_id, asset in manifest.get("files", {}).items():
        source = outdir / asset["source"]["path"]
        if asset["source"].get("packaging") == "zip":
            if asset_id not in _ZIPPED:
                _ZIPPED[asset_id] = zip_folder(source)
            body = _ZIPPED[asset_id]
        else:
            body = source.read_bytes()
        for destination in asset["destinations"].values():
            s3.put_object(Bucket=destination["bucketName"], Key=destination["objectKey"], Body=body)
    contexts = {}
    for asset in manifest.get("dockerImages", {}).values():
        context = outdir / asset["source"]["directory"]
        for destination in asset["destinations"].values():
            digest = hashlib.sha256(str(sorted(p.name for p in context.iterdir())).encode()).hexdigest()
            ecr.put_image(repositoryName=destination["repositoryName"], imageTag=destination["imageTag"],
                          imageManifestMediaType="application/vnd.docker.distribution.manifest.v2+json",
                          imageManifest=json.dumps({"schemaVersion": 2, "config": {"digest": f"sha256:{digest}"},
                                                    "layers": []}))
            contexts[destination["imageTag"]] = context
    return contexts


def create_stack(session: Any, runtime: LambdaRuntime, outdir: Path, stack_name: str, *,
                 timeout: float = 120) -> Deployed:
    """Bootstrap, publish, CreateStack from the template's URL; custom resources' invokes are run while waiting
    (they are asynchronous: :class:`LambdaRuntime` queues them). Raises if the stack does not complete."""
    manifest = json.loads((outdir / f"{stack_name}.assets.json").read_text())
    (template_asset,) = [a for a in manifest["files"].values() if a["source"]["path"] == f"{stack_name}.template.json"]
    (destination,) = template_asset["destinations"].values()
    region = destination["region"]
    account = destination["bucketName"].rsplit("-", 4)[-4]
    bootstrap(session, account, region)
    images = publish(session, outdir, manifest)
    cfn = session.client("cloudformation")
    url = f"https://{destination['bucketName']}.s3.{region}.amazonaws.com/{destination['objectKey']}"
    started = time.monotonic()
    stack_id = cfn.create_stack(StackName=stack_name, TemplateURL=url,
                                Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]
                                )["StackId"]
    while True:
        failed = [run for run in runtime.drain() if run.error is not None]
        if failed:
            raise AssertionError(f"{stack_name}: a custom resource's function failed: {failed[0].function}: "
                                 f"{failed[0].error}\n{failed[0].output[-3000:]}")
        (stack,) = cfn.describe_stacks(StackName=stack_id)["Stacks"]
        if not stack["StackStatus"].endswith("IN_PROGRESS"):
            break
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"{stack_name} still {stack['StackStatus']} after {timeout} s")
        time.sleep(0.05)
    seconds = time.monotonic() - started
    if stack["StackStatus"] != "CREATE_COMPLETE":
        events = cfn.describe_stack_events(StackName=stack_id)["StackEvents"]
        raise AssertionError(f"{stack_name}: {stack['StackStatus']}: "
                             + "; ".join(f"{e['LogicalResourceId']} {e['ResourceStatus']} "
                                         f"{e.get('ResourceStatusReason', '')}" for e in events[:10]))
    resources = cfn.get_paginator("list_stack_resources").paginate(StackName=stack_id)
    physical = {r["LogicalResourceId"]: r["PhysicalResourceId"] for page in resources
                for r in page["StackResourceSummaries"]}
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
    return Deployed(stack_name, stack_id, seconds, outputs, physical, images)
