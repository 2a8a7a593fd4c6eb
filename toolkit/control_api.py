"""The HTTP/JSON control API: `BrokerControls` for tests in any language, when the broker runs as a process.

Off unless `control.listener` is set (for example `http://127.0.0.1:0`; the chosen address is printed as
`CONTROL=http://host:port` after `BOOTSTRAP=`). Without `control.listener.token` it has no authentication, so it
only listens on loopback addresses (anything else is a configuration error) and refuses requests whose Host or
Origin header names another host (a web page cannot reach it through DNS rebinding or a cross-site form). With a
token it may listen anywhere (`http://0.0.0.0:9644` in a container whose ports are published), and every request
must carry the token (`Authorization: Bearer <token>`, or HTTP Basic with the token as password so a browser can
open the timelines); anything else is 401. It runs on the broker's own event loop, so every control runs between
two requests, exactly as the in-process pytest plugin's do.

JSON bodies and answers; errors are `{"error": "..."}` with 400, 401, 403, 404 or 405. The routes are derived, not
written here: each control declared on `BrokerControls` (`toolkit/controls.py`) is served at its declared route by
`_control_route`, which reads its parameters from the path and the JSON body by their type hints; the routes that
only inspect the toolkit (faults in force, the recorder, the timeline, storage, metrics) are the `@route` methods
below. `endpoints()` lists both, and `GET /` answers that listing.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import inspect
import json
import ssl
import types
import typing
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import structlog
from aiohttp import web

from broker.config import is_loopback_host
from broker.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from broker.storage_status import storage_status
from protocol.errors import ErrorCode
from toolkit.control_spec import AtLeast, Control, ControlError, Endpoint, declared_controls
from toolkit.controls import BrokerControls
from toolkit.names import api_key_of
from toolkit.timeline.html import render_html
from toolkit.timeline.text import render_text, render_transaction_text
from toolkit.timeline.txn_html import render_transaction_html

if TYPE_CHECKING:
    from toolkit.kit import Toolkit

log = structlog.get_logger("toolkit.control_api")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
MAX_BODY_BYTES = 1 << 20
M = TypeVar("M", bound=Callable[..., Awaitable[web.StreamResponse]])


def route(method: str, path: str, doc: str, query: str = "") -> Callable[[M], M]:
    """Declare a `ControlApi` method the handler of an inspection route (the controls declare their own)."""

    def mark(function: M) -> M:
        function.__route__ = Endpoint(method, path, doc, query)  # type: ignore[attr-defined]
        return function

    return mark


def _inspection_routes() -> list[tuple[str, Endpoint]]:
    found = ((name, getattr(member, "__route__", None)) for name, member in vars(ControlApi).items())
    return [(name, endpoint) for name, endpoint in found if isinstance(endpoint, Endpoint)]


def endpoints() -> list[Endpoint]:
    """Every route of the control API: the declared controls, then the inspection routes (`GET /` lists them)."""
    controls = [spec.endpoint(getattr(BrokerControls, spec.name)) for spec in declared_controls(BrokerControls)]
    return controls + [endpoint for _, endpoint in _inspection_routes()]


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=lambda obj: json.dumps(obj, default=str))


def _error(status: int, message: str) -> web.Response:
    return _json({"error": message}, status)


def _host_of(value: str) -> str:
    """The host of a Host header (`127.0.0.1:8080`, `[::1]:80`, `localhost`) or an Origin (`http://...`)."""
    if "://" in value:
        return urlsplit(value).hostname or ""
    return urlsplit(f"//{value}").hostname or ""


def _loopback_only(request: web.Request) -> web.Response | None:
    """Without a token: refuse a request addressed to, or sent from a page of, another host (DNS rebinding,
    cross-site forms)."""
    host = request.headers.get("Host")
    origin = request.headers.get("Origin")
    if (host and not is_loopback_host(_host_of(host))) or (origin and not is_loopback_host(_host_of(origin))):
        return _error(403, "the control API only answers requests addressed to a loopback host")
    return None


def presented_token(authorization: str) -> str | None:
    """The token in an `Authorization` header: `Bearer <token>`, or HTTP Basic with the token as the password (what
    a browser prompts for, so the HTML timelines open in one); None for anything else."""
    scheme, _, credentials = authorization.strip().partition(" ")
    if scheme.lower() == "bearer":
        return credentials.strip()
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credentials.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2]
    return None


def _token_guard(token: str) -> Callable[[web.Request], web.Response | None]:
    """With `control.listener.token`: every request carries it (401 otherwise, compared in constant time), and a
    browser page may only call from the API's own origin, as its cached Basic credentials would go along."""
    expected = token.encode()

    def check(request: web.Request) -> web.Response | None:
        presented = presented_token(request.headers.get("Authorization", ""))
        if presented is None or not hmac.compare_digest(presented.encode(), expected):
            log.warning(
                "control_api.unauthorized",
                peer=request.remote,
                path=request.path,
                reason="no token" if presented is None else "wrong token",
            )
            response = _error(401, "the control API needs its token: Authorization: Bearer <control.listener.token>")
            response.headers["WWW-Authenticate"] = 'Basic realm="group-broker control API"'
            return response
        origin = request.headers.get("Origin")
        if origin and urlsplit(origin).netloc != request.headers.get("Host", ""):
            return _error(403, "the control API only answers pages of its own origin")
        return None

    return check


def _guard(check: Callable[[web.Request], web.Response | None]) -> Any:
    """The middleware: `check` first (loopback callers, or the token), then JSON errors everywhere."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        refused = check(request)
        if refused is not None:
            return refused
        try:
            return await handler(request)
        except ControlError as exc:
            return _error(exc.status, str(exc))
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return _error(exc.status, exc.reason)
        except (ValueError, KeyError) as exc:
            message = f"unknown name {exc}" if isinstance(exc, KeyError) else str(exc)
            return _error(400, message)

    return guard


async def _body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    text = await request.text()
    if not text.strip():
        return {}
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ControlError(400, f"request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ControlError(400, "request body must be a JSON object")
    return body


def _int(body: dict[str, Any], name: str, default: int | None = None, *, low: int = 0) -> int:
    value = body.get(name, default)
    if value is None:
        raise ControlError(400, f"'{name}' is required")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ControlError(400, f"'{name}' must be an integer")
    if value < low:
        raise ControlError(400, f"'{name}' must be at least {low}")
    return value


def _opt_int(body: dict[str, Any], name: str, low: int) -> int | None:
    return None if body.get(name) is None else _int(body, name, low=low)


def _opt_str(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise ControlError(400, f"'{name}' must be a string")
    return value


def _name_or_code(body: dict[str, Any], name: str, default: str | None = None) -> str | int:
    value = body.get(name, default)
    if value is None:
        raise ControlError(400, f'\'{name}\' is required (a name like "Heartbeat" / "NOT_COORDINATOR", or a number)')
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ControlError(400, f"'{name}' must be a name or a number")
    return value


def _read(body: dict[str, Any], name: str, hint: Any, default: Any) -> Any:
    """One control parameter from the JSON body, checked against its type hint (see `toolkit/control_spec.py`)."""
    parts = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    nullable = type(None) in parts
    rest = [part for part in parts if part is not type(None)]
    if set(rest) == {str, int}:
        return _name_or_code(body, name, default)
    [core] = rest
    low = next((m.low for m in getattr(core, "__metadata__", ()) if isinstance(m, AtLeast)), 0)
    base = typing.get_args(core)[0] if typing.get_origin(core) is typing.Annotated else core
    if base is int:
        return _opt_int(body, name, low) if nullable else _int(body, name, default, low=low)
    if base is str:
        value = _opt_str(body, name)
        return value if nullable else (value or default)
    raise TypeError(f"the control API cannot read a parameter of type {hint!r} ({name})")


def _path_value(text: str, name: str, hint: Any) -> Any:
    """A parameter bound by the path (`/nodes/{id}/stop`): a string, or an integer where the control takes one."""
    if hint is not int:
        return text
    try:
        return int(text)
    except ValueError:
        raise ControlError(400, f"'{name}' must be an integer (got {text!r})") from None


def _control_route(api: ControlApi, spec: Control) -> Handler:
    """The HTTP handler of a declared control: path and body parameters in, the control's `answer` out."""
    function = getattr(BrokerControls, spec.name)
    hints = typing.get_type_hints(function, include_extras=True)
    signature = inspect.signature(function)
    placeholders = [part[1:-1] for part in spec.path.split("/") if part.startswith("{")]
    path_params = dict(zip(placeholders, spec.path_params(function), strict=True))
    body_params = spec.body_params(function)

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await _body(request) if body_params else {}
        args = {param: _path_value(request.match_info[key], param, hints[param]) for key, param in path_params.items()}
        for p in body_params:
            default = spec.http_defaults.get(p.name, None if p.default is inspect.Parameter.empty else p.default)
            args[p.name] = _read(body, p.name, hints[p.name], default)
        bound = signature.bind(api.controls, **args)
        result = function(*bound.args, **bound.kwargs)
        return _json(spec.answer(api.controls, args, result))

    return handle


class ControlApi:
    def __init__(self, kit: Toolkit) -> None:
        self.kit = kit
        self.broker = kit.broker
        self.controls = kit.controls
        self.token: str | None = kit.broker.config["control.listener.token"]
        check = _loopback_only if self.token is None else _token_guard(self.token)
        self.app = web.Application(middlewares=[_guard(check)], client_max_size=MAX_BODY_BYTES)
        self._runner: web.AppRunner | None = None
        self.url = ""
        r = self.app.router
        r.add_get("/", self.index)
        for spec in declared_controls(BrokerControls):
            r.add_route(spec.method, spec.path, _control_route(self, spec))
        for name, endpoint in _inspection_routes():
            r.add_route(endpoint.method, endpoint.path, getattr(self, name))

    async def start(self, host: str, port: int, tls: ssl.SSLContext | None = None) -> str:
        """Listen on `host:port` (over TLS with `tls`); returns the URL, its port resolved."""
        runner = self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, host, port, reuse_address=True, ssl_context=tls)
        await site.start()
        bound_host, bound_port = runner.addresses[0][:2]
        scheme = "https" if tls is not None else "http"
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        self.url = f"{scheme}://{shown}:{bound_port}"
        log.info("control_api.started", url=self.url, token_required=self.token is not None)
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- endpoints -------------------------------------------------------------------------------------------

    async def index(self, request: web.Request) -> web.Response:
        return _json({"endpoints": [endpoint.line() for endpoint in endpoints()]})

    @route(
        "GET",
        "/faults",
        "the rules in force (API errors and latencies, offsets append, marker and authentication faults)",
    )
    async def faults(self, request: web.Request) -> web.Response:
        faults = self.kit.faults
        return _json(
            {
                "errors": [
                    {**asdict(rule), "api": api_key_of(rule.api_key).name, "error": ErrorCode(rule.error).name}
                    for rule in faults.errors
                ],
                "latencies": [{**asdict(rule), "api": api_key_of(rule.api_key).name} for rule in faults.latencies],
                "offsets_append_errors": [ErrorCode(error).name for error in faults.offsets_append_errors],
                "marker_errors": [
                    {**asdict(rule), "error": rule.error.name if rule.error is not None else None}
                    for rule in faults.marker_errors
                ],
                "marker_delays": [
                    {k: v for k, v in asdict(rule).items() if k != "error"} for rule in faults.marker_delays
                ],
                "authentication_failures": [
                    {k: v for k, v in asdict(rule).items() if v is not None} for rule in faults.auth_failures
                ],
            }
        )

    @route("GET", "/groups", "every group: type, state, generation (a consumer group's epoch), members")
    async def groups(self, request: web.Request) -> web.Response:
        coordinator = self.broker.coordinator
        return _json(
            {
                "groups": [
                    {
                        "group_id": g.group_id,
                        "group_type": "classic",
                        "state": g.state.value,
                        "generation": g.generation_id,
                        "protocol_type": g.protocol_type,
                        "protocol": g.protocol_name,
                        "members": len(g.members),
                    }
                    for g in coordinator.groups()
                ]
                + [
                    {
                        "group_id": g.group_id,
                        "group_type": "consumer",
                        "state": g.state.value,
                        "generation": g.group_epoch,
                        "protocol_type": g.protocol_type,
                        "protocol": None,
                        "members": len(g.members),
                    }
                    for g in coordinator.consumer_groups()
                ]
            }
        )

    @route(
        "GET",
        "/groups/{id}/timeline",
        "the rebalance timeline (and the transactions that sent the group's offsets)",
        "?format=html|json|text&heartbeats=0&refresh=2",
    )
    async def timeline(self, request: web.Request) -> web.Response:
        group_id = request.match_info["id"]
        fmt = _timeline_format(request)
        heartbeats = request.query.get("heartbeats", "1") not in ("0", "false", "no")
        view = self.kit.group_timeline_view(group_id, heartbeats=heartbeats)
        if view is None:
            raise ControlError(404, f"no group {group_id!r} on this broker and nothing in its timeline")
        return _rendered(request, fmt, view, render_text, render_html)

    @route(
        "GET",
        "/transactions/{id}/timeline",
        "the transaction timeline: states, requests, partitions and markers",
        "?format=html|json|text&refresh=2",
    )
    async def transaction_timeline(self, request: web.Request) -> web.Response:
        transactional_id = request.match_info["id"]
        fmt = _timeline_format(request)
        view = self.kit.transaction_timeline_view(transactional_id)
        if view is None:
            raise ControlError(
                404, f"no transactional id {transactional_id!r} on this broker and nothing in its timeline"
            )
        return _rendered(request, fmt, view, render_transaction_text, render_transaction_html)

    @route("GET", "/requests", "the recorder's summaries", "?api=&client_id=&group_id=&principal=&limit=")
    async def requests(self, request: web.Request) -> web.Response:
        q = request.query
        recorder = self.kit.recorder
        api = q.get("api")
        exchanges = recorder.exchanges(
            api=None if not api else api_key_of(int(api) if api.isdigit() else api),
            client_id=q.get("client_id") or None,
            group_id=q.get("group_id") or None,
            principal=q.get("principal") or None,
        )
        limit = q.get("limit")
        if limit is not None:
            if not limit.isdigit():
                raise ControlError(400, "limit must be a non-negative integer")
            exchanges = exchanges[len(exchanges) - int(limit) :] if int(limit) else []
        summaries = recorder.summaries(exchanges)
        for summary in summaries:
            summary["errors"] = [_error_name(code) for code in summary["error_codes"]]
        return _json({"recording": recorder.enabled, "count": len(summaries), "requests": summaries})

    @route("POST", "/requests/recording", "turn the recorder on or off", '{"enabled": true}')
    async def recording(self, request: web.Request) -> web.Response:
        enabled = (await _body(request)).get("enabled", True)
        if not isinstance(enabled, bool):
            raise ControlError(400, "'enabled' must be true or false")
        self.kit.recorder.enabled = enabled
        return _json({"recording": enabled})

    @route("DELETE", "/requests", "forget what was recorded")
    async def clear_requests(self, request: web.Request) -> web.Response:
        self.kit.recorder.clear()
        return _json({"cleared": True})

    @route(
        "GET",
        "/storage",
        "offsets partitions (loading, active, failed; skipped damaged ranges), damaged ranges, quarantined files",
    )
    async def storage(self, request: web.Request) -> web.Response:
        return _json(storage_status(self.broker.coordinator, self.broker.logs))

    @route("GET", "/metrics", "Prometheus text format")
    async def metrics(self, request: web.Request) -> web.Response:
        response = web.Response(body=self.broker.metrics.render())
        response.headers["Content-Type"] = METRICS_CONTENT_TYPE
        return response


def _timeline_format(request: web.Request) -> str:
    """`?format=`, else JSON for `Accept: application/json`, else the HTML page."""
    fmt = request.query.get("format")
    if fmt is None:
        fmt = "json" if "application/json" in request.headers.get("Accept", "") else "html"
    if fmt not in ("html", "json", "text"):
        raise ControlError(400, "format must be html, json or text")
    return fmt


def _rendered(
    request: web.Request,
    fmt: str,
    view: dict[str, Any],
    text: Callable[[dict[str, Any]], str],
    page: Callable[[dict[str, Any], int | None], str],
) -> web.Response:
    """A timeline view as asked: JSON, text, or the HTML page (reloading every `?refresh=` seconds)."""
    if fmt == "json":
        return _json(view)
    if fmt == "text":
        return web.Response(text=text(view), content_type="text/plain")
    refresh = request.query.get("refresh")
    refresh_s = int(refresh) if refresh and refresh.isdigit() and int(refresh) > 0 else None
    return web.Response(text=page(view, refresh_s), content_type="text/html")


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)
