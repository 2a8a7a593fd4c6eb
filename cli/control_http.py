"""Calls to group-broker's control API (the `control.listener` of a running broker), for the CLI's commands that
only group-broker has (timelines, storage, nodes): every failure becomes a sentence saying what to do."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

CONTROL_TOKEN_VARIABLE = "GROUP_BROKER_CONTROL_TOKEN"  # noqa: S105 - the variable's name, not a token


class CliError(Exception):
    """A failure the operator can act on, already phrased as a sentence."""


def control_request(
    control: str, url: str, token: str | None = None, *, method: str = "GET", body: dict[str, Any] | None = None
) -> Any:
    """Call the control API (with its token when given; `body` sent as JSON); the open response."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)  # noqa: S310
    try:
        return urllib.request.urlopen(request, timeout=10)  # noqa: S310 - an operator-given URL
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error") or exc.reason
        except ValueError:
            message = exc.reason
        hint = f" (pass it with --control-token or ${CONTROL_TOKEN_VARIABLE})" if exc.code == 401 else ""
        raise CliError(f"the control API at {control} answered {exc.code}: {message}{hint}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CliError(
            f"cannot reach group-broker's control API at {control} ({reason}). The broker serves it only when "
            "`control.listener` is set, for example `--override control.listener=http://127.0.0.1:9644`; "
            "pass its address with --control."
        ) from None
