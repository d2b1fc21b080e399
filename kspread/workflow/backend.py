"""Run cases through a backend: a kube-scheduler build of upstream's own code (``backend/``).

A backend is a program: ``BACKEND --info`` prints ``{"kubernetesVersion", "plugins",
"outOfTreePlugins", "protocols"}`` (``serve``; ``devices``, ``workloads``: it takes device
objects, Workloads and pods' workloadRefs in 1.35's shape, scheduling.k8s.io/v1alpha1, which no
backend of 1.36 or later is sent; ``podGroups``: PodGroups and pods' schedulingGroup, 1.36's
scheduling.k8s.io/v1alpha2; ``steps``: a sequence's steps; ``max``: its ``replicas: max``
entries, and ``capacity`` reported; ``deviceSteps``: the device steps and the device taint
eviction controller); ``BACKEND`` reads one case as JSON on stdin (``backend_input``:
the case as kspread built it, as Kubernetes objects, and the profile as a
KubeSchedulerConfiguration) and prints what upstream's scheduler did (the last cycle's filter
statuses, raw / normalized / weighted scores, totals, selected node, preemption and the dry
run's candidates, when asked; the placements). ``run_backend`` turns that into the shape of
``Outcome.actual`` so that the runner compares it exactly as it compares the reference
engine's. A backend whose ``protocols`` list ``serve`` runs every case of a run in one process
(``BACKEND --serve``: one case a line on stdin, its answer a line on stdout); another, one
process per case.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import json
import os
import re
import select
import selectors
import signal
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from kspread.engine import apiobjects as api
from kspread.engine.extender import is_loopback
from kspread.engine.model import Pod
from kspread.engine.plugins.interpodaffinity import match_label_keys_enabled
from kspread.engine.steps import MaxEntry, Step, pdb_matches
from kspread.errors import did_you_mean, format_path
from kspread.format.case import Case, spread_specs
from kspread.format.labelkeys import merge_affinity_keys
from kspread.format.storage import DISK_SOURCES as _DISK_SOURCES
from kspread.workflow.backend_devices import device_objects, device_taint_rule, pod_resource_claims, quantity
from kspread.workflow.runner import Outcome, _in_node_order, compare, domain_counts

# A case's time limit: this many seconds, plus _SECONDS_PER_NODE_POD for each node times each
# pod (bound and incoming): a 1,000-pod sequence at 5,000 nodes gets 120 + 500 s.
_CASE_TIMEOUT_S = 120
_SECONDS_PER_NODE_POD = 1e-4
# a serving backend answers its own limit's error; kspread ends it this much later
_SERVE_GRACE_S = 15
_INFO_TIMEOUT_S = 60
# A backend's answer (stdout) larger than this is refused; of its stderr the last 64 KiB are kept.
MAX_OUTPUT_BYTES = 64 << 20
_STDERR_KEPT = 64 << 10
_INFO_MAX_BYTES = 1 << 20
# The environment a backend runs with: these variables of kspread's (and LC_*), no other. A
# backend reads no configuration from the environment; Go's runtime reads the GO* ones.
_ENV_KEPT = ("PATH", "HOME", "TMPDIR", "LANG", "TZ", "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG", "GOTRACEBACK")
_VERSION = re.compile(r"v?(\d+)\.(\d+)(\.\d+)?([-+][0-9A-Za-z.+-]*)?")


class BackendError(Exception):
    """The backend could not be started or answered nonsense: a message naming it; ``path``:
    the field of the case it is about, when known (a plugin's pluginConfig it refused)."""

    def __init__(self, message: str, path: tuple = ()) -> None:
        super().__init__(message)
        self.path = path


class NotApplicable(Exception):
    """The case cannot run through this backend (another version, an in-process extender):
    a skip, with the reason."""


@dataclass(frozen=True)
class Backend:
    path: str
    kubernetes_version: str  # e.g. v1.35.4
    plugins: tuple[str, ...]
    out_of_tree: tuple[str, ...]
    protocols: tuple[str, ...] = ()

    @property
    def minor(self) -> int:
        parts = self.kubernetes_version.lstrip("v").split(".")
        return int(parts[1])

    def applicable(self, case: Case) -> str | None:
        """None, or why the case cannot run here."""
        if case.version.minor != self.minor:
            return (f"the case is at version {case.version}, the backend {self.path} was built from "
                    f"Kubernetes {self.kubernetes_version}")
        missing = [n for n in case.profile.out_of_tree if n not in self.out_of_tree]
        if missing:
            return (f"the backend {self.path} does not register out-of-tree plugin(s) {', '.join(missing)} "
                    f"(it registers: {_text(', '.join(self.out_of_tree), 2000) or 'none'})"
                    + _text("".join(did_you_mean(n, self.out_of_tree) for n in missing), 2000))
        for e in case.profile.extenders:
            if e.http is None:
                return (f"the profile's extender {e.name!r} is kspread's in-process one (filter / prioritize "
                        "written in the case), which a backend's scheduler cannot call")
            host = urllib.parse.urlsplit(e.http.url_prefix).hostname or ""
            if not is_loopback(host):  # the extender module's test (127.0.0.0/8, ::1, localhost)
                return (f"the profile's extender {_text(e.name, 200)!r} is at {_text(host, 200)!r}, not a loopback "
                        "address: a backend calls extenders on this machine only (127.0.0.1, ::1, localhost)")
        unsent = [f"{q.key} ({', '.join(u)})" for q in (*case.cluster.pods, *case.incoming)
                  if (u := [x for x in q.unmodelled if _unsent(x)][:3])]
        if unsent:
            return (f"pods {', '.join(unsent[:3])}{', ...' if len(unsent) > 3 else ''} have volumes or resource "
                    "claims, which kspread does not model and a backend is not sent (its scheduler would "
                    "place them as if they had none)")
        if case.cluster.devices is not None and "devices" not in self.protocols:
            return (f"the case has device objects or pod resourceClaims (dynamic resource allocation), which the "
                    f"backend {self.path} does not take (its --info lists no protocol `devices`)")
        gangs = case.cluster.workloads or any(q.workload_ref is not None for q in (*case.cluster.pods, *case.incoming))
        if gangs and self.minor >= 36:
            # the protocol `workloads` is 1.35's shape: 1.36 serves no v1alpha1 Workload and dropped workloadRef
            return (f"the case has Workload objects or pods with a workloadRef (gangs), which kspread sends in 1.35's "
                    f"shape (scheduling.k8s.io/v1alpha1 Workloads, spec.workloadRef); the backend {self.path} was "
                    f"built from Kubernetes {self.kubernetes_version}, which serves v1alpha2 Workloads, PodGroup "
                    "objects and pods' spec.schedulingGroup instead")
        if gangs and "workloads" not in self.protocols:
            return (f"the case has Workload objects or pods with a workloadRef (gangs), which the backend {self.path} "
                    "does not take (its --info lists no protocol `workloads`)")
        if (case.cluster.pod_groups or any(q.scheduling_group is not None for q in (*case.cluster.pods,
                                                                                  *case.incoming))) \
                and "podGroups" not in self.protocols:
            return (f"the case has PodGroup objects or pods with a schedulingGroup (1.36's pod groups), which the "
                    f"backend {self.path} does not take (its --info lists no protocol `podGroups`)")
        unreported = [k for k in case.expect if k not in REPORTED and not (k == "spread" and _schedule_spread(case))]
        if unreported:
            return (f"the case expects {', '.join(unreported)}, which a backend does not report"
                    + "".join(f" ({NOT_REPORTED[k]})" for k in unreported if k in NOT_REPORTED))
        timeline = getattr(case, "timeline", None)
        if timeline:
            why = self._steps_unsent(case, timeline)
            if why is not None:
                return why
        elif any(p.scheduling_gates for p in case.incoming) and "steps" not in self.protocols:
            return (f"the sequence has pods with scheduling gates, which the backend {self.path} does not take (its "
                    "--info lists no protocol `steps`)")
        pending = [q for q in case.cluster.pods if not q.node_name]
        if pending and case.is_sequence:
            # kspread holds them for the whole sequence; upstream's queue holds a pod that failed
            # among its unschedulable pods only until an event its rejecting plugins register
            return (f"the sequence has pending pods in `pods` ({_keys(pending)}), which kspread holds as waiting "
                    "for the whole sequence (their nominations reserving room) while upstream's queue would "
                    "retry them on the sequence's events (a victim's deletion, a binding), as the plugins "
                    "that rejected them register, which the case does not say")
        grouped = [q for q in pending if q.workload_ref is not None or q.scheduling_group is not None]
        if grouped:
            # (the others are held as kspread holds them: backend/kspreadbackend/held.go)
            return (f"the case has pending pods in `pods` of a gang or pod group ({_keys(grouped)}), which a "
                    "backend holds with a scheduling gate of its own, which its scheduler's group scheduling "
                    "would see (a pod group cycle leaves a gated pod behind)")
        return None

    def _steps_unsent(self, case: Case, timeline: list[Any]) -> str | None:
        """None, or why the backend cannot run the sequence's timeline (steps.go: protocol `steps`)."""
        if any(isinstance(t, MaxEntry) for t in timeline) and "max" not in self.protocols:
            # each replica is created when the one before it is placed (maxentry.go: a step of kind "max")
            return (f"the sequence has a `replicas: max` entry, which the backend {self.path} does not run (its "
                    "--info lists no protocol `max`: a build before it, or for 1.32 or earlier)")
        if "steps" not in self.protocols:
            return (f"the sequence has steps, which the backend {self.path} does not apply (its --info lists no "
                    "protocol `steps`: a build before it, or for 1.32 or earlier, whose scheduling queue cannot "
                    "run on the sequence's clock)")
        device_steps = "deviceSteps" in self.protocols
        sent = STEP_KINDS_SENT + (DEVICE_STEP_KINDS if device_steps else ())
        kinds = [t.kind for t in timeline if isinstance(t, Step) and t.kind not in sent]
        if kinds:
            return (f"the sequence has {', '.join(dict.fromkeys(kinds))} steps, which the backend {self.path} "
                    "does not apply (its --info lists no protocol `deviceSteps`: the device taint eviction "
                    "controller and a driver's device conditions)")
        devices = case.cluster.devices
        if devices is not None:
            listed = [d for s in devices.slices for d in s.devices]
            if not device_steps and (any(t.effect == "NoExecute" for d in listed for t in d.taints)
                                     or any(r.taint.effect == "NoExecute" for r in devices.taint_rules)):
                return (f"the sequence has steps and devices with NoExecute taints (of their own or a "
                        f"DeviceTaintRule's), whose evictions (the device taint eviction controller) the backend "
                        f"{self.path} does not emulate (its --info lists no protocol `deviceSteps`)")
            added = {t.arg.name for t in timeline if isinstance(t, Step) and t.kind == "addNode"}
            late = [s.name for s in devices.slices if s.node_name in added
                    and any(t.effect == "NoExecute" for d in s.devices for t in d.taints)]
            if late and "nodeSlices" not in self.protocols:
                # (a backend with it publishes such a node's slices with its addNode step: steps.go)
                return (f"the sequence has steps and NoExecute device taints in slices of a node an addNode step "
                        f"adds ({', '.join(late[:3])}), which kspread dates from the step (the slice published "
                        f"with its node) and the backend {self.path}, which creates every slice at the start (its "
                        "--info lists no protocol `nodeSlices`), from the start")
            if any(d.binding_conditions is not None for d in listed):
                return ("the sequence has steps and devices with binding conditions: upstream's PreBind waits for "
                        "them on the wall clock, not on the sequence's (a `wait` does not time them out)")
        ephemeral = [q for q in (*case.cluster.pods, *case.incoming)
                     if any(v.source is not None and "ephemeral" in v.source for v in q.volumes)]
        if ephemeral and "ephemeralVolumes" not in self.protocols:
            # (backend/kspreadbackend/ephemeral.go: the controllers that delete a deleted pod's claims
            # and make a replacement's)
            return (f"the sequence has steps and pods with generic ephemeral volumes ({_keys(ephemeral)}), whose "
                    f"claims the backend {self.path} does not delete with the pod or make for a replacement (its "
                    "--info lists no protocol `ephemeralVolumes`)")
        return None


# the step kinds a backend with the protocol `steps` applies (backend/kspreadbackend/steps.go)
STEP_KINDS_SENT = ("drain", "cordon", "uncordon", "addNode", "deleteNode", "zoneDown", "taint", "untaint", "label",
                   "deletePod", "ungate", "wait")
# and with the protocol `deviceSteps` (backend/kspreadbackend/devicetaints.go)
DEVICE_STEP_KINDS = ("addDeviceTaintRule", "deleteDeviceTaintRule", "setDeviceConditions")


def _keys(pods: Sequence[Any]) -> str:
    """The first three pods' keys, for a message."""
    return ", ".join(q.key for q in pods[:3]) + (", ..." if len(pods) > 3 else "")


def _text(raw: str, limit: int) -> str:
    """Text a backend (or a case) wrote, for a message: at most ``limit`` characters, every
    control character but line breaks and tabs escaped (no terminal escape gets through)."""
    if len(raw) > limit:
        raw = raw[:limit] + f"... ({len(raw) - limit} more characters)"
    return "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in raw)


class _Ran:
    """What a backend's process did: its exit code, stdout, the tail of its stderr."""

    def __init__(self, code: int, out: bytes, err: bytes) -> None:
        self.code, self.out, self.err = code, out, err

    def stderr(self) -> str:
        return self.err.decode("utf-8", "replace")


def _run(path: str, args: list[str], data: bytes, timeout: float, cap: int, what: str) -> _Ran:
    """Runs the backend in a session of its own (a process group), feeding ``data`` and reading
    at most ``cap`` bytes of its answer within ``timeout`` seconds; then ends the whole group, so
    that nothing it started outlives it. A BackendError naming ``what`` (e.g. "--info") when it
    cannot start, takes too long or answers too much."""
    env = {k: v for k, v in os.environ.items() if k in _ENV_KEPT or k.startswith("LC_")}
    try:
        p = subprocess.Popen([path, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True, env=env)
    except OSError as e:
        raise BackendError(f"backend {path}: {e.strerror or e}") from None
    try:
        out, err, problem = _communicate(p, data, time.monotonic() + timeout, cap)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)  # the leader is not reaped yet: its group id is still its own
        for f in (p.stdin, p.stdout, p.stderr):
            if f is not None and not f.closed:
                f.close()
        code = p.wait()
    if problem == "timeout":
        raise BackendError(f"backend {path}: {what} took more than {timeout:g} s (its processes were ended)")
    if problem == "cap":
        raise BackendError(f"backend {path}: {what}: the answer is larger than {cap >> 20 or cap} "
                           f"{'MiB' if cap >> 20 else 'bytes'}, kspread's bound (its processes were ended)")
    return _Ran(code, bytes(out), bytes(err))


def _exited(pid: int) -> bool:
    """The process has ended (it is not reaped: ``_run`` ends its group first)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _communicate(p: subprocess.Popen, data: bytes, deadline: float, cap: int) -> tuple[bytearray, bytearray, str]:
    """subprocess's communicate, bounded: ("timeout" / "cap" / "") as the third item."""
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    out, err = bytearray(), bytearray()
    view, pos = memoryview(data), 0
    with selectors.DefaultSelector() as sel:
        if data:
            os.set_blocking(p.stdin.fileno(), False)
            sel.register(p.stdin, selectors.EVENT_WRITE)
        else:
            p.stdin.close()
        sel.register(p.stdout, selectors.EVENT_READ)
        sel.register(p.stderr, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return out, err, "timeout"
            ready = sel.select(min(left, 0.05))
            if not ready and _exited(p.pid):
                # it has ended and nothing is left to read: a pipe still open is a process it
                # started, which is ended with its group
                return out, err, ""
            for key, _ in ready:
                f = key.fileobj
                if f is p.stdin:
                    try:
                        pos += os.write(p.stdin.fileno(), view[pos:pos + select.PIPE_BUF])
                    except (BrokenPipeError, BlockingIOError) as e:
                        if isinstance(e, BlockingIOError):
                            continue
                        pos = len(data)
                    if pos >= len(data):
                        sel.unregister(p.stdin)
                        p.stdin.close()
                    continue
                chunk = os.read(f.fileno(), 1 << 16)  # type: ignore[union-attr]
                if not chunk:
                    sel.unregister(f)
                    f.close()  # type: ignore[union-attr]
                elif f is p.stdout:
                    out += chunk
                    if len(out) > cap:
                        return out, err, "cap"
                else:
                    err += chunk
                    if len(err) > 2 * _STDERR_KEPT:
                        del err[:-_STDERR_KEPT]
    while not _exited(p.pid):
        if time.monotonic() > deadline:
            return out, err, "timeout"
        time.sleep(0.005)
    return out, err, ""


def _failure(ran: _Ran) -> str:
    """What a backend that printed no answer said: a Go panic's message (and the first frame
    outside Go's runtime, where it happened), else the end of its stderr."""
    said = ran.stderr()
    m = re.search(r"^(panic: |fatal error: )", said, re.M)
    if m:
        block = said[m.start():]
        head, _, stack = block.partition("\ngoroutine ")
        frame = ""
        for fn, loc in re.findall(r"^(\S.*\))\n\t(\S+:\d+)", stack, re.M):
            if not fn.startswith(("runtime.", "panic(", "k8s.io/apimachinery/pkg/util/runtime.")):
                frame = f"\n  at {fn} ({loc})"
                break
        return _text(head.strip() + frame, 2000)
    return _text(said.strip()[-600:], 600) or "(no output)"


@lru_cache(maxsize=8)
def open_backend(path: str) -> Backend:
    """The backend at ``path``, from its ``--info``."""
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise BackendError(f"backend {path}: not an executable file (build one with backend/build.sh)")
    ran = _run(path, ["--info"], b"", _INFO_TIMEOUT_S, _INFO_MAX_BYTES, "--info")
    try:
        info = json.loads(ran.out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        said = _failure(ran) if not ran.out.strip() else _text(ran.out.decode("utf-8", "replace").strip(), 300)
        raise BackendError(f"backend {path}: --info did not print the backend's JSON (exit {ran.code}"
                           f"{'; not UTF-8' if isinstance(e, UnicodeDecodeError) else ''}): "
                           f"{said or '(no output)'}") from None
    problem = _problem(info, _INFO_SHAPE, "")
    if problem is None and not _VERSION.fullmatch(info["kubernetesVersion"]):
        problem = (f"kubernetesVersion: {_text(info['kubernetesVersion'], 100)!r} is not a Kubernetes version "
                   "such as v1.35.4")
    if problem is not None:
        raise BackendError(f"backend {path}: --info printed JSON that is not the backend's information: {problem}")
    return Backend(path, info["kubernetesVersion"], tuple(info["plugins"]), tuple(info.get("outOfTreePlugins") or ()),
                   tuple(info.get("protocols") or ()))


# ---- what a backend prints, checked before it is read -------------------------------------
# A shape: "str", "int" (not a boolean), "bool"; ("null", s): s or null; ("list", s); ("map", s):
# string keys; {key: s} an object (a key ending in "?" may be missing; other keys are ignored).

_Shape = Any
_STATUS = {"code": "str", "reason?": "str", "plugin?": "str"}
_CYCLE = {
    "pod?": "str", "filter": ("map", _STATUS), "feasible": ("list", "str"),
    "rawScores": ("map", ("map", "int")), "scores": ("map", ("map", "int")), "totals": ("map", "int"),
    "weightedScores?": ("map", ("map", "int")), "selected?": ("null", "str"), "scored?": "bool",
    "postFilterRan?": "bool", "nominated?": ("null", "str"), "victims?": ("null", ("list", "str")),
    "candidates?": ("null", ("map", ("list", "str"))), "error?": ("null", "str"),
}
_ANSWER = {"error?": ("null", "str"), "kubernetesVersion?": "str", "cycles?": ("null", ("list", _CYCLE)),
           "placements?": ("null", ("map", ("null", "str"))), "deleted?": ("null", ("list", "str")),
           "allocations?": ("null", ("map", ("null", ("list", "str")))),
           "capacity?": ("null", ("map", "int")), "millis?": "int"}
_INFO_SHAPE = {"kubernetesVersion": "str", "plugins": ("list", "str"), "outOfTreePlugins?": ("null", ("list", "str")),
               "protocols?": ("null", ("list", "str"))}
_JSON_TYPE = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
              float: "a number", type(None): "null"}


def _problem(v: Any, shape: _Shape, at: str) -> str | None:
    """None when ``v`` has the shape, else what is wrong and where (``cycles[0].totals.n1: ...``)."""
    where = f"{at}: " if at else ""
    if isinstance(shape, tuple) and shape[0] == "null":
        return None if v is None else _problem(v, shape[1], at)
    ok = {"str": isinstance(v, str), "int": isinstance(v, int) and not isinstance(v, bool),
          "bool": isinstance(v, bool)}
    if isinstance(shape, str):
        if ok[shape]:
            return None
        want = {"str": "a string", "int": "an integer", "bool": "true or false"}[shape]
        return f"{where}{_JSON_TYPE.get(type(v), 'a value')} where {want} belongs"
    if isinstance(shape, dict):
        if not isinstance(v, dict):
            return f"{where}{_JSON_TYPE.get(type(v), 'a value')}, not an object"
        for key, sub in shape.items():
            name = key.rstrip("?")
            if name not in v:
                if key.endswith("?"):
                    continue
                return f"{where}no key {name!r}"
            problem = _problem(v[name], sub, f"{at}.{name}" if at else name)
            if problem is not None:
                return problem
        return None
    kind, sub = shape
    if kind == "list":
        if not isinstance(v, list):
            return f"{where}{_JSON_TYPE.get(type(v), 'a value')}, not a list"
        for i, item in enumerate(v):
            problem = _problem(item, sub, f"{at}[{i}]")
            if problem is not None:
                return problem
        return None
    if not isinstance(v, dict):
        return f"{where}{_JSON_TYPE.get(type(v), 'a value')}, not an object"
    for k, item in v.items():
        problem = _problem(item, sub, f"{at}.{_text(k, 100)}" if at else _text(k, 100))
        if problem is not None:
            return problem
    return None


def _unknown_nodes(out: Mapping[str, Any], nodes: set[str]) -> str | None:
    """A node the answer names that the case does not have."""
    for i, c in enumerate(out.get("cycles") or ()):
        named = [*c["filter"], *c["feasible"], *c["totals"], *(n for s in (*c["rawScores"].values(),
                                                                          *c["scores"].values()) for n in s)]
        named += [n for n in (c.get("selected"), c.get("nominated")) if n is not None]
        named += list(c.get("candidates") or ())
        for n in named:
            if n not in nodes:
                return f"cycles[{i}] names node {_text(n, 100)!r}, which the case does not have"
    return None


def _unsent(what: str) -> bool:
    """A ``Pod.unmodelled`` entry that a backend is not sent: resource claims, and the volume
    sources kspread keeps none of (``kspread.format.storage.pod_volumes``: claims, ephemeral
    volumes and the in-tree disks are sent)."""
    if what == "claims":  # the shorthand: its volumes and claims are sent
        return False
    source = what.rpartition(".")[2]
    return what == "resourceClaims" or source not in _SENT_SOURCES


_SENT_SOURCES = frozenset(("persistentVolumeClaim", "ephemeral", *_DISK_SOURCES))


# ---- the case as Kubernetes objects -------------------------------------------------------

def _container(c) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name, "image": c.image or "img",
                           "resources": {"requests": api.resources(c.requests)}}
    if c.ports:
        out["ports"] = [{"containerPort": p.container_port, "hostPort": p.host_port, "protocol": p.protocol,
                         **({"hostIP": p.host_ip} if p.host_ip else {})} for p in c.ports]
    if c.restartable:
        out["restartPolicy"] = "Always"
    if c.restart_all:
        # the rule's action, all the scheduler reads (NodeDeclaredFeatures' inference); API
        # fields from 1.34 (the action from 1.35), which an older backend's decoding drops
        out["restartPolicyRules"] = [{"action": "RestartAllContainers"}]
    if c.claims:
        # the pod's resourceClaims the container uses (DRANodeAllocatableResources reads them)
        out["resources"]["claims"] = [{"name": n} for n in c.claims]
    return out


def _resize_status(rs, status: dict[str, Any], minor: int) -> None:
    """A pod's in-place resize status (``ResizeStatus``) into its status object, as the case
    gave it: the containers' statuses (resources.requests, allocatedResources), status.resize,
    the PodResizePending condition (its reason; the only condition of the resize kspread keeps
    and upstream's resource helpers read) and, from 1.35 (the fields' first release), the
    pod-level resources and allocatedResources."""
    def one(c) -> dict[str, Any]:
        out: dict[str, Any] = {"name": c.name}
        if c.has_resources:
            out["resources"] = {} if c.requests is None else {"requests": api.resources(c.requests)}
        if c.allocated is not None:
            out["allocatedResources"] = api.resources(c.allocated)
        return out

    if rs.containers:
        status["containerStatuses"] = [one(c) for c in rs.containers]
    if rs.inits:
        status["initContainerStatuses"] = [one(c) for c in rs.inits]
    if rs.resize:
        status["resize"] = rs.resize
    if rs.pending_reason is not None:
        status.setdefault("conditions", []).append({"type": "PodResizePending", "status": "True",
                                                    "reason": rs.pending_reason})
    if minor >= 35:
        if rs.level_has_resources:
            status["resources"] = {} if rs.level_requests is None else {"requests": api.resources(rs.level_requests)}
        if rs.level_allocated is not None:
            status["allocatedResources"] = api.resources(rs.level_allocated)


_EPOCH = 1700000000


def _pod(p, seq: int, scheduler_name: str, merge_label_keys: bool, minor: int) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": p.name, "namespace": p.namespace, "labels": dict(p.labels),
                            "uid": f"{p.namespace}/{p.name}",
                            "creationTimestamp": _time(_EPOCH + seq)}
    if p.controller is not None:
        meta["ownerReferences"] = [{"apiVersion": p.controller.api_version, "kind": p.controller.kind,
                                    "name": p.controller.name, "uid": f"{p.controller.kind}/{p.controller.name}",
                                    "controller": True}]
    if p.terminating:
        meta["deletionTimestamp"] = _time(_EPOCH + seq)
    spec: dict[str, Any] = {
        "schedulerName": scheduler_name, "priority": p.priority, "preemptionPolicy": p.preemption_policy,
        # `containers: []` is a pod with no containers (the builder gives a pod that names neither
        # requests nor containers its one container): upstream then counts no requests either
        "containers": [_container(c) for c in p.containers],
    }
    if p.priority_class_name:
        spec["priorityClassName"] = p.priority_class_name
    if p.init_containers:
        spec["initContainers"] = [_container(c) for c in p.init_containers]
    if p.overhead:
        spec["overhead"] = api.resources(p.overhead)
    if p.level_requests or p.level_limits:
        spec["resources"] = {"requests": api.resources(p.level_requests), "limits": api.resources(p.level_limits)}
    if p.node_name:
        spec["nodeName"] = p.node_name
    if p.node_selector:
        spec["nodeSelector"] = dict(p.node_selector)
    aff = api.affinity(p.affinity) if p.affinity is not None else None
    if aff:
        if merge_label_keys:
            merge_affinity_keys(aff, p.labels)  # the API server's merge (labelkeys.py)
        spec["affinity"] = aff
    if p.tolerations:
        spec["tolerations"] = api.tolerations(p.tolerations)
    if p.topology_spread_constraints:
        spec["topologySpreadConstraints"] = [api.spread_constraint(c) for c in p.topology_spread_constraints]
    if p.resource_claims:
        spec["resourceClaims"] = pod_resource_claims(p.name, p.resource_claims)
    if p.workload_ref is not None:
        ref = p.workload_ref
        spec["workloadRef"] = {"name": ref.name, "podGroup": ref.pod_group,
                               **({"podGroupReplicaKey": ref.replica_key} if ref.replica_key else {})}
    if p.scheduling_group is not None:
        spec["schedulingGroup"] = {"podGroupName": p.scheduling_group}
    if p.scheduling_gates:
        spec["schedulingGates"] = [{"name": g} for g in p.scheduling_gates]
    if p.volumes:
        # as written; a `claims:` item as the StatefulSet controller writes it (claim <volume>-<pod>)
        spec["volumes"] = [dict(v.source) if v.source is not None else
                           {"name": v.name, "persistentVolumeClaim": {"claimName": v.claim}} for v in p.volumes]
    status: dict[str, Any] = {"phase": "Running" if p.node_name else "Pending"}
    if p.node_name:
        status["startTime"] = _time(p.start_time if p.start_time is not None else _EPOCH + seq)
    if p.nominated_node:
        status["nominatedNodeName"] = p.nominated_node
    if p.preempted_by_scheduler:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    if p.resize is not None:
        _resize_status(p.resize, status, minor)
    if p.node_allocatable_claims:
        # DRANodeAllocatableResources (the case's pods have them only with the gate on, at 1.36)
        status["nodeAllocatableResourceClaimStatuses"] = [
            {"resourceClaimName": st.claim, "containers": list(st.containers),
             "resources": {k: quantity(q) for k, q in st.resources}} for st in p.node_allocatable_claims]
    return {"metadata": meta, "spec": spec, "status": status}


def _time(t: float) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# kspread's "unlimited" (a node without allocatable) as a quantity upstream's int64 arithmetic
# survives (LeastAllocated multiplies by 100): 1e6 cores, 1e6Gi. Scores of resource plugins on such
# nodes differ from the reference engine's: a documented difference.
_UNLIMITED_AS = {"cpu": "1000000", "memory": "1000000Gi", "ephemeral-storage": "1000000Gi"}


def _node(n) -> dict[str, Any]:
    from kspread.engine.model import UNLIMITED

    alloc = {k: (_UNLIMITED_AS.get(k, str(v)) if v == UNLIMITED else api.quantity(k, v))
             for k, v in n.allocatable.items()}
    return {"metadata": {"name": n.name, "labels": dict(n.labels)},
            "spec": {"unschedulable": n.unschedulable,
                     "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.taints]},
            "status": {"allocatable": alloc, "capacity": alloc,
                       "images": [{"names": list(i.names), "sizeBytes": i.size_bytes} for i in n.images],
                       # (NodeDeclaredFeatures; a field from 1.35, which an older backend's decoding drops)
                       **({"declaredFeatures": sorted(n.declared_features)} if n.declared_features else {})}}


def _claim_spec(c) -> dict[str, Any]:
    """A ``kspread.engine.storage.ClaimSpec`` as a PersistentVolumeClaimSpec."""
    out: dict[str, Any] = {"accessModes": list(c.access_modes), "volumeMode": c.volume_mode,
                           "resources": {"requests": {} if c.request is None else {"storage": str(c.request)}}}
    if c.storage_class is not None:
        out["storageClassName"] = c.storage_class
    if c.selector is not None:
        out["selector"] = api.label_selector(c.selector)
    if c.volume_attributes_class:
        out["volumeAttributesClassName"] = c.volume_attributes_class
    if c.volume_name:
        out["volumeName"] = c.volume_name
    return out


def _workload(w) -> dict[str, Any]:
    """A Workload as kspread read it: its pod groups, each a gang of minCount or basic."""
    groups = [{"name": g, "policy": {"basic": {}} if mc is None else {"gang": {"minCount": mc}}}
              for g, mc in w.pod_groups.items()]
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
            "metadata": {"name": w.name, "namespace": w.namespace}, "spec": {"podGroups": groups}}


def _pod_group(g) -> dict[str, Any]:
    """A PodGroup (scheduling.k8s.io/v1alpha2, 1.36) as kspread read it: its policy, a gang of
    minCount or basic, the Workload template it names, and what workload-aware preemption
    reads (priority, 0 when unset; disruptionMode), its schedulingConstraints and its
    resourceClaims."""
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}} if g.min_count is None else
                            {"gang": {"minCount": g.min_count}}}
    if g.priority:
        spec["priority"] = g.priority
    if g.disruption_mode is not None:
        spec["disruptionMode"] = g.disruption_mode
    if g.constrained:
        # TopologyAwareWorkloadScheduling: set (an empty object too), with its topology key
        spec["schedulingConstraints"] = {"topology": [{"key": g.topology_key}]} if g.topology_key else {}
    if g.template is not None:
        spec["podGroupTemplateRef"] = {"workload": {"workloadName": g.template[0],
                                                    "podGroupTemplateName": g.template[1]}}
    if g.resource_claims:
        # DRAWorkloadResourceClaims (kspread keeps them only with the gate on): the backend's
        # claim controller makes a template entry's claim <podgroup>-<name>, owned by the PodGroup
        spec["resourceClaims"] = [{"name": c.name, **({"resourceClaimName": c.claim_name} if c.claim_name
                                                      else {"resourceClaimTemplateName": c.template})}
                                  for c in g.resource_claims]
    meta: dict[str, Any] = {"name": g.name, "namespace": g.namespace}
    if g.uid:
        meta["uid"] = g.uid  # (else the backend's stand-in, podgroup/<namespace>/<name>, as kspread's)
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": meta, "spec": spec}


def _storage(storage) -> list[dict[str, Any]]:
    """The storage objects: each as the case wrote it (a claim's controller reference to a pod
    given that pod's uid as the backend writes it), then the claims the controllers make for
    the pods (a generic ephemeral volume's, owned by its pod; a `claims:` item's)."""
    if storage is None:
        return []
    out: list[dict[str, Any]] = []
    written: set[str] = set()
    for m in storage.manifests:
        obj = json.loads(json.dumps(m))
        meta = obj.setdefault("metadata", {})
        ns = meta.get("namespace") or "default"
        if obj.get("kind") == "PersistentVolumeClaim":
            written.add(f"{ns}/{meta.get('name')}")
            for ref in meta.get("ownerReferences") or ():
                if isinstance(ref, dict) and ref.get("kind") == "Pod":
                    ref["uid"] = f"{ns}/{ref.get('name')}"
        out.append(obj)
    for key, c in storage.pvcs.items():
        if key in written:
            continue
        meta = {"name": c.name, "namespace": c.namespace}
        if c.owner_pod is not None:
            meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": c.owner_pod,
                                        "uid": f"{c.namespace}/{c.owner_pod}", "controller": True}]
        out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                    "spec": _claim_spec(c.spec)})
    return out


def _config(case: Case) -> str:
    """The profile as a KubeSchedulerConfiguration (v1) text: the file the case names, as
    written, or one made from the case's own profile."""
    prof = case.profile
    if prof.config_file:
        from kspread.format.config import read_config_text

        return read_config_text(prof.config_file)
    pct = 100 if prof.percentage_of_nodes_to_score is None else prof.percentage_of_nodes_to_score
    p: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if not prof.is_default:
        # every plugin at multiPoint (upstream then enables it at each extension point it
        # implements), and at each point the plugins the case does not list there disabled;
        # filter and score enabled again in the case's order, with the score weights
        filters = [r.name for r in prof.filter]
        scores = [r.name for r in prof.score]
        post = [r.name for r in prof.post_filter]
        weight = {r.name: r.weight for r in prof.score}
        every = list(dict.fromkeys([*filters, *scores, *post, "PrioritySort", "DefaultBinder", "SchedulingGates"]))

        def others(keep: list[str]) -> list[dict[str, str]]:
            return [{"name": n} for n in every if n not in keep]

        p["plugins"] = {
            "multiPoint": {"enabled": [{"name": n, **({"weight": weight[n]} if n in weight else {})} for n in every],
                           "disabled": [{"name": "*"}]},
            "preFilter": {"disabled": others(filters)},
            "filter": {"enabled": [{"name": n} for n in filters], "disabled": others(filters)},
            "postFilter": {"disabled": others(post)},
            "preScore": {"disabled": others(scores)},
            "score": {"enabled": [{"name": r.name, "weight": r.weight} for r in prof.score], "disabled": others(scores)},
        }
        if prof.plugin_config:
            p["pluginConfig"] = [{"name": n, "args": dict(a)} for n, a in prof.plugin_config.items()]
    return json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "percentageOfNodesToScore": pct, "profiles": [p]})


def _extender(e) -> dict[str, Any]:
    """An HTTP extender (``kspread.engine.extender.HTTPConfig``) as a v1 KubeSchedulerConfiguration
    writes it; TLS files by their path, as the case's directory resolves them."""
    h = e.http
    out: dict[str, Any] = {"urlPrefix": h.url_prefix, "weight": e.weight, "enableHTTPS": h.enable_https,
                           "httpTimeout": f"{round(h.http_timeout * 1e9)}ns",
                           "nodeCacheCapable": h.node_cache_capable, "ignorable": h.ignorable,
                           "managedResources": [{"name": n, "ignoredByScheduler": n in h.ignored_by_scheduler}
                                                for n in h.managed_resources]}
    for key, verb in (("filterVerb", h.filter_verb), ("prioritizeVerb", h.prioritize_verb),
                      ("preemptVerb", h.preempt_verb), ("bindVerb", h.bind_verb)):
        if verb:
            out[key] = verb
    if h.tls is not None:
        t = h.tls
        # the files were read when the case loaded (inside the trees being tested): their
        # contents go as data, so the backend opens no file a case names
        out["tlsConfig"] = {"insecure": t.insecure, "serverName": t.server_name, "certFile": "",
                            "keyFile": "", "caFile": "",
                            **{k: base64.b64encode(v).decode() for k, v in
                               (("certData", t.cert_data), ("keyData", t.key_data), ("caData", t.ca_data)) if v}}
    return out


def case_timeout(case: Case) -> float:
    """The case's time limit in seconds: it grows with nodes times pods."""
    pods = len(case.cluster.pods) + len(case.incoming)
    return _CASE_TIMEOUT_S + round(len(case.cluster.nodes) * pods * _SECONDS_PER_NODE_POD)


def backend_input(case: Case, observe: str = "last") -> dict[str, Any]:
    """What the backend reads: the case as kspread built it. ``observe``: "last" asks for the
    per-node data of the last cycle, "none" for the placements only."""
    cl = case.cluster
    sched_name = case.profile.scheduler_name or "default-scheduler"
    pdbs = []
    for d in cl.pdbs:
        pdbs.append({"metadata": {"name": d.name, "namespace": d.namespace},
                     "spec": {"selector": api.label_selector(d.selector), "minAvailable": 0},
                     "status": {"disruptionsAllowed": d.disruptions_allowed,
                                "disruptedPods": {k: _time(_EPOCH) for k in sorted(d.disrupted_pods)}}})
    # the listed Namespaces, and those only pods use with the labels the API server gives them
    # (the backend's fake API server does not canonicalize: NamespaceDefaultLabelName)
    used = [*cl.namespaces, *(p.namespace for p in (*cl.pods, *case.incoming)),
            *(t.template.namespace for t in getattr(case, "timeline", None) or () if isinstance(t, MaxEntry))]
    namespaces = [{"metadata": {"name": name, "labels": dict(cl.namespace_labels(name))}}
                  for name in dict.fromkeys(used)]
    merge = match_label_keys_enabled(case.version)
    minor = case.version.minor
    return {
        "nodes": [_node(n) for n in cl.nodes],
        "pods": [_pod(p, i, sched_name, merge, minor) for i, p in enumerate(cl.pods)],
        "incoming": [_pod(p, len(cl.pods) + i, sched_name, merge, minor) for i, p in enumerate(case.incoming)],
        "pdbs": pdbs,
        "priorityClasses": [{"metadata": {"name": c.name}, "value": c.value, "globalDefault": c.global_default,
                             "preemptionPolicy": c.preemption_policy} for c in cl.priority_classes],
        "namespaces": namespaces,
        "services": [{"metadata": {"name": s.name, "namespace": s.namespace},
                      "spec": {"selector": dict(s.selector) if s.selector is not None else None}}
                     for s in cl.services],
        # the controllers DefaultSelector looks up by a pod's controller reference (default spreading)
        "replicationControllers": [{"metadata": {"name": c.name, "namespace": c.namespace},
                                    "spec": {"selector": dict(c.selector) if c.selector is not None else None}}
                                   for c in cl.replication_controllers],
        "replicaSets": [{"metadata": {"name": c.name, "namespace": c.namespace},
                         "spec": {"selector": api.label_selector(c.selector)}} for c in cl.replica_sets],
        "statefulSets": [{"metadata": {"name": c.name, "namespace": c.namespace},
                          "spec": {"selector": api.label_selector(c.selector)}} for c in cl.stateful_sets],
        # PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities and
        # VolumeAttachments, by kind
        "storage": _storage(cl.storage),
        # DeviceClasses, ResourceSlices, the claims the case wrote and the templates, in resource.k8s.io/v1
        "devices": device_objects(cl.devices, (*cl.pods, *case.incoming)),
        # Workloads (scheduling.k8s.io/v1alpha1, gangs); a pod's workloadRef is in its spec
        "workloads": [_workload(w) for w in cl.workloads.values()],
        # PodGroups (scheduling.k8s.io/v1alpha2, 1.36); a pod's schedulingGroup is in its spec. A
        # case's v1alpha2 Workloads are not sent: kspread checks them and keeps nothing, and the
        # 1.36 scheduler reads none (no Workload informer in pkg/scheduler)
        **({"podGroups": [_pod_group(g) for g in cl.pod_groups.values()]} if cl.pod_groups else {}),
        "config": _config(case),
        # every HTTP extender of the profile (the configuration's and the case's), their urlPrefix
        # as kspread calls it: the backend's scheduler is given these, not the configuration's own
        "extenders": [_extender(e) for e in case.profile.extenders if e.http is not None],
        "featureGates": dict(case.version.gates),
        "maxCycles": 0 if case.is_sequence else 1,
        "observe": observe,
        "timeoutMillis": max(round(case_timeout(case) * 1000), 1),
        **_steps(case),
    }


def _steps(case: Case) -> dict[str, Any]:
    """A sequence's steps (each after the first ``at`` incoming pods) and its budgets' specs, for a
    backend with the protocol `steps`; nothing for a case without steps (the input of a backend
    without that protocol, which is not sent such a case: ``Backend.applicable``)."""
    timeline = getattr(case, "timeline", None)
    if not timeline:
        return {}
    steps: list[dict[str, Any]] = []
    at = 0
    for t in timeline:
        if isinstance(t, Pod):
            at += 1
            continue
        if isinstance(t, MaxEntry):
            # its pod as the replicas' template (a backend with the protocol `max`: applicable)
            steps.append({"at": at, "kind": "max", "template": _pod(
                t.template, len(case.cluster.pods) + len(case.incoming), case.profile.scheduler_name or
                "default-scheduler", match_label_keys_enabled(case.version), case.version.minor)})
            continue
        one: dict[str, Any] = {"at": at, "kind": t.kind}
        a = t.arg
        if t.kind in ("drain", "cordon", "uncordon", "deleteNode"):
            one["node"] = a
        elif t.kind == "zoneDown":
            one["zone"] = a
        elif t.kind == "deletePod":
            one["pod"] = a
        elif t.kind == "wait":
            one["seconds"] = int(a)
        elif t.kind == "addNode":
            one["newNode"] = _node(a)
        elif t.kind == "taint":
            node, taint = a
            one.update(node=node, taint={"key": taint.key, "value": taint.value, "effect": taint.effect})
        elif t.kind == "untaint":
            one.update(node=a["node"], key=a["key"], effect=a.get("effect") or "")
        elif t.kind == "label":
            one.update(node=a["node"], labels=dict(a["labels"]))
        elif t.kind == "ungate":
            one.update(pod=a["pod"], gate=a["gate"])
        elif t.kind == "addDeviceTaintRule":
            one["rule"] = device_taint_rule(a)
        elif t.kind == "deleteDeviceTaintRule":
            one["name"] = a
        elif t.kind == "setDeviceConditions":
            one.update(claim=f"{a['namespace']}/{a['claim']}", device=a["device"],
                       conditions=[{"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
                                   for c in a["conditions"]])
        else:  # pragma: no cover (applicable refuses the others)
            raise AssertionError(t.kind)
        steps.append(one)
    budgets = []
    for d in case.cluster.pdbs:
        b: dict[str, Any] = {"namespace": d.namespace, "name": d.name}
        if d.budget is not None:
            b[d.budget[0]] = d.budget[1]
        else:
            # a status alone: the desired healthy count it implies at the start (the steps' rule)
            healthy = sum(1 for p in case.cluster.pods if p.node_name and not p.terminating and pdb_matches(d, p))
            b["desired"] = healthy - d.disruptions_allowed
        budgets.append(b)
    return {"steps": steps, "budgets": budgets}


# ---- running it ------------------------------------------------------------------------------

class _Server:
    """A backend serving a run's cases in one process (``BACKEND --serve``), in a session of its
    own; ended when it fails, takes too long or answers too much, and when kspread exits."""

    _all: ClassVar[dict[str, _Server]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: str) -> None:
        env = {k: v for k, v in os.environ.items() if k in _ENV_KEPT or k.startswith("LC_")}
        try:
            self.p = subprocess.Popen([path, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, start_new_session=True, env=env)
        except OSError as e:
            raise BackendError(f"backend {path}: {e.strerror or e}") from None
        self.path = path
        self.err = bytearray()

    @classmethod
    def of(cls, path: str) -> _Server:
        with cls._lock:
            s = cls._all.get(path)
            if s is None or s.p.poll() is not None:
                s = cls._all[path] = cls(path)
            return s

    def end(self) -> int:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.p.pid, signal.SIGKILL)
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            if f is not None and not f.closed:
                f.close()
        with self._lock:
            if self._all.get(self.path) is self:
                del self._all[self.path]
        return self.p.wait()

    @classmethod
    def end_all(cls) -> None:
        for s in list(cls._all.values()):
            s.end()

    def ask(self, data: bytes, timeout: float, cap: int, what: str) -> _Ran:
        """One case: its line written, its answer's line read (at most ``cap`` bytes, within
        ``timeout`` seconds). A process that ends instead of answering is ended: its exit code,
        what it printed and its stderr's tail come back, as ``_run`` returns them."""
        assert self.p.stdin is not None and self.p.stdout is not None and self.p.stderr is not None
        deadline = time.monotonic() + timeout
        out = bytearray()
        self.err.clear()
        view, pos = memoryview(data + b"\n"), 0
        problem = ""
        with selectors.DefaultSelector() as sel:
            os.set_blocking(self.p.stdin.fileno(), False)
            sel.register(self.p.stdin, selectors.EVENT_WRITE)
            sel.register(self.p.stdout, selectors.EVENT_READ)
            sel.register(self.p.stderr, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    problem = "timeout"
                    break
                for key, _ in sel.select(min(left, 0.5)):
                    f = key.fileobj
                    if f is self.p.stdin:
                        try:
                            pos += os.write(self.p.stdin.fileno(), view[pos:pos + (1 << 16)])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:
                            pos = len(view)
                        if pos >= len(view):
                            sel.unregister(self.p.stdin)
                        continue
                    chunk = os.read(f.fileno(), 1 << 16)  # type: ignore[union-attr]
                    if f is self.p.stderr:
                        self.err += chunk
                        if len(self.err) > 2 * _STDERR_KEPT:
                            del self.err[:-_STDERR_KEPT]
                        if not chunk:
                            sel.unregister(f)
                        continue
                    if not chunk:
                        problem = "ended"
                        break
                    out += chunk
                    if b"\n" in chunk:
                        line, _, rest = bytes(out).partition(b"\n")
                        if rest.strip():
                            problem = "more"
                            break
                        return _Ran(0, line, bytes(self.err))
                    if len(out) > cap:
                        problem = "cap"
                        break
                else:
                    continue
                break
        if problem == "ended":
            # what it said before it ended (a panic's message), while its stderr stays open
            until = min(deadline, time.monotonic() + 5)
            while time.monotonic() < until and select.select([self.p.stderr], [], [], until - time.monotonic())[0]:
                chunk = os.read(self.p.stderr.fileno(), 1 << 16)
                if not chunk:
                    break
                self.err += chunk
                if len(self.err) > 2 * _STDERR_KEPT:
                    del self.err[:-_STDERR_KEPT]
        code = self.end()
        if problem == "timeout":
            raise BackendError(f"backend {self.path}: {what} took more than {timeout:g} s (its processes were ended)")
        if problem == "cap":
            raise BackendError(f"backend {self.path}: {what}: the answer is larger than {cap >> 20 or cap} "
                               f"{'MiB' if cap >> 20 else 'bytes'}, kspread's bound (its processes were ended)")
        if problem == "more":
            raise BackendError(f"backend {self.path}: {what}: it printed more than one line for one case "
                               "(its processes were ended)")
        return _Ran(code, bytes(out), bytes(self.err))


atexit.register(_Server.end_all)


def call_backend(backend: Backend, case: Case, observe: str = "last") -> dict[str, Any]:
    """The backend's raw answer for the case (``NotApplicable`` when it cannot run there).
    ``observe``: "last" asks for the last cycle's per-node data, "none" for the placements."""
    reason = backend.applicable(case)
    if reason is not None:
        raise NotApplicable(reason)
    data = json.dumps(backend_input(case, observe)).encode()
    what = f"case {case.name!r}"
    if "serve" in backend.protocols:
        ran = _Server.of(backend.path).ask(data, case_timeout(case) + _SERVE_GRACE_S, MAX_OUTPUT_BYTES, what)
    else:
        ran = _run(backend.path, [], data, case_timeout(case), MAX_OUTPUT_BYTES, what)
    if not ran.out.strip():
        raise BackendError(f"backend {backend.path} failed on {what} (exit {ran.code}): {_failure(ran)}")
    try:
        out = json.loads(ran.out.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise BackendError(f"backend {backend.path}: {what}: the answer is not UTF-8 (byte {ran.out[e.start]:#04x} "
                           f"at offset {e.start})") from None
    except (ValueError, RecursionError) as e:
        why = "nested too deeply" if isinstance(e, RecursionError) else str(e)
        raise BackendError(f"backend {backend.path}: {what}: the answer is not JSON ({why}; exit {ran.code}): "
                           f"{_failure(ran)}") from None
    # (the nodes of the case, and those its addNode steps add)
    added = {t.arg.name for t in getattr(case, "timeline", None) or () if isinstance(t, Step) and t.kind == "addNode"}
    problem = _problem(out, _ANSWER, "") or _unknown_nodes(out, {n.name for n in case.cluster.nodes} | added)
    if problem is not None:
        raise BackendError(f"backend {backend.path}: {what}: the answer is not a backend's: {problem}")
    if out.get("error"):
        # a plugin's factory refusing its args: the error is about the case's pluginConfig of it
        m = re.search(r'initializing plugin "([^"]+)"', out["error"])
        path = ("profile", "pluginConfig", m.group(1)) if m and m.group(1) in case.profile.plugin_config else ()
        raise BackendError(f"backend {backend.path} could not run {what}: {_text(out['error'], 4000)}", path)
    if ran.code != 0:
        raise BackendError(f"backend {backend.path} failed on {what} (exit {ran.code}): {_failure(ran)}")
    return out


def backend_actual(case: Case, out: Mapping[str, Any]) -> dict[str, Any]:
    """The backend's answer in the shape of ``Outcome.actual`` (the last cycle's results, and
    the placements of a sequence)."""
    actual: dict[str, Any] = {}
    cycles = out.get("cycles") or []
    if cycles:
        c = cycles[-1]
        actual["feasible"] = list(c["feasible"])
        actual["filter"] = {n: {k: v for k, v in st.items() if k != "plugin"} for n, st in c["filter"].items()}
        actual["rawScores"] = c["rawScores"]
        actual["scores"] = c["scores"]
        actual["totals"] = c["totals"]
        sel: Any = c.get("selected")
        if sel is None and len(c["feasible"]) == 1:
            sel = c["feasible"][0]
        totals = c["totals"]
        if not c.get("scored", True) and len(c["feasible"]) > 1 and case.version.minor <= 29:
            # no score plugin and no extender: up to 1.29 every feasible node is found and
            # prioritizeNodes gives each a total of 1 (from 1.30 the search stops at the first
            # feasible node and nothing is scored); the backend does not call it then
            actual["totals"] = totals = {n: 1 for n in c["feasible"]}
        if not c.get("scored", True) and len(c["feasible"]) > 1 and sel in c["feasible"]:
            sel = list(c["feasible"])  # no score plugin: every feasible node scores 1, a tie
        elif totals:
            # upstream picks one of the nodes with the highest total at random: kspread reports
            # them all, and so does the backend (upstream's pick is one of them)
            best = max(totals.values())
            tied = [n for n, t in totals.items() if t == best]
            if len(tied) > 1 and sel in tied:
                sel = tied
        actual["selected"] = sel if c["feasible"] and not c.get("error") else None
        nominated = c.get("nominated")
        actual["unschedulable"] = (not c["feasible"] and nominated is None) or bool(c.get("error"))
        if c.get("postFilterRan"):
            actual["preemption"] = None if nominated is None else {"node": nominated,
                                                                   "victims": sorted(c.get("victims") or [])}
            if c.get("candidates") is not None:  # null: DefaultPreemption is not the PostFilter plugin
                actual["candidates"] = {n: sorted(v) for n, v in c["candidates"].items()}
        if c.get("error"):
            # the cycle ended with a plugin's error (upstream's words; not compared: kspread's
            # wording is its own)
            actual["schedulingError"] = c["error"]
    _in_node_order(actual, {n.name: n.index for n in case.cluster.nodes})
    if case.is_sequence:
        placements = dict(out.get("placements") or {})
        if out.get("deleted") is not None:
            # the pods upstream deleted: preemption's victims (a pod waiting at Permit that
            # preemption picks is rejected, not deleted); the case's own bound pods that the
            # expectation names are placed as kspread places them: on their node, unless deleted
            gone = set(out["deleted"])
            actual["evicted"] = sorted(gone)
            for p in case.cluster.pods:
                if p.key in (case.expect.get("placements") or {}) and p.key not in placements:
                    placements[p.key] = None if p.key in gone else p.node_name
        actual["placements"] = placements
        if out.get("capacity") is not None:
            # each `replicas: max` entry's replicas placed (maxentry.go)
            actual["capacity"] = dict(out["capacity"])
        if "spread" in case.expect and _schedule_spread(case):
            # where the schedule's pods ended, by their node's topology domain at the end
            # (runner.spread_actual): the case's nodes as its steps left them
            labels = _final_node_labels(case)
            where = [n for p in case.incoming if isinstance(n := placements.get(p.key), str)]
            counted = [domain_counts(one, where, labels) for one, _ in spread_specs(case.expect["spread"])]
            actual["spread"] = counted if isinstance(case.expect["spread"], list) else counted[0]
    if out.get("allocations") is not None:
        # every claim at the end: its devices (driver/pool/device), None unallocated
        actual["allocations"] = {k: (None if v is None else list(v)) for k, v in out["allocations"].items()}
        # a pod's extended-resource claim: upstream makes it only in PreBind (1.35+, bindClaim),
        # so a pod that did not bind, or that a device plugin served, has none; the engine's
        # null for it means "not made" too (DeviceState.allocations)
        if case.cluster.devices is not None:
            for key in case.cluster.devices.extended_claims:
                actual["allocations"].setdefault(key, None)
    return actual


def _final_node_labels(case: Case) -> dict[str, Mapping[str, str]]:
    """Each node's labels once the sequence's steps ran: a node an addNode step adds has its
    own, a label step sets or (null) removes some (the engine's World.label)."""
    labels: dict[str, Mapping[str, str]] = {n.name: n.labels for n in case.cluster.nodes}
    for t in getattr(case, "timeline", None) or ():
        if not isinstance(t, Step):
            continue
        if t.kind == "addNode":
            labels[t.arg.name] = t.arg.labels
        elif t.kind == "label":
            now = dict(labels.get(t.arg["node"]) or {})
            for k, v in t.arg["labels"].items():
                if v is None:
                    now.pop(k, None)
                else:
                    now[k] = v
            labels[t.arg["node"]] = now
    return labels


def _schedule_spread(case: Case) -> bool:
    """A sequence's ``expect.spread`` counts its schedule's pods alone (no selector): the backend's
    placements give them (a selector counts every matching pod of the cluster at the end, which
    the backend does not report)."""
    return case.is_sequence and all("selector" not in one for one, _ in spread_specs(case.expect.get("spread")))


# The expectations a backend reports; a case expecting another is skipped, with the reason
# NOT_REPORTED gives where there is one.
REPORTED = ("feasible", "filter", "rawScores", "scores", "totals", "selected", "unschedulable", "preemption",
            "candidates", "placements", "allocations", "evicted", "capacity")
NOT_REPORTED = {
    "spread": "with a selector, it counts every matching pod of the cluster at the end; the backend reports "
              "the placements of the schedule's pods alone",
    # upstream hands the nodes its search found only to the PreScore and Score plugins, and
    # only when there is more than one; the backend asks every node
    "searched": "the nodes upstream's search found reach no extension point",
}


def observation(case: Case, everything: bool = False) -> str:
    """What the backend is asked to observe: the last cycle's per-node data ("last"), unless the
    case is a sequence expecting its placements (allocations, capacity) alone ("none") and
    ``everything`` (``--compare``) is not asked."""
    if case.is_sequence and not everything and set(case.expect) <= {"placements", "allocations", "capacity"}:
        return "none"
    return "last"


def run_backend(case: Case, backend: Backend, everything: bool = False) -> Outcome:
    """The case through the backend, compared with its expectation as the runner compares the
    reference engine's results (``everything``: the per-node data too, as ``--compare`` shows it,
    whatever the case expects). ``NotApplicable`` when the case expects what the backend did not
    report: ``candidates`` where preemption ran and the backend reported none (its profile's
    PostFilter plugins do not include DefaultPreemption, the backend predates them, or it is of
    1.31 or earlier)."""
    actual = backend_actual(case, call_backend(backend, case, observation(case, everything)))
    if "candidates" in case.expect and "preemption" in actual and "candidates" not in actual:
        why = ("a backend of 1.31 or earlier: DefaultPreemption makes its evaluator inside each PostFilter call, "
               "where the dry run cannot be watched" if backend.minor <= 31 else
               "its profile's PostFilter plugins do not include DefaultPreemption, or the backend predates them")
        raise NotApplicable(f"the case expects candidates, which the backend did not report ({why})")
    if "evicted" in case.expect and "evicted" not in actual:
        raise NotApplicable("the case expects evicted, which the backend did not report (its answer has no `deleted`)")
    if "capacity" in case.expect and "capacity" not in actual:
        raise NotApplicable("the case expects capacity, which the backend did not report (its answer has no "
                            "`capacity`)")
    return Outcome(actual, compare(dict(case.expect), actual))


def differences(engine: Mapping[str, Any], upstream: Mapping[str, Any]) -> list[str]:
    """``--compare``: every key (and node, plugin) where the reference engine and the backend
    differ, one line each."""
    lines: list[str] = []
    for key in ("feasible", "filter", "rawScores", "scores", "totals", "selected", "unschedulable",
                "preemption", "candidates", "placements", "allocations", "evicted"):
        a, b = engine.get(key), upstream.get(key)
        if key == "evicted" and "evicted" not in upstream:
            continue  # not reported (a single cycle)
        if key == "candidates" and "candidates" not in upstream:
            continue  # not reported by this backend (see run_backend)
        if key == "allocations" and isinstance(a, dict) and isinstance(b, dict):
            a, b = ({c: None if d is None else sorted(d) for c, d in x.items()} for x in (a, b))
        if key in ("filter", "totals", "candidates", "placements", "allocations") and isinstance(a, dict) \
                and isinstance(b, dict):
            for n in dict.fromkeys([*a, *b]):
                if a.get(n) != b.get(n) or (key == "allocations" and (n in a) != (n in b)):
                    # a claim's null is "not allocated": shown as null, a missing one as (none)
                    sa, sb = ("null" if key == "allocations" and n in x and x[n] is None else _short(x.get(n))
                              for x in (a, b))
                    lines.append(f"{key}.{n}: kspread {sa}, upstream {sb}")
        elif key in ("rawScores", "scores") and isinstance(a, dict) and isinstance(b, dict):
            for pl in dict.fromkeys([*a, *b]):
                pa, pb = a.get(pl) or {}, b.get(pl) or {}
                for n in dict.fromkeys([*pa, *pb]):
                    if pa.get(n) != pb.get(n):
                        lines.append(f"{key}.{pl}.{n}: kspread {_short(pa.get(n))}, upstream {_short(pb.get(n))}")
        elif a != b and not (a is None and b is None):
            if key == "selected" and ((isinstance(a, list) and b in a) or (isinstance(b, list) and a in b)):
                continue  # a tie reported whole on one side, one of the tied nodes on the other
            if key == "preemption" and (_one_of_tied(a, b, engine.get("candidates"))
                                        or _one_of_tied(b, a, upstream.get("candidates"))):
                continue  # the same, for the node preemption nominated (pick-node's complete tie)
            lines.append(f"{key}: kspread {_short(a)}, upstream {_short(b)}")
    return lines


def _one_of_tied(a: Any, b: Any, a_candidates: Any) -> bool:
    """``a`` names a tie of nodes holding ``b``'s node, with ``b``'s victims: those ``a``'s
    candidates give that node, else ``a``'s own (the first tied node's)."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return False
    node, tie = b.get("node"), a.get("node")
    if not isinstance(tie, list) or node not in tie or isinstance(node, list):
        return False
    if {k: v for k, v in a.items() if k not in ("node", "victims")} \
            != {k: v for k, v in b.items() if k not in ("node", "victims")}:
        return False
    if isinstance(a_candidates, dict) and node in a_candidates:
        return a_candidates[node] == b.get("victims")
    return b.get("victims") == a.get("victims")


SHOWN_ITEMS = 8  # of a list in a difference's line (a tie of thousands of nodes stays one line)
SHOWN_DIFFERENCES = 20  # lines printed per case; the rest are counted


def _short(v: Any) -> str:
    if v is None:
        return "(none)"
    if isinstance(v, list) and len(v) > SHOWN_ITEMS:
        head = ", ".join(json.dumps(x) for x in v[:SHOWN_ITEMS - 1])
        return f"[{head}, ..., {json.dumps(v[-1])}] ({len(v)} items)"
    return json.dumps(v, sort_keys=False)


class BackendRun:
    """Backends as ``kspread run --backend PATH [--backend PATH ...] [--compare]`` uses them:
    checks each case through the backend of the case's minor version (one backend per minor)
    and, with ``compare``, runs the reference engine too and reports where the two differ."""

    def __init__(self, backend: Backend | Sequence[Backend], compare: bool, say: Callable[[str], None]) -> None:
        self.backends = [backend] if isinstance(backend, Backend) else list(backend)
        self.backend = self.backends[0]  # the one a single-backend run uses
        self.compare = compare
        self.say = say
        self.agree = self.differ = 0
        # per backend (its kubernetesVersion): [agree, differ]
        self.figures: dict[str, list[int]] = {b.kubernetes_version: [0, 0] for b in self.backends}

    @classmethod
    def start(cls, path: str | Sequence[str], compare: bool, say: Callable[[str], None]) -> BackendRun:
        paths = [path] if isinstance(path, str) else list(path)
        backends: list[Backend] = []
        try:
            for p in paths:
                b = open_backend(p)
                same = [o for o in backends if o.minor == b.minor]
                if same:
                    raise BackendError(f"backends {same[0].path} (Kubernetes {same[0].kubernetes_version}) and {p} "
                                       f"(Kubernetes {b.kubernetes_version}) are of the same minor version: give "
                                       "one backend per minor (a case runs through the backend of its version)")
                backends.append(b)
        except BackendError as e:
            raise SystemExit(f"kspread run: {e}") from None
        return cls(backends, compare, say)

    def backend_for(self, case: Case) -> Backend:
        """The backend of the case's minor version; with one backend, that one (whose
        ``applicable`` names the version it was built from); else ``NotApplicable``."""
        for b in self.backends:
            if b.minor == case.version.minor:
                return b
        if len(self.backends) == 1:
            return self.backend
        given = ", ".join(f"{b.path} (Kubernetes {b.kubernetes_version})" for b in self.backends)
        raise NotApplicable(f"the case is at version {case.version}, and no backend given was built from Kubernetes "
                            f"{case.version}: {given}")

    def check(self, doc, config: str | None = None) -> Any:
        """The case's ``Verdict`` through the backend (``config``: a KubeSchedulerConfiguration
        for cases that give no profile, as for ``check``); None when it does not apply there
        (said, with the reason)."""
        from kspread.format.loader import expected_error
        from kspread.workflow.runner import Verdict, check, run_loaded

        if expected_error(doc) is not None:
            # kspread's own validation of what the case writes: nothing a backend runs
            self.say(f"SKIP {doc.name} ({doc.file}:{doc.line}): the case expects an error (expect.error), "
                     "which a backend does not check")
            return None
        diffs: list[list[str]] = []
        used: list[Backend] = []

        def run(case: Case) -> Outcome:
            backend = self.backend_for(case)
            used.append(backend)
            upstream = run_backend(case, backend, everything=self.compare)
            if self.compare:
                diffs.append(differences(run_loaded(case).actual, upstream.actual))
            return upstream

        try:
            v = check(doc, config, run=run)
        except NotApplicable as e:
            self.say(f"SKIP {doc.name} ({doc.file}:{doc.line}): {e}")
            return None
        except BackendError as e:
            if e.path:
                where = doc.user_path(e.path)
                return Verdict(False, f"{doc.file}:{doc.locate(e.path) or doc.line}: {format_path(where)}: {e}",
                               error=str(e))
            return Verdict(False, f"{doc.file}:{doc.line}: {e}", error=str(e))
        if diffs:
            figure = self.figures[used[0].kubernetes_version]
            if diffs[0]:
                self.differ += 1
                figure[1] += 1
                self.say(f"DIFFER {doc.name} ({doc.file}:{doc.line}): kspread's reference engine and "
                         f"Kubernetes {used[0].kubernetes_version}:")
                for line in diffs[0][:SHOWN_DIFFERENCES]:
                    self.say("  " + line)
                if len(diffs[0]) > SHOWN_DIFFERENCES:
                    self.say(f"  ... and {len(diffs[0]) - SHOWN_DIFFERENCES} more differences "
                             f"({len(diffs[0])} in all)")
            else:
                self.agree += 1
                figure[0] += 1
        return v

    def summary(self) -> str:
        if len(self.backends) == 1:
            text = f" (backend: Kubernetes {self.backend.kubernetes_version}"
            if self.compare:
                text += f"; the reference engine agrees with it on {self.agree} of {self.agree + self.differ} cases"
            return text + ")"
        text = f" (backends: Kubernetes {', '.join(b.kubernetes_version for b in self.backends)}"
        if self.compare:
            per = ", ".join(f"{v} {a} of {a + d}" for v, (a, d) in self.figures.items())
            text += (f"; the reference engine agrees with them on {self.agree} of {self.agree + self.differ} cases: "
                     f"{per}")
        return text + ")"
