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
import http.client
import json
import os
import socket
import ssl
import tempfile
import time
import urllib.error
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
MAX_RESPONSE_BYTES = 64 << 20  # an answer larger than this is refused (kspread's bound)
# Pod UIDs are not written in cases: each pod gets a stable UUID from its namespace and
# name, the same in every run (extenders name preemption victims by UID).
_UID_NAMESPACE = uuid.UUID("6b737072-6561-6400-8000-000000000001")


def pod_uid(pod: Pod) -> str:
    return str(uuid.uuid5(_UID_NAMESPACE, f"{pod.namespace}/{pod.name}"))


@dataclass(frozen=True, slots=True)
class TLSConfig:
    """ExtenderTLSConfig. Files are read when the extender is first called."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
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
                parts.append(f"kept {len(self.kept)}: {', '.join(self.kept) or '-'}")
            for label, m in (("failed", self.failed), ("unresolvable", self.unresolvable)):
                if m:
                    parts.append(f"{label}: " + ", ".join(f"{n} ({why})" for n, why in m.items()))
            if self.scores is not None:
                parts.append("scores: " + (", ".join(f"{n}={s}" for n, s in self.scores.items()) or "-"))
            if self.victims is not None:
                parts.append("victims: " + (", ".join(f"{n}: [{', '.join(v)}]" for n, v in self.victims.items())
                                            or "no candidate"))
        text = "; ".join(parts) + f"; {self.seconds * 1000:.1f} ms"
        return text + (" [kspread's own call for `feasible`]" if self.for_feasible else "")


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


def _url_error(verb_url: str, e: BaseException) -> str:
    """An error as Go's http.Client reports it: ``Post "URL": reason`` (the reasons of
    Go's dialer where Python's tell the same: refused, unknown host, timeout)."""
    from urllib.parse import urlsplit

    r: Any = e.reason if isinstance(e, urllib.error.URLError) else e
    parts = urlsplit(verb_url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if isinstance(r, (socket.timeout, TimeoutError)):
        reason = _TIMEOUT
    elif isinstance(r, ConnectionRefusedError):
        reason = f"dial tcp {host}:{port}: connect: connection refused"
    elif isinstance(r, socket.gaierror):
        reason = f"dial tcp: lookup {host}: no such host"
    elif isinstance(r, ssl.SSLCertVerificationError):
        reason = f"tls: failed to verify certificate: {r.verify_message}"
    else:
        reason = str(getattr(r, "strerror", None) or r) or type(r).__name__
    return f'Post "{verb_url}": {reason}'


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
        return self.cfg.url_prefix.rstrip("/") + "/" + verb

    def _context(self) -> ssl.SSLContext:
        """makeTransport: the TLS client configuration; with enableHTTPS and no CA the
        server's certificate is not verified (Insecure), as upstream."""
        if self._ssl is not None:
            return self._ssl
        tls = self.cfg.tls or TLSConfig()
        has_ca = bool(tls.ca_file or tls.ca_data)
        insecure = tls.insecure or (self.cfg.enable_https and not has_ca)
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        if insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif has_ca:
            if tls.ca_file:
                ctx.load_verify_locations(cafile=tls.ca_file)
            if tls.ca_data:
                ctx.load_verify_locations(cadata=tls.ca_data.decode("ascii", "replace"))
        if tls.cert_file or tls.cert_data:
            self._load_client_cert(ctx, tls)
        self._ssl = ctx
        return ctx

    @staticmethod
    def _load_client_cert(ctx: ssl.SSLContext, tls: TLSConfig) -> None:
        if tls.cert_file:
            ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
            return
        # certData / keyData: the ssl module reads a chain from files only
        with tempfile.TemporaryDirectory() as d:
            cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
            with open(cert, "wb") as f:
                f.write(tls.cert_data)
            with open(key, "wb") as f:
                f.write(tls.key_data)
            ctx.load_cert_chain(cert, key)

    def send(self, verb: str, args: Any) -> Any:
        """POST ``args`` as JSON to urlPrefix/verb; the decoded answer. Errors are
        upstream's messages (``ExtenderError`` is raised by the callers)."""
        url = self.url(verb)
        body = json.dumps(args, separators=(",", ":")).encode()
        req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
        deadline = time.monotonic() + self.cfg.http_timeout
        try:
            ctx = self._context() if url.lower().startswith("https:") else None
        except (OSError, ssl.SSLError, ValueError) as e:
            raise _DecodeError(f"extender TLS configuration: {e}") from None
        handlers: list[Any] = [urllib.request.HTTPSHandler(context=ctx) if ctx else urllib.request.HTTPHandler(),
                               _NoRedirect()]
        if _loopback(url):
            # Go's ProxyFromEnvironment never proxies a loopback address; urllib would
            handlers.append(urllib.request.ProxyHandler({}))
        opener = urllib.request.build_opener(*handlers)
        try:
            with opener.open(req, timeout=self.cfg.http_timeout) as resp:
                status = resp.status
                data = _read_until(resp, deadline)
        except urllib.error.HTTPError as e:
            status, data = e.code, b""
            e.close()
        except _BodyTimeout:
            raise _DecodeError("net/http: request canceled (Client.Timeout or context cancellation while reading "
                               "body)") from None
        except (OSError, http.client.HTTPException, ValueError) as e:
            raise _DecodeError(_url_error(url, e)) from None
        if time.monotonic() > deadline:
            raise _DecodeError(_url_error(url, TimeoutError()))
        if status != 200:
            raise _DecodeError(f"failed {verb} with extender at URL {url}, code {status}")
        if len(data) > MAX_RESPONSE_BYTES:
            raise _DecodeError(f"the answer of {url} is larger than {MAX_RESPONSE_BYTES >> 20} MiB")
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise _DecodeError(_json_error(data, e)) from None


def _loopback(url: str) -> bool:
    import ipaddress
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _read_until(resp: Any, deadline: float) -> bytes:
    """The answer's body, at most MAX_RESPONSE_BYTES + 1 bytes, read before ``deadline``
    (http.Client's Timeout covers reading the body too): a server that trickles its
    answer times out."""
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_RESPONSE_BYTES:
        chunk = resp.read1(1 << 16) if hasattr(resp, "read1") else resp.read(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if time.monotonic() > deadline:
            raise _BodyTimeout
    return b"".join(chunks)


class _BodyTimeout(Exception):
    pass


def _json_error(data: bytes, e: Exception) -> str:
    """A JSON syntax error as Go's decoder words the common ones."""
    text = data.lstrip()
    if not text:
        return "EOF"
    pos = getattr(e, "pos", None)
    if isinstance(e, json.JSONDecodeError) and pos is not None and e.msg == "Expecting value":
        c = e.doc[pos:pos + 1]
        if c and c.isprintable():
            return f"invalid character {c!r} looking for beginning of value"
    return f"invalid JSON: {e}"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Go's client follows redirects; kspread calls no URL the user did not write, so a
    redirect is reported as the status it is."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


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

    def start_cycle(self, calls: list[ExtenderCall]) -> None:
        self.calls = calls
        self.podless = set()

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
        raise ExtenderError(f"{message} (extender {h.name} at {h.where})", f"extender:{h.name}")

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
            call = ExtenderCall(h.name, "filter", h.url(h.cfg.filter_verb), len(names), for_feasible=for_feasible)
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
                    statuses[n] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (why,), f"extender:{h.name}")
            for n, why in failed.items():
                if n not in unresolvable and n not in kept_set and self._known(n):
                    statuses[n] = Status(Code.UNSCHEDULABLE, (why,), f"extender:{h.name}")
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
            raise _DecodeError(err)
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
                raise _DecodeError(f"extender {json.dumps(h.cfg.url_prefix)} claims a filtered node {json.dumps(n)} "
                                   "which is not found in the input node list")
        failed = _string_map(_field(res, "FailedNodes"), "ExtenderFilterResult.FailedNodes")
        unresolvable = _string_map(_field(res, "FailedAndUnresolvableNodes"),
                                   "ExtenderFilterResult.FailedAndUnresolvableNodes") if unresolvable_field else {}
        return kept, failed, unresolvable, by_name

    # ---- prioritize ----

    def prioritize(self, pod: Pod, names: list[str]) -> list[int]:
        """The extenders' part of prioritizeNodes: per node of ``names``, the sum over
        interested prioritizers of score * weight (* MaxNodeScore / MaxExtenderPriority
        from 1.17), in int64. Static extenders first add their given scores the same way."""
        scale = self.version.extender_score_scale
        totals = [0] * len(names)
        index = {n: i for i, n in enumerate(names)}
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
            call = ExtenderCall(h.name, "prioritize", h.url(h.cfg.prioritize_verb), len(names))
            try:
                scores = self._timed(call, self._prioritize_call, h, pod, names)
            except _DecodeError as err:
                # "Prioritization errors from extender can be ignored"
                call.error, call.ignored = str(err), True
                continue
            call.scores = {}
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
            call = ExtenderCall(h.name, "preempt", h.url(h.cfg.preempt_verb), len(candidates))
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
                raise _DecodeError(f"nodeinfo not found for node name {json.dumps(n)}") from None
            mv = _want(mv, "object", "MetaVictims") or {}
            by_uid = {pod_uid(p): p for p in on_node}
            victims = []
            for mp in _want(_field(mv, "Pods"), "array", "MetaVictims.Pods") or []:
                uid = _want(_field(_want(mp, "object", "MetaVictims.Pods") or {}, "UID"), "string", "MetaPod.UID")
                if uid not in by_uid:
                    raise _DecodeError(f"extender: {h.cfg.url_prefix} claims to preempt pod (UID: &{{{uid}}}) on "
                                       f"node: {n}, but the pod is not found on that node")
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
            call = ExtenderCall(h.name, "bind", h.url(h.cfg.bind_verb), 1)
            args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod_uid(pod), "Node": node}
            try:
                self._timed(call, self._bind_call, h, args)
            except _DecodeError as x:
                call.error = str(x)
                if h.is_ignorable():
                    call.ignored = True
                    continue
                return True, f"{x} (extender {h.name} at {h.where})"
            call.kept = [node]
            return True, None
        return False, None

    def _bind_call(self, h: HTTPExtender, args: dict[str, Any]) -> None:
        res = _want(h.send(h.cfg.bind_verb, args), "object", "ExtenderBindingResult") or {}
        err = _want(_field(res, "Error"), "string", "ExtenderBindingResult.Error")
        if err:
            raise _DecodeError(err)


def _wrap(x: int) -> int:
    return ((x + (1 << 63)) % (1 << 64)) - (1 << 63)


def tls_data(value: str) -> bytes:
    """certData / keyData / caData: []byte, base64 in JSON and YAML."""
    return base64.b64decode(value, validate=True)
