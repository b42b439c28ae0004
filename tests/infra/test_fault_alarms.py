"""Issue 18: scheduler and parser failures and the scheduler's poison pills raise alarms, and every async-invoked
function keeps the events it failed on."""

from __future__ import annotations

from tests.infra.cfn import function_id, of_type, render


def _alarm_on(synth, metric_name: str, namespace: str) -> list[dict]:
    return [a["Properties"] for a in of_type(synth.resources, "AWS::CloudWatch::Alarm").values()
            if a["Properties"].get("MetricName") == metric_name and render(a["Properties"]["Namespace"]) == namespace]


def test_scheduler_and_parser_errors_alarm_on_the_first(synth) -> None:
    for name in ("scheduler", "parser"):
        function = function_id(synth.resources, name)
        [alarm] = [a for a in _alarm_on(synth, "Errors", "AWS/Lambda")
                   if a["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": function}}]]
        assert alarm["Threshold"] == 1 and alarm["Statistic"] == "Sum"
        assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_poison_pills_alarm_watches_the_schedulers_metric(synth) -> None:
    scheduler = render(synth.resources[function_id(synth.resources, "scheduler")]["Properties"]["Environment"]
                       ["Variables"])
    [alarm] = _alarm_on(synth, "PoisonPills", scheduler["UPDRAFT_METRICS_NAMESPACE"])
    assert alarm["Dimensions"] == [{"Name": "service", "Value": scheduler["POWERTOOLS_SERVICE_NAME"]}]
    assert alarm["Threshold"] == 1 and alarm["TreatMissingData"] == "notBreaching"


def test_every_async_invoked_function_has_an_on_failure_destination(synth) -> None:
    configs = {c["Properties"]["FunctionName"]["Ref"]: c["Properties"]
               for c in of_type(synth.resources, "AWS::Lambda::EventInvokeConfig").values()}
    for name in ("worker", "scheduler", "parser"):
        assert "Destination" in configs[function_id(synth.resources, name)]["DestinationConfig"]["OnFailure"]
