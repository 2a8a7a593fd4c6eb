"""The HTTP/JSON control API: `BrokerControls` for tests in any language, when the broker runs as a process.

Off unless `control.listener` is set (for example `http://127.0.0.1:0`; the chosen address is printed as
`CONTROL=http://host:port` after `BOOTSTRAP=`). It has no authentication, so it only listens on loopback addresses
(anything else is a configuration error) and refuses requests whose Host or Origin header names another host (a
web page cannot reach it through DNS rebinding or a cross-site form). It runs on the broker's own event loop, so
every control runs between two requests, exactly as the in-process pytest plugin's do.

Endpoints (JSON bodies and answers; errors are `{"error": "..."}` with 400 or 404):

    POST   /time/advance                       {"ms": 10000}        move the broker clock, fire due timers
    POST   /time/freeze                                             time moves only by /time/advance from now on
    GET    /time                                                    the broker clock
    POST   /faults/errors                      {"api", "error", "count", "group_id", "client_id"}
    POST   /faults/latency                     {"api", "delay_ms", "count"}
    GET    /faults                                                  the rules in force
    DELETE /faults                                                  clear every injected error and latency
    POST   /connections/drop                   {"client_id"}        (omit client_id: every connection)
    POST   /groups/{id}/members/{member}/expire                     the member's session expires now
    POST   /groups/{id}/rebalance              {"reason"}           start a rebalance now
    POST   /groups/{id}/move-coordinator                            NOT_COORDINATOR until clients look it up again
    POST   /groups/{id}/loading                {"duration_ms"}      COORDINATOR_LOAD_IN_PROGRESS for a while
    POST   /offsets/fail-next                  {"error", "count"}   fail the next __consumer_offsets appends
    GET    /groups                                                  every group: state, generation, members
    GET    /groups/{id}                                             one group, as the coordinator sees it
    GET    /groups/{id}/timeline               ?format=html|json|text&heartbeats=0&refresh=2
    GET    /requests                           ?api=&client_id=&group_id=&limit=   the recorder's summaries
    POST   /requests/recording                 {"enabled": true}    turn the recorder on or off
    DELETE /requests                                                forget what was recorded
    GET    /storage                                                 offsets partitions (loading, active,
                                                                    failed; skipped damaged ranges), damaged
                                                                    ranges, quarantined files
    GET    /metrics                                                 Prometheus text format
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import structlog
from aiohttp import web

from broker.config import is_loopback_host
from broker.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from broker.storage_status import storage_status
from protocol.errors import ErrorCode
from toolkit.controls import api_key_of, error_of
from toolkit.timeline.html import render_html
from toolkit.timeline.text import render_text

if TYPE_CHECKING:
    from toolkit.kit import Toolkit

log = structlog.get_logger("toolkit.control_api")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
MAX_BODY_BYTES = 1 << 20


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=lambda obj: json.dumps(obj, default=str))


def _error(status: int, message: str) -> web.Response:
    return _json({"error": message}, status)


def _host_of(value: str) -> str:
    """The host of a Host header (`127.0.0.1:8080`, `[::1]:80`, `localhost`) or an Origin (`http://...`)."""
    if "://" in value:
        return urlsplit(value).hostname or ""
    return urlsplit(f"//{value}").hostname or ""


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Loopback callers only, JSON errors everywhere."""
    host = request.headers.get("Host")
    origin = request.headers.get("Origin")
    if (host and not is_loopback_host(_host_of(host))) or (origin and not is_loopback_host(_host_of(origin))):
        return _error(403, "the control API only answers requests addressed to a loopback host")
    try:
        return await handler(request)
    except ApiError as exc:
        return _error(exc.status, str(exc))
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _error(exc.status, exc.reason)
    except (ValueError, KeyError) as exc:
        message = f"unknown name {exc}" if isinstance(exc, KeyError) else str(exc)
        return _error(400, message)


async def _body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    text = await request.text()
    if not text.strip():
        return {}
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ApiError(400, f"request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def _int(body: dict[str, Any], name: str, default: int | None = None, *, low: int = 0) -> int:
    value = body.get(name, default)
    if value is None:
        raise ApiError(400, f"'{name}' is required")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(400, f"'{name}' must be an integer")
    if value < low:
        raise ApiError(400, f"'{name}' must be at least {low}")
    return value


def _opt_str(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise ApiError(400, f"'{name}' must be a string")
    return value


def _name_or_code(body: dict[str, Any], name: str, default: str | None = None) -> str | int:
    value = body.get(name, default)
    if value is None:
        raise ApiError(400, f'\'{name}\' is required (a name like "Heartbeat" / "NOT_COORDINATOR", or a number)')
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ApiError(400, f"'{name}' must be a name or a number")
    return value


class ControlApi:
    def __init__(self, kit: Toolkit) -> None:
        self.kit = kit
        self.broker = kit.broker
        self.controls = kit.controls
        self.app = web.Application(middlewares=[_guard], client_max_size=MAX_BODY_BYTES)
        self._runner: web.AppRunner | None = None
        self.url = ""
        r = self.app.router
        r.add_get("/", self.index)
        r.add_get("/time", self.time)
        r.add_post("/time/advance", self.advance)
        r.add_post("/time/freeze", self.freeze)
        r.add_post("/faults/errors", self.inject_error)
        r.add_post("/faults/latency", self.add_latency)
        r.add_get("/faults", self.faults)
        r.add_delete("/faults", self.clear_faults)
        r.add_post("/connections/drop", self.drop_connections)
        r.add_post("/groups/{group_id}/members/{member_id}/expire", self.expire_member)
        r.add_post("/groups/{group_id}/rebalance", self.force_rebalance)
        r.add_post("/groups/{group_id}/move-coordinator", self.move_coordinator)
        r.add_post("/groups/{group_id}/loading", self.load_partition)
        r.add_post("/offsets/fail-next", self.fail_next_offsets_append)
        r.add_get("/groups", self.groups)
        r.add_get("/groups/{group_id}", self.group)
        r.add_get("/groups/{group_id}/timeline", self.timeline)
        r.add_get("/requests", self.requests)
        r.add_post("/requests/recording", self.recording)
        r.add_delete("/requests", self.clear_requests)
        r.add_get("/storage", self.storage)
        r.add_get("/metrics", self.metrics)

    async def start(self, host: str, port: int) -> str:
        runner = self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, host, port, reuse_address=True)
        await site.start()
        bound_host, bound_port = runner.addresses[0][:2]
        self.url = f"http://[{bound_host}]:{bound_port}" if ":" in bound_host else f"http://{bound_host}:{bound_port}"
        log.info("control_api.started", url=self.url)
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- helpers ---------------------------------------------------------------------------------------------

    def _clock(self) -> dict[str, Any]:
        clock = self.broker.clock
        return {"now_ms": clock.monotonic_ms(), "wall_ms": clock.wall_ms(), "frozen": clock.frozen}

    def _require_group(self, group_id: str) -> None:
        if self.broker.coordinator.group(group_id) is None:
            raise ApiError(404, f"no group {group_id!r} on this broker")

    # -- endpoints -------------------------------------------------------------------------------------------

    async def index(self, request: web.Request) -> web.Response:
        doc = (__doc__ or "").split("Endpoints", 1)[1].split("\n\n", 1)[1]
        return _json({"endpoints": [" ".join(line.split()) for line in doc.strip().splitlines()]})

    async def time(self, request: web.Request) -> web.Response:
        return _json(self._clock())

    async def advance(self, request: web.Request) -> web.Response:
        self.controls.advance(_int(await _body(request), "ms"))
        return _json(self._clock())

    async def freeze(self, request: web.Request) -> web.Response:
        self.controls.freeze_time()
        return _json(self._clock())

    async def inject_error(self, request: web.Request) -> web.Response:
        body = await _body(request)
        api, error = _name_or_code(body, "api"), _name_or_code(body, "error")
        count = _int(body, "count", 1, low=1)
        group_id, client_id = _opt_str(body, "group_id"), _opt_str(body, "client_id")
        self.controls.inject_error(api, error, count, group_id=group_id, client_id=client_id)
        return _json(
            {
                "api": api_key_of(api).name,
                "error": error_of(error).name,
                "count": count,
                "group_id": group_id,
                "client_id": client_id,
            }
        )

    async def add_latency(self, request: web.Request) -> web.Response:
        body = await _body(request)
        api = _name_or_code(body, "api")
        delay_ms = _int(body, "delay_ms")
        count = None if body.get("count") is None else _int(body, "count", low=1)
        self.controls.add_latency(api, delay_ms, count)
        return _json({"api": api_key_of(api).name, "delay_ms": delay_ms, "count": count})

    async def faults(self, request: web.Request) -> web.Response:
        faults = self.kit.faults
        return _json(
            {
                "errors": [
                    {**asdict(rule), "api": api_key_of(rule.api_key).name, "error": ErrorCode(rule.error).name}
                    for rule in faults.errors
                ],
                "latencies": [{**asdict(rule), "api": api_key_of(rule.api_key).name} for rule in faults.latencies],
            }
        )

    async def clear_faults(self, request: web.Request) -> web.Response:
        self.controls.clear_faults()
        return _json({"cleared": True})

    async def drop_connections(self, request: web.Request) -> web.Response:
        client_id = _opt_str(await _body(request), "client_id")
        return _json({"dropped": self.controls.drop_connections(client_id)})

    async def expire_member(self, request: web.Request) -> web.Response:
        group_id, member_id = request.match_info["group_id"], request.match_info["member_id"]
        if not self.controls.expire_member(group_id, member_id):
            raise ApiError(404, f"no member {member_id!r} in group {group_id!r}")
        return _json({"expired": member_id, "group": self.controls.group_snapshot(group_id)})

    async def force_rebalance(self, request: web.Request) -> web.Response:
        group_id = request.match_info["group_id"]
        reason = _opt_str(await _body(request), "reason") or "forced through the control API"
        self._require_group(group_id)
        if not self.controls.force_rebalance(group_id, reason):
            state = self.broker.coordinator.group(group_id)
            raise ApiError(
                400,
                f"group {group_id!r} cannot be rebalanced now (state {state.state.value if state else '?'}): "
                "it needs members and to be Stable or CompletingRebalance",
            )
        return _json({"rebalancing": True, "group": self.controls.group_snapshot(group_id)})

    async def move_coordinator(self, request: web.Request) -> web.Response:
        return _json({"partition": self.controls.move_coordinator(request.match_info["group_id"])})

    async def load_partition(self, request: web.Request) -> web.Response:
        duration_ms = _int(await _body(request), "duration_ms")
        partition = self.controls.load_partition_for(request.match_info["group_id"], duration_ms)
        return _json({"partition": partition, "duration_ms": duration_ms})

    async def fail_next_offsets_append(self, request: web.Request) -> web.Response:
        body = await _body(request)
        error = _name_or_code(body, "error", "NOT_LEADER_OR_FOLLOWER")
        count = _int(body, "count", 1, low=1)
        self.controls.fail_next_offsets_append(error, count)
        return _json({"failing": error_of(error).name, "count": count})

    async def groups(self, request: web.Request) -> web.Response:
        return _json(
            {
                "groups": [
                    {
                        "group_id": g.group_id,
                        "state": g.state.value,
                        "generation": g.generation_id,
                        "protocol_type": g.protocol_type,
                        "protocol": g.protocol_name,
                        "members": len(g.members),
                    }
                    for g in self.broker.coordinator.groups()
                ]
            }
        )

    async def group(self, request: web.Request) -> web.Response:
        group_id = request.match_info["group_id"]
        snapshot = self.controls.group_snapshot(group_id)
        if snapshot is None:
            raise ApiError(404, f"no group {group_id!r} on this broker")
        return _json(snapshot)

    async def timeline(self, request: web.Request) -> web.Response:
        group_id = request.match_info["group_id"]
        fmt = request.query.get("format")
        if fmt is None:
            fmt = "json" if "application/json" in request.headers.get("Accept", "") else "html"
        if fmt not in ("html", "json", "text"):
            raise ApiError(400, "format must be html, json or text")
        clock = self.broker.clock
        now = clock.monotonic_ms()
        view = self.kit.timeline.view(
            group_id,
            self.broker.coordinator,
            now,
            clock.wall_ms() - now,
            heartbeats=request.query.get("heartbeats", "1") not in ("0", "false", "no"),
        )
        if view is None:
            raise ApiError(404, f"no group {group_id!r} on this broker and nothing in its timeline")
        if fmt == "json":
            return _json(view)
        if fmt == "text":
            return web.Response(text=render_text(view), content_type="text/plain")
        refresh = request.query.get("refresh")
        refresh_s = int(refresh) if refresh and refresh.isdigit() and int(refresh) > 0 else None
        return web.Response(text=render_html(view, refresh_s), content_type="text/html")

    async def requests(self, request: web.Request) -> web.Response:
        q = request.query
        recorder = self.kit.recorder
        api = q.get("api")
        exchanges = recorder.exchanges(
            api=None if not api else api_key_of(int(api) if api.isdigit() else api),
            client_id=q.get("client_id") or None,
            group_id=q.get("group_id") or None,
        )
        limit = q.get("limit")
        if limit is not None:
            if not limit.isdigit():
                raise ApiError(400, "limit must be a non-negative integer")
            exchanges = exchanges[len(exchanges) - int(limit) :] if int(limit) else []
        summaries = recorder.summaries(exchanges)
        for summary in summaries:
            summary["errors"] = [_error_name(code) for code in summary["error_codes"]]
        return _json({"recording": recorder.enabled, "count": len(summaries), "requests": summaries})

    async def recording(self, request: web.Request) -> web.Response:
        enabled = (await _body(request)).get("enabled", True)
        if not isinstance(enabled, bool):
            raise ApiError(400, "'enabled' must be true or false")
        self.kit.recorder.enabled = enabled
        return _json({"recording": enabled})

    async def clear_requests(self, request: web.Request) -> web.Response:
        self.kit.recorder.clear()
        return _json({"cleared": True})

    async def storage(self, request: web.Request) -> web.Response:
        return _json(storage_status(self.broker.coordinator, self.broker.logs))

    async def metrics(self, request: web.Request) -> web.Response:
        response = web.Response(body=self.broker.metrics.render())
        response.headers["Content-Type"] = METRICS_CONTENT_TYPE
        return response


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)
