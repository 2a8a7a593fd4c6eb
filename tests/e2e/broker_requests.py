"""How many requests of an API group-broker answered, read from its metrics (`group_broker_requests_total`, served
by the control listener the `e2e_target` fixture opens)."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from tests.support.broker_process import BrokerProcess, control_url


def requests_answered(broker: BrokerProcess, api: str, error: str | None = None) -> float:
    """Requests of `api` (Kafka's name, e.g. "GetTelemetrySubscriptions") answered so far, every version, and every
    error unless `error` names the one to count ("NONE": answered without an error)."""
    with urllib.request.urlopen(f"{control_url(broker)}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "group_broker_requests_total"
        and sample.labels.get("api") == api
        and (error is None or sample.labels.get("error") == error)
    )
