"""Scheduler extenders over HTTP (pkg/scheduler/extender.go, HTTPExtender), and the
static extenders of a case, run where upstream runs its extenders:

* ``filter`` (findNodesThatPassExtenders): after the filter plugins, each extender in
  turn gets the nodes the previous one kept; its ``FailedAndUnresolvableNodes`` (from
  1.21, PR #92866) and ``FailedNodes`` set those nodes' statuses;
* ``prioritize`` (prioritizeNodes): each extender's host priorities times its weight,
  times MaxNodeScore / MaxExtenderPriority from 1.17, added to the plugins' totals;
  an error only loses that extender's scores;
* ``process_preemption`` (callExtenders): the preemption candidates with their victims,
  each extender keeping some;
* ``bind`` (extendersBinding): the first interested binder binds the pod.

An extender with ``managedResources`` is called only for pods that request one of them
(IsInterested; a limit without a request requests its limit, so requests decide). An
ignorable extender's error is skipped; another's fails the cycle (filter), the
preemption (preempt, an Error status) or the binding (bind), with upstream's message.

The requests are upstream's JSON (k8s.io/kube-scheduler/extender/v1, field names as
Go encodes them: ``Pod``, ``Nodes``, ``NodeNames`` ...), POSTed to urlPrefix/verb with
the httpTimeout; answers are decoded as Go decodes them (field names matched without
regard to case, unknown fields ignored). Only the URL the case or configuration
writes is called. Every call is recorded (``ExtenderCall``) for explain and reports.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import re
import socket
import ssl
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kspread.engine import apiobjects as api
from kspread.engine.framework.status import Code, SchedulingError, Status
from kspread.engine.model import Node, Pod
from kspread.engine.versions import Version

DEFAULT_EXTENDER_TIMEOUT = 5.0  # seconds (DefaultExtenderTimeout)
MAX_EXTENDER_PRIORITY = 10
# an answer larger than this (or than twice the request, if more) is refused (kspread's bound)
MAX_RESPONSE_BYTES = 16 << 20
# the characters of an extender's text (an Error, a node name, a reason) that kspread
# echoes; the rest is counted
MAX_ECHO = 500
GO_MAX_JSON_DEPTH = 10000  # encoding/json's maxNestingDepth
# Pod UIDs are not written in cases: each pod gets a stable UUID from its namespace and
# name, the same in every run (extenders name preemption victims by UID).
_UID_NAMESPACE = uuid.UUID("6b737072-6561-6400-8000-000000000001")


def pod_uid(pod: Pod) -> str:
    return str(uuid.uuid5(_UID_NAMESPACE, f"{pod.namespace}/{pod.name}"))


@dataclass(frozen=True, slots=True)
class TLSConfig:
    """ExtenderTLSConfig, its certFile, keyFile and caFile read when the case is loaded
    (a file's content counts where the matching *Data is empty, as restclient reads
    them)."""

    insecure: bool = False
    server_name: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(frozen=True, slots=True)
class HTTPConfig:
    """The fields of an upstream Extender configuration (weight stays on the extender)."""

    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    preempt_verb: str = ""
    bind_verb: str = ""
    enable_https: bool = False
    tls: TLSConfig | None = None
    http_timeout: float = DEFAULT_EXTENDER_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[str, ...] = ()
    ignorable: bool = False
    # the URL as errors, explain and reports show it: the urlPrefix as written (never
    # its expansion) or the URL given on the command line; empty: url_prefix
    shown: str = ""
    # added to the extender's errors (a variable of the urlPrefix that took its default)
    note: str = ""
    # the managed resources written with ignoredByScheduler (the profile's NodeResourcesFit
    # ignores them; kept as written for a backend, which is given the extender whole)
    ignored_by_scheduler: tuple[str, ...] = ()


@dataclass
class ExtenderCall:
    """One call of an extender: what was sent, what came back, how long it took."""

    extender: str
    verb: str  # filter, prioritize, preempt, bind
    url: str
    sent: int  # nodes (filter, prioritize), candidates (preempt), 1 (bind)
    seconds: float = 0.0
    kept: list[str] | None = None
    failed: dict[str, str] = field(default_factory=dict)
    unresolvable: dict[str, str] = field(default_factory=dict)
    scores: dict[str, int] | None = None
    victims: dict[str, list[str]] | None = None
    error: str | None = None
    ignored: bool = False  # the error did not change the cycle (ignorable, or prioritize)
    # kspread's own call, not upstream's: the filter-passing nodes the search did not
    # reach, sent so that `feasible` covers every node
    for_feasible: bool = False

    def describe(self) -> str:
        head = f"{self.verb} {self.extender} ({self.url}): sent {self.sent} " + (
            "candidate(s)" if self.verb == "preempt" else "pod" if self.verb == "bind" else "node(s)")
        parts = [head]
        if self.error is not None:
            parts.append(f"error{' (ignored)' if self.ignored else ''}: {self.error}")
        else:
            if self.kept is not None:
                parts.append(f"kept {len(self.kept)}: {_listed(self.kept) or '-'}")
            for label, m in (("failed", self.failed), ("unresolvable", self.unresolvable)):
                if m:
                    parts.append(f"{label}: " + _listed(f"{clip(n)} ({clip(why)})" for n, why in m.items()))
            if self.scores is not None:
                parts.append("scores: " + (_listed(f"{clip(n)}={s}" for n, s in self.scores.items()) or "-"))
            if self.victims is not None:
                parts.append("victims: " + (_listed(f"{clip(n)}: [{_listed(v)}]" for n, v in self.victims.items())
                                            or "no candidate"))
        text = "; ".join(parts) + f"; {self.seconds * 1000:.1f} ms"
        return text + (" [kspread's own call for `feasible`]" if self.for_feasible else "")


_SURROGATE = re.compile("[\ud800-\udfff]")


def clip(text: str, limit: int = MAX_ECHO) -> str:
    """An extender's text as kspread echoes it: at most ``limit`` characters, then how
    many more there were; a lone surrogate (a JSON escape such as \\ud800) is U+FFFD, as
    Go decodes it, so the text can be written as UTF-8."""
    text = _SURROGATE.sub("\ufffd", text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


_LISTED = 20


def _listed(items: Any) -> str:
    """Items joined with ", ": the first 20, then how many more."""
    out: list[str] = []
    more = 0
    for x in items:
        if len(out) < _LISTED:
            out.append(x)
        else:
            more += 1
    return ", ".join(out) + (f", ... and {more} more" if more else "")


class ExtenderError(SchedulingError):
    """A non-ignorable extender failed: upstream's error, with where the extender is written."""


# ---- JSON of the API objects ------------------------------------------------------------


def _container(c: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name, "resources": {}}
    if c.image:
        out["image"] = c.image
    if c.requests:
        out["resources"] = {"requests": api.resources(c.requests)}
    if c.ports:
        out["ports"] = [{"containerPort": p.container_port, "protocol": p.protocol,
                         **({"hostPort": p.host_port} if p.host_port else {}),
                         **({"hostIP": p.host_ip} if p.host_ip else {})} for p in c.ports]
    if c.restartable:
        out["restartPolicy"] = "Always"
    return out


def pod_object(pod: Pod) -> dict[str, Any]:
    """The pod as a v1.Pod in JSON (what kspread's model holds of it)."""
    meta: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace, "uid": pod_uid(pod)}
    if pod.labels:
        meta["labels"] = dict(pod.labels)
    if pod.controller is not None:
        meta["ownerReferences"] = [{"apiVersion": pod.controller.api_version, "kind": pod.controller.kind,
                                    "name": pod.controller.name, "uid": "", "controller": True}]
    if pod.terminating:
        meta["deletionTimestamp"] = "1970-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [_container(c) for c in pod.containers]}
    if pod.init_containers:
        spec["initContainers"] = [_container(c) for c in pod.init_containers]
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    if pod.node_selector:
        spec["nodeSelector"] = dict(pod.node_selector)
    if pod.affinity is not None:
        spec["affinity"] = api.affinity(pod.affinity)
    if pod.tolerations:
        spec["tolerations"] = api.tolerations(pod.tolerations)
    if pod.topology_spread_constraints:
        spec["topologySpreadConstraints"] = [api.spread_constraint(c) for c in pod.topology_spread_constraints]
    spec["priority"] = pod.priority
    if pod.priority_class_name:
        spec["priorityClassName"] = pod.priority_class_name
    spec["preemptionPolicy"] = pod.preemption_policy
    if pod.overhead:
        spec["overhead"] = api.resources(pod.overhead)
    status: dict[str, Any] = {}
    if pod.nominated_node:
        status["nominatedNodeName"] = pod.nominated_node
    if pod.start_time is not None:
        status["startTime"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(pod.start_time))
    return {"metadata": meta, "spec": spec, "status": status}


def node_object(node: Node) -> dict[str, Any]:
    """The node as a v1.Node in JSON."""
    spec: dict[str, Any] = {}
    if node.unschedulable:
        spec["unschedulable"] = True
    if node.taints:
        spec["taints"] = [{"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
                          for t in node.taints]
    alloc = api.resources(node.allocatable)
    status: dict[str, Any] = {"capacity": alloc, "allocatable": alloc}
    if node.images:
        status["images"] = [{"names": list(i.names), "sizeBytes": i.size_bytes} for i in node.images]
    return {"metadata": {"name": node.name, "uid": str(uuid.uuid5(_UID_NAMESPACE, f"node/{node.name}")),
                         "labels": dict(node.labels)}, "spec": spec, "status": status}


# ---- decoding as Go's encoding/json decodes ------------------------------------------


class _DecodeError(Exception):
    pass


def _go_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def _field(obj: Mapping[str, Any], name: str) -> Any:
    """A struct field as Go finds it: the exact key, else one equal but for case."""
    if name in obj:
        return obj[name]
    low = name.lower()
    for k, v in obj.items():
        if k.lower() == low:
            return v
    return None


def _want(v: Any, kind: str, where: str) -> Any:
    """``v`` if it is null or of Go kind ``kind`` (object, array, string, int64)."""
    if v is None:
        return None
    ok = {"object": isinstance(v, dict), "array": isinstance(v, list), "string": isinstance(v, str),
          "int64": isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63}[kind]
    if not ok:
        if "." not in where:  # the whole answer
            raise _DecodeError(f"json: cannot unmarshal {_go_type(v)} into Go value of type v1.{where}")
        gokind = {"object": "map", "array": "slice", "string": "string", "int64": "int64"}[kind]
        raise _DecodeError(f"json: cannot unmarshal {_go_type(v)} into Go struct field {where} of type {gokind}")
    return v


def _string_map(v: Any, where: str) -> dict[str, str]:
    out = {}
    for k, x in (_want(v, "object", where) or {}).items():
        out[k] = _want(x, "string", where) or ""
    return out


def _names_of(v: Any, where: str) -> list[str] | None:
    if v is None:
        return None
    return [_want(x, "string", where) or "" for x in _want(v, "array", where)]


def _node_list_names(v: Any, where: str) -> list[str] | None:
    if v is None:
        return None
    items = _field(_want(v, "object", where), "items")
    out = []
    for item in _want(items, "array", f"{where}.items") or []:
        meta = _field(_want(item, "object", f"{where}.items") or {}, "metadata") or {}
        out.append(_want(_field(meta, "name"), "string", "ObjectMeta.name") or "")
    return out


# ---- the client --------------------------------------------------------------------------


_T = TypeVar("_T")
_TIMEOUT = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
_BODY_TIMEOUT = "net/http: request canceled (Client.Timeout or context cancellation while reading body)"
# the longest wait a socket or a lock takes; the longest httpTimeout (about 2562047h) is longer
_LONGEST_WAIT = 1e9


def _url_error(shown_url: str, e: BaseException) -> str:
    """An error as Go's http.Client reports it: ``Post "URL": reason`` (the reasons of
    Go's dialer where Python's tell the same: refused, unknown host, timeout). The URL is
    the one shown (the urlPrefix as written), and so is the host in the reason."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(shown_url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addr = f" {host}:{port}" if host else ""
    except ValueError:
        host, addr = "", ""
    if isinstance(e, (socket.timeout, TimeoutError)):
        reason = _TIMEOUT
    elif isinstance(e, ConnectionRefusedError):
        reason = f"dial tcp{addr}: connect: connection refused"
    elif isinstance(e, socket.gaierror):
        reason = f"dial tcp: lookup {host or 'the host'}: no such host"
    elif isinstance(e, ssl.SSLCertVerificationError):
        reason = f"tls: failed to verify certificate: {e.verify_message}"
    else:
        reason = clip(str(getattr(e, "strerror", None) or e) or type(e).__name__)
    return f'Post "{shown_url}": {reason}'


class HTTPExtender:
    """One configured HTTP extender (HTTPExtender)."""

    def __init__(self, name: str, weight: int, cfg: HTTPConfig, where: str) -> None:
        self.name = name
        self.weight = weight
        self.cfg = cfg
        self.where = where  # file:line of the extender in the case or configuration
        self._ssl: ssl.SSLContext | None = None

    # the predicates of upstream's interface
    def is_filter(self) -> bool:
        return bool(self.cfg.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.cfg.prioritize_verb)

    def supports_preemption(self) -> bool:
        return bool(self.cfg.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.cfg.bind_verb)

    def is_ignorable(self) -> bool:
        return self.cfg.ignorable

    def is_interested(self, pod: Pod) -> bool:
        managed = self.cfg.managed_resources
        if not managed:
            return True
        return any(r in managed for c in (*pod.containers, *pod.init_containers) for r in c.requests)

    def url(self, verb: str) -> str:
        """The URL called."""
        return self.cfg.url_prefix.rstrip("/") + "/" + verb

    @property
    def shown_prefix(self) -> str:
        return self.cfg.shown or self.cfg.url_prefix

    def shown(self, verb: str) -> str:
        """The URL as kspread prints it: the urlPrefix as written (never its expansion)."""
        return (self.cfg.shown or self.cfg.url_prefix).rstrip("/") + "/" + verb

    def _context(self) -> ssl.SSLContext:
        """makeTransport: the TLS client configuration; with enableHTTPS and no CA the
        server's certificate is not verified (Insecure), as upstream."""
        if self._ssl is not None:
            return self._ssl
        tls = self.cfg.tls or TLSConfig()
        insecure = tls.insecure or (self.cfg.enable_https and not tls.ca_data)
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        if insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif tls.ca_data:
            ctx.load_verify_locations(cadata=tls.ca_data.decode("ascii", "replace"))
        if tls.cert_data:
            self._load_client_cert(ctx, tls)
        self._ssl = ctx
        return ctx

    @staticmethod
    def _load_client_cert(ctx: ssl.SSLContext, tls: TLSConfig) -> None:
        def no_password() -> bytes:
            # OpenSSL would otherwise ask on the terminal; upstream's tls.X509KeyPair
            # reads no encrypted key either
            raise ValueError("the client key is encrypted (kspread, as upstream, reads unencrypted keys only)")

        # the ssl module reads a chain from files only
        with tempfile.TemporaryDirectory() as d:
            cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
            with open(cert, "wb") as f:
                f.write(tls.cert_data)
            with open(key, "wb") as f:
                f.write(tls.key_data)
            ctx.load_cert_chain(cert, key if tls.key_data else None, password=no_password)

    def send(self, verb: str, args: Any) -> Any:
        """POST ``args`` as JSON to urlPrefix/verb; the decoded answer. httpTimeout bounds
        the whole exchange (connect, headers, body), as http.Client's Timeout does: the
        exchange runs in a thread of its own, abandoned (its socket shut) at the deadline.
        Errors are upstream's messages with the URL as written (``ExtenderError`` is
        raised by the callers)."""
        url, shown = self.url(verb), self.shown(verb)
        body = json.dumps(args, separators=(",", ":")).encode()
        try:
            ctx = self._context() if url.lower().startswith("https:") else None
        except (OSError, ssl.SSLError, ValueError) as e:
            raise _DecodeError(f"extender TLS configuration: {clip(str(e))}") from None
        limit = max(MAX_RESPONSE_BYTES, 2 * len(body))
        timeout = min(self.cfg.http_timeout, _LONGEST_WAIT)
        ex = _Exchange(url, body, ctx, timeout, limit, (self.cfg.tls or TLSConfig()).server_name)
        worker = threading.Thread(target=ex.run, name=f"kspread-extender-{self.name[:40]}", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            ex.abort()
            raise _DecodeError(_BODY_TIMEOUT if ex.phase == "body" else _url_error(shown, TimeoutError()))
        if ex.error is not None:
            if isinstance(ex.error, _TooLarge):
                raise _DecodeError(f"the answer of {shown} is larger than {limit >> 20} MiB (kspread's bound)")
            if isinstance(ex.error, (socket.timeout, TimeoutError)) and ex.phase == "body":
                raise _DecodeError(_BODY_TIMEOUT)
            if isinstance(ex.error, (OSError, http.client.HTTPException, ValueError)):
                raise _DecodeError(_url_error(shown, ex.error))
            raise ex.error
        if ex.status != 200:
            raise _DecodeError(f"failed {verb} with extender at URL {shown}, code {ex.status}")
        return _loads(ex.data)


class _TooLarge(Exception):
    pass


class _Exchange:
    """One POST and its answer (status, body up to ``limit`` bytes), run by a worker
    thread; ``phase`` says how far it got ("headers", "body"). Only the URL given is
    called: no redirect is followed (Go's client would; kspread calls no URL the user
    did not write), a proxy only as the environment names one (HTTP_PROXY, HTTPS_PROXY,
    NO_PROXY, never for loopback, as Go's ProxyFromEnvironment)."""

    def __init__(self, url: str, body: bytes, ctx: ssl.SSLContext | None, timeout: float, limit: int,
                 server_name: str = "") -> None:
        self.url, self.body, self.ctx, self.timeout, self.limit = url, body, ctx, timeout, limit
        self.server_name = server_name
        self.conn: http.client.HTTPConnection | None = None
        self.phase = "headers"
        self.status = 0
        self.data = b""
        self.error: BaseException | None = None
        self._aborted = False

    def run(self) -> None:
        try:
            self._run()
        except BaseException as e:  # handed to the caller
            self.error = e
        finally:
            if self.conn is not None:
                self.conn.close()

    def _run(self) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        https = parts.scheme.lower() == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if https else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {"Content-Type": "application/json"}
        proxy = None if is_loopback(host) else _proxy_for(parts.scheme.lower(), host)
        conn: http.client.HTTPConnection
        if https:
            conn = _HTTPSConnection(*(proxy[:2] if proxy else (host, port)), timeout=self.timeout,
                                    context=self.ctx)
            conn.server_name = self.server_name
            if proxy:
                conn.set_tunnel(host, port, headers=proxy[2])
        else:
            conn = http.client.HTTPConnection(*(proxy[:2] if proxy else (host, port)), timeout=self.timeout)
            if proxy:  # the absolute form, to the proxy
                target = f"http://{parts.netloc}{target}"
                headers.update(Host=parts.netloc, **proxy[2])
        self.conn = conn
        if self._aborted:
            return
        conn.request("POST", target, body=self.body, headers=headers)
        resp = conn.getresponse()
        self.phase, self.status = "body", resp.status
        if resp.status != 200:
            return
        length = resp.getheader("Content-Length")
        if length is not None and length.strip().isdigit() and int(length) > self.limit:
            raise _TooLarge
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = resp.read1(1 << 16)
            if not chunk:
                break
            size += len(chunk)
            if size > self.limit:
                raise _TooLarge
            chunks.append(chunk)
        self.data = b"".join(chunks)

    def abort(self) -> None:
        """Called from the waiting thread at the deadline: the socket is shut, so the
        worker's read ends now."""
        self._aborted = True
        conn = self.conn
        sock = getattr(conn, "sock", None) if conn is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _HTTPSConnection(http.client.HTTPSConnection):
    """With tlsConfig.serverName, the name the server's certificate is checked against and
    sent as SNI (tls.Config.ServerName), instead of the URL's host."""

    server_name = ""

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)  # TCP, and the proxy's tunnel if any
        ctx: ssl.SSLContext = getattr(self, "_context")  # noqa: B009 - set by HTTPSConnection
        tunnel: str | None = getattr(self, "_tunnel_host", None)
        self.sock = ctx.wrap_socket(self.sock, server_hostname=self.server_name or tunnel or self.host)


def _proxy_for(scheme: str, host: str) -> tuple[str, int, dict[str, str]] | None:
    """The proxy the environment names for ``scheme`` and ``host`` (none when NO_PROXY
    covers it): its host, port and Proxy-Authorization header."""
    from urllib.parse import unquote, urlsplit

    proxies = urllib.request.getproxies_environment()
    given = proxies.get(scheme)
    bypass: Any = getattr(urllib.request, "proxy_bypass_environment")  # noqa: B009 - not in typeshed
    if not given or bypass(host, proxies):
        return None
    p = urlsplit(given if "://" in given else f"http://{given}")
    if not p.hostname:
        return None
    auth: dict[str, str] = {}
    if p.username is not None:
        token = base64.b64encode(f"{unquote(p.username)}:{unquote(p.password or '')}".encode()).decode()
        auth["Proxy-Authorization"] = f"Basic {token}"
    return p.hostname, p.port or 80, auth


def is_loopback(host: str) -> bool:
    """localhost, 127.0.0.0/8 or ::1: what Go's proxy rules take for loopback."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _loads(data: bytes) -> Any:
    """The answer decoded as Go's encoding/json decodes it: bytes that are not UTF-8 become
    U+FFFD; NaN and Infinity are not JSON; a syntax error, or nesting deeper than 10000
    ("exceeded max depth"), is an error."""
    text = data.decode("utf-8", errors="replace")
    try:
        return json.loads(text, parse_constant=_not_json)
    except RecursionError:
        pass  # Python's recursion bound (about 1000 levels) is below Go's
    except ValueError as e:
        raise _DecodeError(_json_error(text, e)) from None
    if _depth(data) > GO_MAX_JSON_DEPTH:
        raise _DecodeError("exceeded max depth")
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + GO_MAX_JSON_DEPTH + 100)
    try:
        return json.loads(text, parse_constant=_not_json)
    except RecursionError:
        raise _DecodeError("exceeded max depth (kspread's decoder ran out of stack)") from None
    except ValueError as e:
        raise _DecodeError(_json_error(text, e)) from None
    finally:
        sys.setrecursionlimit(old)


def _not_json(constant: str) -> Any:
    """NaN, Infinity, -Infinity: Python's json reads them, Go's refuses them."""
    if constant.startswith("-"):
        raise _DecodeError(f"invalid character {constant[1]!r} in numeric literal")
    raise _DecodeError(f"invalid character {constant[0]!r} looking for beginning of value")


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in JSON text (strings left out)."""
    import numpy as np

    a = np.frombuffer(_JSON_STRING.sub(b"", data), dtype=np.uint8)
    steps = ((a == 0x5B) | (a == 0x7B)).astype(np.int64) - ((a == 0x5D) | (a == 0x7D)).astype(np.int64)
    return int(np.cumsum(steps).max(initial=0))


def _json_error(data: str, e: Exception) -> str:
    """A JSON syntax error as Go's decoder words the common ones."""
    text = data.lstrip()
    if not text:
        return "EOF"
    pos = getattr(e, "pos", None)
    if isinstance(e, json.JSONDecodeError) and pos is not None and e.msg == "Expecting value":
        c = e.doc[pos:pos + 1]
        if c and c.isprintable():
            return f"invalid character {c!r} looking for beginning of value"
    return f"invalid JSON: {clip(str(e))}"


# ---- the extender points of the cycle -------------------------------------------------------


class Extenders:
    """The profile's extenders (static and HTTP, in order) as the cycle runs them.
    ``calls`` is the current cycle's record (the scheduler gives each cycle its own)."""

    def __init__(self, extenders: Sequence[Any], version: Version, node: Callable[[str], Node],
                 pods_on: Callable[[str], Sequence[Pod]]) -> None:
        self.version = version
        self.items = list(extenders)
        self.http = {id(e): HTTPExtender(e.name, e.weight, e.http, e.where) for e in extenders
                     if e.http is not None}
        self.node = node
        self.pods_on = pods_on
        self.calls: list[ExtenderCall] = []
        # the feasible nodes that upstream scores as nodes without pods this cycle (see
        # ``filter``)
        self.podless: set[str] = set()
        # the last ``prioritize``: per HTTP prioritizer (id), the nodes it answered
        self._answered: dict[int, set[str]] = {}

    def start_cycle(self, calls: list[ExtenderCall]) -> None:
        self.calls = calls
        self.podless = set()
        self._answered = {}

    def _known(self, name: str) -> bool:
        try:
            self.node(name)
        except KeyError:
            return False
        return True

    def _h(self, e: Any) -> HTTPExtender | None:
        return self.http.get(id(e))

    @property
    def any(self) -> bool:
        return bool(self.items)

    def has_filters(self) -> bool:
        """hasExtenderFilters."""
        if not self.items:
            return False
        return any((h.is_filter() if (h := self._h(e)) else e.filter is not None) for e in self.items)

    def has_prioritizers(self) -> bool:
        if not self.items:
            return False
        return any((h.is_prioritizer() if (h := self._h(e)) else e.prioritize is not None) for e in self.items)

    def _fail(self, h: HTTPExtender, call: ExtenderCall, message: str) -> None:
        call.error = message
        if h.is_ignorable():
            call.ignored = True
            return
        raise ExtenderError(f"{message} (extender {h.name} at {h.where}){h.cfg.note}", f"extender:{h.name}")

    def _args(self, h: HTTPExtender, pod: Pod, names: Sequence[str]) -> dict[str, Any]:
        if h.cfg.node_cache_capable:
            return {"Pod": pod_object(pod), "Nodes": None, "NodeNames": list(names)}
        return {"Pod": pod_object(pod), "Nodes": {"metadata": {}, "items": [node_object(self.node(n))
                                                                            for n in names]},
                "NodeNames": None}

    # ---- filter ----

    def filter(self, pod: Pod, names: list[str], for_feasible: bool = False) -> tuple[list[str], dict[str, Status]]:
        """findNodesThatPassExtenders over ``names``: the nodes kept, and the status of
        every node an extender dropped.

        An extender that is not nodeCacheCapable answers with Node objects, from which
        HTTPExtender.Filter makes new NodeInfos holding no pods. From 1.32, where Score
        reads the NodeInfo it is given, the score plugins then see those nodes without
        their pods: the kept nodes are recorded in ``podless`` for the scoring."""
        statuses: dict[str, Status] = {}
        podless: set[str] = set()
        unresolvable_field = self.version.minor >= 21
        for e in self.items:
            if not names:
                break
            h = self._h(e)
            if h is None:
                if e.filter is None:
                    continue
                for n in names:
                    if n not in e.filter:
                        statuses[n] = Status(Code.UNSCHEDULABLE, (f"node(s) were filtered out by extender {e.name}",),
                                             f"extender:{e.name}")
                names = [n for n in names if n in e.filter]
                continue
            if not h.is_interested(pod) or not h.is_filter():
                continue
            call = ExtenderCall(h.name, "filter", h.shown(h.cfg.filter_verb), len(names), for_feasible=for_feasible)
            try:
                kept, failed, unresolvable, kept_by_name = self._timed(
                    call, self._filter_call, h, pod, names, unresolvable_field)
            except _DecodeError as err:
                if for_feasible:  # kspread's own call: its failure never changes upstream's outcome
                    call.error, call.ignored = str(err), True
                    continue
                self._fail(h, call, str(err))
                continue
            call.kept, call.failed, call.unresolvable = kept, failed, unresolvable
            # a node the extender keeps stays feasible whatever the maps say of it (upstream
            # records its status, and no later step reads it); any other node of the
            # cluster takes the status it gives, sent or not (statuses.Set), which keeps
            # a node the filter plugins rejected out of preemption when unresolvable
            kept_set = set(kept)
            for n, why in unresolvable.items():
                if n not in kept_set and self._known(n):
                    statuses[n] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (clip(why),), f"extender:{h.name}")
            for n, why in failed.items():
                if n not in unresolvable and n not in kept_set and self._known(n):
                    statuses[n] = Status(Code.UNSCHEDULABLE, (clip(why),), f"extender:{h.name}")
            for n in names:
                if n not in kept_set and n not in statuses:
                    statuses[n] = Status(Code.UNSCHEDULABLE, (f"node(s) were filtered out by extender {h.name}",),
                                         f"extender:{h.name}")
            if not kept_by_name:
                podless.update(kept)
            names = kept
        if not for_feasible and self.version.minor >= 32:
            self.podless = {n for n in names if n in podless}
        return names, statuses

    def _filter_call(self, h: HTTPExtender, pod: Pod, names: list[str], unresolvable_field: bool
                     ) -> tuple[list[str], dict[str, str], dict[str, str], bool]:
        """The nodes kept, failed, unresolvable, and whether the kept nodes came back as
        names (nodeCacheCapable: the NodeInfos sent) rather than Node objects."""
        res = _want(h.send(h.cfg.filter_verb, self._args(h, pod, names)), "object", "ExtenderFilterResult")
        if res is None:
            res = {}
        err = _want(_field(res, "Error"), "string", "ExtenderFilterResult.Error")
        if err:
            raise _DecodeError(clip(err))
        given = set(names)
        node_names = _names_of(_field(res, "NodeNames"), "ExtenderFilterResult.NodeNames")
        by_name = h.cfg.node_cache_capable and node_names is not None
        if by_name:
            kept = node_names or []
        else:
            kept = _node_list_names(_field(res, "Nodes"), "ExtenderFilterResult.Nodes") or []
        for n in kept:
            # upstream refuses a name it was not given (nodeCacheCapable); a Node object it
            # was not given it would schedule onto as is: kspread refuses both
            if n not in given:
                raise _DecodeError(f"extender {json.dumps(h.shown_prefix)} claims a filtered node "
                                   f"{json.dumps(clip(n))} which is not found in the input node list")
        failed = _string_map(_field(res, "FailedNodes"), "ExtenderFilterResult.FailedNodes")
        unresolvable = _string_map(_field(res, "FailedAndUnresolvableNodes"),
                                   "ExtenderFilterResult.FailedAndUnresolvableNodes") if unresolvable_field else {}
        return kept, failed, unresolvable, by_name

    # ---- prioritize ----

    def randomized(self, pod: Pod, names: list[str]) -> set[str]:
        """The nodes of ``names`` that prioritizeNodes gives a Randomizer (from 1.35 it orders
        equal totals, at random): those an extender's Prioritize answered without error. An
        interested extender without a prioritizeVerb answers every node with 0; a static
        extender counts as one. Call after ``prioritize`` (which records its answers)."""
        out: set[str] = set()
        for e in self.items:
            h = self._h(e)
            if h is None:
                out.update(names)
            elif h.is_interested(pod):
                out.update(names if not h.is_prioritizer() else self._answered.get(id(e), ()))
        return out

    def prioritize(self, pod: Pod, names: list[str]) -> list[int]:
        """The extenders' part of prioritizeNodes: per node of ``names``, the sum over
        interested prioritizers of score * weight (* MaxNodeScore / MaxExtenderPriority
        from 1.17), in int64. Static extenders first add their given scores the same way."""
        scale = self.version.extender_score_scale
        totals = [0] * len(names)
        index = {n: i for i, n in enumerate(names)}
        self._answered = {}
        for e in self.items:
            h = self._h(e)
            if h is None:
                prio = e.prioritize
                if prio is None:
                    continue
                for i, n in enumerate(names):
                    totals[i] = _wrap(totals[i] + _wrap(prio.get(n, 0) * e.weight * scale))
                continue
            if not h.is_interested(pod) or not h.is_prioritizer():
                continue  # no prioritizeVerb: every node scores 0 with weight 0
            call = ExtenderCall(h.name, "prioritize", h.shown(h.cfg.prioritize_verb), len(names))
            try:
                scores = self._timed(call, self._prioritize_call, h, pod, names)
            except _DecodeError as err:
                # "Prioritization errors from extender can be ignored"
                call.error, call.ignored = str(err), True
                continue
            call.scores = {}
            self._answered[id(e)] = {host for host, _ in scores if host in index}
            for host, score in scores:
                call.scores[host] = call.scores.get(host, 0) + score
                if host in index:  # a host not among the nodes is dropped, as upstream
                    i = index[host]
                    totals[i] = _wrap(totals[i] + _wrap(score * h.weight * scale))
        return totals

    def _prioritize_call(self, h: HTTPExtender, pod: Pod, names: list[str]) -> list[tuple[str, int]]:
        res = _want(h.send(h.cfg.prioritize_verb, self._args(h, pod, names)), "array", "HostPriorityList")
        out = []
        for item in res or []:
            item = _want(item, "object", "HostPriorityList") or {}
            host = _want(_field(item, "Host"), "string", "HostPriority.Host") or ""
            score = _want(_field(item, "Score"), "int64", "HostPriority.Score") or 0
            out.append((host, score))
        return out

    def _timed(self, call: ExtenderCall, send: Callable[..., _T], *args: Any) -> _T:
        """Record ``call`` in the cycle's calls and how long ``send(*args)`` (the request and
        the decoding of its answer) took, whether it answers or raises."""
        self.calls.append(call)
        t0 = time.perf_counter()
        try:
            return send(*args)
        finally:
            call.seconds = time.perf_counter() - t0

    # ---- preempt ----

    def preempts(self, pod: Pod) -> bool:
        return any((h := self._h(e)) is not None and h.supports_preemption() and h.is_interested(pod)
                   for e in self.items)

    def process_preemption(self, pod: Pod, candidates: dict[str, tuple[list[Pod], int]]
                           ) -> dict[str, tuple[list[Pod], int]]:
        """callExtenders: the candidates (node -> (victims, PDB violations)) each
        preempting extender keeps, in turn. A non-ignorable error raises ExtenderError."""
        checks_victims = self.version.minor >= 22
        for e in self.items:
            h = self._h(e)
            if h is None or not h.supports_preemption() or not h.is_interested(pod):
                continue
            call = ExtenderCall(h.name, "preempt", h.shown(h.cfg.preempt_verb), len(candidates))
            try:
                result = self._timed(call, self._preempt_call, h, pod, candidates)
            except _DecodeError as err:
                self._fail(h, call, str(err))
                continue
            if checks_victims:
                for n in list(result):
                    if not result[n][0]:
                        if h.is_ignorable():
                            del result[n]
                            continue
                        call.victims = {}
                        self._fail(h, call, f"expected at least one victim pod on node {json.dumps(n)}")
            call.victims = {n: [p.key for p in v] for n, (v, _) in result.items()}
            candidates = result
            if not candidates:
                break
        return candidates

    def _preempt_call(self, h: HTTPExtender, pod: Pod, candidates: dict[str, tuple[list[Pod], int]]
                      ) -> dict[str, tuple[list[Pod], int]]:
        if h.cfg.node_cache_capable:
            args = {"Pod": pod_object(pod), "NodeNameToVictims": None, "NodeNameToMetaVictims": {
                n: {"Pods": [{"UID": pod_uid(p)} for p in v], "NumPDBViolations": k}
                for n, (v, k) in candidates.items()}}
        else:
            args = {"Pod": pod_object(pod), "NodeNameToMetaVictims": None, "NodeNameToVictims": {
                n: {"Pods": [pod_object(p) for p in v], "NumPDBViolations": k} for n, (v, k) in candidates.items()}}
        res = _want(h.send(h.cfg.preempt_verb, args), "object", "ExtenderPreemptionResult") or {}
        meta = _want(_field(res, "NodeNameToMetaVictims"), "object", "ExtenderPreemptionResult.NodeNameToMetaVictims")
        out: dict[str, tuple[list[Pod], int]] = {}
        for n, mv in (meta or {}).items():
            # convertToVictims: the node must exist, each UID must be a pod on it
            try:
                on_node = self.pods_on(n)
            except KeyError:
                raise _DecodeError(f"nodeinfo not found for node name {json.dumps(clip(n))}") from None
            mv = _want(mv, "object", "MetaVictims") or {}
            by_uid = {pod_uid(p): p for p in on_node}
            victims = []
            for mp in _want(_field(mv, "Pods"), "array", "MetaVictims.Pods") or []:
                uid = _want(_field(_want(mp, "object", "MetaVictims.Pods") or {}, "UID"), "string", "MetaPod.UID")
                if uid not in by_uid:
                    raise _DecodeError(f"extender: {h.shown_prefix} claims to preempt pod (UID: "
                                       f"&{{{clip(uid)}}}) on node: {clip(n)}, but the pod is not found on that node")
                victims.append(by_uid[uid])
            violations = _want(_field(mv, "NumPDBViolations"), "int64", "MetaVictims.NumPDBViolations") or 0
            out[n] = (victims, violations)
        return out

    # ---- bind ----

    def bind(self, pod: Pod, node: str) -> tuple[bool, str | None]:
        """extendersBinding: (whether an extender took the binding, its error)."""
        if not self.items:
            return False, None
        for e in self.items:
            h = self._h(e)
            if h is None or not h.is_binder() or not h.is_interested(pod):
                continue
            call = ExtenderCall(h.name, "bind", h.shown(h.cfg.bind_verb), 1)
            args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod_uid(pod), "Node": node}
            try:
                self._timed(call, self._bind_call, h, args)
            except _DecodeError as x:
                call.error = str(x)
                if h.is_ignorable():
                    call.ignored = True
                    continue
                return True, f"{x} (extender {h.name} at {h.where}){h.cfg.note}"
            call.kept = [node]
            return True, None
        return False, None

    def _bind_call(self, h: HTTPExtender, args: dict[str, Any]) -> None:
        res = _want(h.send(h.cfg.bind_verb, args), "object", "ExtenderBindingResult") or {}
        err = _want(_field(res, "Error"), "string", "ExtenderBindingResult.Error")
        if err:
            raise _DecodeError(clip(err))


def _wrap(x: int) -> int:
    return ((x + (1 << 63)) % (1 << 64)) - (1 << 63)


def tls_data(value: str) -> bytes:
    """certData / keyData / caData: []byte, base64 in JSON and YAML."""
    return base64.b64decode(value, validate=True)
