"""HTTP extenders as a case's ``profile.extenders`` or a KubeSchedulerConfiguration's
``extenders`` write them: upstream's Extender fields (urlPrefix, filterVerb,
prioritizeVerb, preemptVerb, bindVerb, weight, enableHTTPS, tlsConfig, httpTimeout,
nodeCacheCapable, managedResources, ignorable), decoded strictly and validated as
upstream's ValidateExtenders validates them (a positive weight for a prioritizer, at
most one binder, managed resources that are extended resource names, each once).

``urlPrefix`` may name environment variables, ``${NAME}`` or ``${NAME:-default}``, but a
case is untrusted input (a pull request's): a variable is read only when the person
running kspread allows it outside the case (``ExtenderAccess``: ``--extender-env NAME``);
another takes its default, or is an error at the urlPrefix line. An extender is called
only on a loopback host, a host allowed outside the case (``--allow-extender-host``) or
one the person named (the URL of an allowed variable, ``--extender NAME=URL``). Only http
and https URLs are called, and only the one written (after expansion); errors show the
urlPrefix as written, never its expansion.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from kspread.engine.extender import DEFAULT_EXTENDER_TIMEOUT, HTTPConfig, TLSConfig, is_loopback, tls_data
from kspread.engine.framework.args import go_duration_ns
from kspread.engine.framework.profile import Extender, Profile
from kspread.errors import CaseError, PathT
from kspread.format.apivalidation import is_extended
from kspread.format.files import file_in_trees, open_regular

HTTP_FIELDS = ("urlPrefix", "filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb", "weight", "enableHTTPS",
               "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable")
_TLS_FIELDS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

Err = Callable[[str, PathT, Any], CaseError]

# how a person allows more, for the errors
HOW_ENV = "--extender-env {name} (pytest: --kspread-extender-env {name} or the ini key kspread_extender_env)"
HOW_HOST = ("--allow-extender-host {host} (pytest: --kspread-allow-extender-host {host} or the ini key "
            "kspread_allow_extender_hosts)")


DEFAULT_MAX_TIMEOUT = 60.0  # seconds: twelve times kube-scheduler's default extender timeout (5s)


@dataclass(frozen=True)
class ExtenderAccess:
    """What the person running kspread allows a case's HTTP extenders, given outside the
    case (command line, pytest option or ini key), never by the case: ``urls``, extender
    name -> the URL to call instead of its urlPrefix (``--extender NAME=URL``); ``env``,
    the environment variables a urlPrefix may read (``--extender-env NAME``); ``hosts``,
    ``HOST`` or ``HOST:PORT`` an extender may be called on besides loopback
    (``--allow-extender-host``). ``environ``: the environment (default os.environ)."""

    urls: Mapping[str, str] = field(default_factory=dict)
    env: frozenset[str] = frozenset()
    hosts: tuple[str, ...] = ()
    environ: Mapping[str, str] | None = None
    # the longest httpTimeout a case may set, in seconds (--extender-max-timeout): a call to a
    # loopback port that accepts and never answers holds the run that long
    max_timeout: float = DEFAULT_MAX_TIMEOUT

    def value(self, name: str) -> str | None:
        """The allowed variable's value; None when it is not allowed, unset or empty."""
        if name not in self.env:
            return None
        return (os.environ if self.environ is None else self.environ).get(name) or None

    def named_hosts(self) -> list[tuple[str, int | None]]:
        """The hosts the person allowed or named: ``hosts``, and the host and port of each
        URL given (``urls``, the allowed variables that hold a URL)."""
        out = []
        for h in self.hosts:
            try:
                out.append(parse_host(h))
            except ValueError:
                continue  # refused where it is given (the options check it)
        for u in (*self.urls.values(), *(v for n in sorted(self.env) if (v := self.value(n)) is not None)):
            try:
                host, port = authority(u)
            except ValueError:
                continue
            out.append((host, port))
        return out


def parse_host(text: str) -> tuple[str, int | None]:
    """``HOST`` or ``HOST:PORT`` (``[::1]:8080`` for IPv6) of --allow-extender-host; a
    ValueError saying what is wrong."""
    t = text.strip()
    if not t or "/" in t or "@" in t or not t.isprintable() or " " in t:
        raise ValueError(f"expected HOST or HOST:PORT, got {text!r}")
    try:
        parts = urlsplit("http://" + t)
        host, port = parts.hostname, parts.port
    except ValueError as e:
        raise ValueError(f"expected HOST or HOST:PORT, got {text!r} ({e})") from None
    if not host:
        raise ValueError(f"expected HOST or HOST:PORT, got {text!r}")
    return host.lower(), port


def authority(url: str) -> tuple[str, int]:
    """The host (lower case) and port an http(s) URL is called at; a ValueError for a URL
    without a host, with a bad port, or with user information (user@host: kspread sends
    no credentials, and what a parser takes for the host there is not what every client
    does)."""
    parts = urlsplit(url)
    if "@" in parts.netloc:
        raise ValueError("a URL with user information (user@host) is refused: kspread sends no credentials")
    port = parts.port  # ValueError: not a number, out of range
    host = parts.hostname
    if not host:
        raise ValueError("the URL names no host")
    return host.lower(), port if port is not None else (443 if parts.scheme.lower() == "https" else 80)


def expand_url(raw: str, path: PathT, err: Err | None = None, access: ExtenderAccess | None = None
               ) -> tuple[str, list[str]]:
    """``${NAME}`` and ``${NAME:-default}`` replaced: by the variable's value when
    ``access`` allows NAME (and it is set and not empty), else by the default; and the
    names whose default was taken. A variable that is not allowed is never read, so a case
    cannot learn which ones exist. No default: an error (naming how to allow it)."""
    err = err or _case_err
    access = access or ExtenderAccess()
    defaulted: list[str] = []

    def sub(m: re.Match) -> str:
        name, default = m.group(1), m.group(2)
        value = access.value(name)
        if value is not None:
            return value
        if default is not None:
            if name not in access.env:
                defaulted.append(name)
            return default
        if name not in access.env:
            raise err(f"urlPrefix reads the environment variable {name}, which kspread reads only when allowed "
                      f"outside the case: {HOW_ENV.format(name=name)}; or give the extender's URL with --extender "
                      "NAME=URL", path, raw)
        raise err(f"urlPrefix names the environment variable {name}, which is not set (set it, or write "
                  f"${{{name}:-http://host:port}} to give a default)", path, raw)

    return _VAR.sub(sub, raw), defaulted


def check_url(url: str, path: PathT, err: Err | None = None, shown: str | None = None) -> tuple[str, int]:
    """An http:// or https:// URL with a host (``authority``); errors show ``shown`` (the
    urlPrefix as written) rather than the URL when given."""
    err = err or _case_err
    said = url if shown is None else shown
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest:
        raise err(f"urlPrefix {said!r} is not an http:// or https:// URL", path, said)
    try:
        return authority(url)
    except ValueError as e:
        raise err(f"urlPrefix {said!r}: {e}", path, said) from None


def resolve_url(e: Extender, access: ExtenderAccess | None) -> Extender:
    """The extender with the URL it is called at: the URL given on the command line for
    its name, else its urlPrefix with the allowed variables expanded, on a host the person
    allowed. A CaseError at the urlPrefix (``file`` the configuration for a
    configuration's extender) otherwise. Errors of its calls show the urlPrefix as written
    (or the URL given), never an expansion."""
    access = access or ExtenderAccess()
    at = (*e.path, "urlPrefix")
    written = e.http.url_prefix

    def err(msg: str, path: PathT, value: Any = ...) -> CaseError:
        return CaseError(msg, path, value=value, file=e.file)

    if e.http.http_timeout > access.max_timeout:
        raise err(f"httpTimeout {_seconds(e.http.http_timeout)} is longer than the {_seconds(access.max_timeout)} "
                  "a case's extender "
                  "call may take: a person running kspread allows more with --extender-max-timeout SECONDS "
                  "(pytest --kspread-extender-max-timeout)", (*e.path, "httpTimeout"))
    if e.name in access.urls:
        url = access.urls[e.name]
        check_url(url, at, lambda m, p, v: CaseError(f"--extender {e.name}={url}: {m}", p, value=v, file=e.file))
        return replace(e, http=replace(e.http, url_prefix=url, shown=url))
    url, defaulted = expand_url(written, at, err, access)
    host, port = check_url(url, at, err, shown=written)
    if not is_loopback(host) and not any(h == host and p in (None, port) for h, p in access.named_hosts()):
        shown_host = f"[{host}]" if ":" in host else host
        raise err(f"urlPrefix calls {shown_host} (port {port}), which is not loopback: kspread calls a case's "
                  "extender on another host only when allowed outside the case: "
                  f"{HOW_HOST.format(host=f'{shown_host}:{port}')}; or give the extender's URL with --extender "
                  "NAME=URL", at, written)
    note = "".join(f"; urlPrefix's ${{{n}}} took its default: kspread reads {n} only when allowed "
                   f"(--extender-env {n}, pytest --kspread-extender-env {n})" for n in dict.fromkeys(defaulted))
    return replace(e, http=replace(e.http, url_prefix=url, shown=written, note=note))


def _seconds(t: float) -> str:
    """Seconds as a person reads them: ``60s``, ``1.5s``, ``500ms`` (never an exponent)."""
    if t < 1:
        return f"{t * 1000:.3f}".rstrip("0").rstrip(".") + "ms"
    return f"{t:.3f}".rstrip("0").rstrip(".") + "s"


def parse_duration(raw: Any, path: PathT, err: Err | None = None) -> float:
    """A Go duration string (``5s``, ``1m30s``, ``500ms``) in seconds, as metav1.Duration
    reads it (time.ParseDuration: beyond int64 nanoseconds is "invalid duration"); 0 is
    "not set"."""
    err = err or _case_err
    if isinstance(raw, bool) or not isinstance(raw, str):
        raise err("httpTimeout must be a duration string such as \"5s\" or \"500ms\"", path, raw)
    try:
        return go_duration_ns(raw) / 1e9
    except ValueError as e:
        raise err(str(e), path, raw) from None


def _case_err(msg: str, path: PathT, value: Any = ...) -> CaseError:
    return CaseError(msg, path, value=value)


def _bool(raw: Mapping[str, Any], key: str, path: PathT, err: Err) -> bool:
    v = raw.get(key, False)
    if v is None:
        return False
    if not isinstance(v, bool):
        raise err(f"{key} must be true or false", (*path, key), v)
    return v


def _str(raw: Mapping[str, Any], key: str, path: PathT, err: Err) -> str:
    v = raw.get(key, "")
    if v is None:
        return ""
    if not isinstance(v, str):
        raise err(f"{key} must be a string", (*path, key), v)
    return v


def _strict(raw: Any, allowed: Sequence[str], path: PathT, err: Err, what: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise err(f"{what} must be a mapping", path, raw)
    for k in raw:
        if k not in allowed:
            raise err(f'strict decoding error: unknown field "{k}" (known: {", ".join(allowed)})', (*path, k), ...)
    return raw


MAX_TLS_FILE = 4 << 20  # bytes of a certificate, key or CA bundle file


def _tls(raw: Any, path: PathT, base_dir: str, err: Err, roots: Sequence[str] | None) -> TLSConfig | None:
    """tlsConfig. certFile, keyFile and caFile are files a case names: relative to the file
    that names them, inside the trees being tested (symlinks followed), regular files;
    read now, where their *Data is not given (restclient's dataFromSliceOrFile)."""
    if raw is None:
        return None
    raw = _strict(raw, _TLS_FIELDS, path, err, "tlsConfig")
    data = {}
    for key in ("certData", "keyData", "caData"):
        v = _str(raw, key, path, err)
        try:
            data[key] = tls_data(v) if v else b""
        except ValueError:
            raise err(f"tlsConfig.{key} must be base64 (a []byte field)", (*path, key), ...) from None
    for key, into in (("certFile", "certData"), ("keyFile", "keyData"), ("caFile", "caData")):
        f = _str(raw, key, path, err)
        if not f or data[into]:
            continue
        at = (*path, key)
        f = file_in_trees(f, base_dir, roots, at, f"tlsConfig.{key}",
                          "a certificate or key file is named relative to the file that names it",
                          "certificate or key file", err)
        try:
            with open_regular(f) as fh:
                content = fh.read(MAX_TLS_FILE + 1)
        except OSError as e:
            raise err(f"tlsConfig.{key}: cannot read {f}: {e.strerror or e}", at, raw[key]) from None
        if len(content) > MAX_TLS_FILE:
            raise err(f"tlsConfig.{key}: {f} is larger than {MAX_TLS_FILE >> 20} MiB: not a certificate or key",
                      at, raw[key])
        data[into] = content
    return TLSConfig(insecure=_bool(raw, "insecure", path, err), server_name=_str(raw, "serverName", path, err),
                     cert_data=data["certData"], key_data=data["keyData"], ca_data=data["caData"])


def http_extender(raw: Mapping[str, Any], path: PathT, *, name: str | None, base_dir: str, default_weight: int,
                  err: Err = _case_err, file: str | None = None, roots: Sequence[str] | None = None
                  ) -> tuple[Extender, list[tuple[str, bool]]]:
    """One HTTP extender, and its managed resources (name, ignoredByScheduler). ``name``:
    the case's name for it; a configuration's extender is named by its urlPrefix as
    written, as upstream names it. The urlPrefix is kept as written: ``resolve_url``
    expands it (or applies an override) once the case is loaded. ``roots``: the trees the
    tlsConfig files must lie in."""
    url_raw = raw.get("urlPrefix")
    if not isinstance(url_raw, str) or not url_raw:
        raise err("urlPrefix must be a non-empty string (the extender's URL, e.g. http://127.0.0.1:8888/scheduler)",
                  (*path, "urlPrefix"), url_raw)
    ext_name = name if name is not None else url_raw
    if "${" not in url_raw:
        check_url(url_raw, (*path, "urlPrefix"), err)
    weight = raw.get("weight", default_weight)
    if isinstance(weight, bool) or not isinstance(weight, int) or not -(2**63) <= weight < 2**63:
        raise err("weight must be an integer (int64)", (*path, "weight"), weight)
    verbs = {k: _str(raw, k, path, err) for k in ("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb")}
    if verbs["prioritizeVerb"] and weight <= 0:
        raise err(f"Invalid value: {weight}: must have a positive weight applied to it", (*path, "weight"), weight)
    timeout = DEFAULT_EXTENDER_TIMEOUT
    if raw.get("httpTimeout") is not None:
        timeout = parse_duration(raw["httpTimeout"], (*path, "httpTimeout"), err)
        if timeout == 0:
            timeout = DEFAULT_EXTENDER_TIMEOUT
        elif timeout < 0:
            # Go's http.Client times out at once with a negative Timeout
            raise err("httpTimeout must not be negative", (*path, "httpTimeout"), raw["httpTimeout"])
    managed: list[tuple[str, bool]] = []
    mr = raw.get("managedResources")
    if mr is not None and not isinstance(mr, list):
        raise err("managedResources must be a list of {name, ignoredByScheduler}", (*path, "managedResources"), mr)
    for j, item in enumerate(mr or []):
        p = (*path, "managedResources", j)
        item = _strict(item, ("name", "ignoredByScheduler"), p, err, "a managedResources entry")
        rname = item.get("name")
        if not isinstance(rname, str):
            raise err("a managed resource needs a name", (*p, "name"), rname)
        managed.append((rname, _bool(item, "ignoredByScheduler", p, err)))
    cfg = HTTPConfig(
        url_prefix=url_raw,
        filter_verb=verbs["filterVerb"],
        prioritize_verb=verbs["prioritizeVerb"],
        preempt_verb=verbs["preemptVerb"],
        bind_verb=verbs["bindVerb"],
        enable_https=_bool(raw, "enableHTTPS", path, err),
        tls=_tls(raw.get("tlsConfig"), (*path, "tlsConfig"), base_dir, err, roots),
        http_timeout=timeout,
        node_cache_capable=_bool(raw, "nodeCacheCapable", path, err),
        managed_resources=tuple(n for n, _ in managed),
        ignorable=_bool(raw, "ignorable", path, err),
        ignored_by_scheduler=tuple(n for n, ign in managed if ign),
    )
    return Extender(name=ext_name, weight=weight, http=cfg, path=tuple(path), file=file), managed


def validate_extenders(exts: Sequence[Extender], path: PathT, err: Err = _case_err) -> None:
    """ValidateExtenders (pkg/scheduler/apis/config/validation): managed resources are
    extended resource names, none managed twice; one binder at most (weights are checked
    as each extender is read)."""
    seen: set[str] = set()
    binders = 0
    for e in exts:
        if e.http is None:
            continue
        binders += bool(e.http.bind_verb)
        for j, rname in enumerate(e.http.managed_resources):
            p = (*e.path, "managedResources", j, "name")
            if not is_extended(rname):
                raise err(f"Invalid value: {rname!r}: is an invalid extended resource name", p, rname)
            if rname in seen:
                raise err(f"Invalid value: {rname!r}: duplicate extender managed resource name", p, rname)
            seen.add(rname)
    if binders > 1:
        raise err(f"Invalid value: \"found {binders} extenders implementing bind\": only one extender can "
                  "implement bind", path, ...)


def apply_ignored_by_scheduler(profile: Profile, managed: Sequence[tuple[str, bool]], path: PathT,
                               err: Err = _case_err) -> None:
    """Managed resources with ignoredByScheduler become NodeResourcesFit's
    ignoredResources (scheduler.New; they replace any given there). Upstream refuses a
    profile without NodeResourcesFit ("can't find NodeResourcesFitArgs in plugin config").
    Decoded arguments are updated; otherwise the raw ``pluginConfig`` entry, before the
    caller decodes it."""
    ignored = sorted({n for n, ign in managed if ign})
    if not ignored:
        return
    running = {r.name for r in (*profile.filter, *profile.score)}
    if "NodeResourcesFit" not in running:
        raise err("can't find NodeResourcesFitArgs in plugin config (a managed resource with ignoredByScheduler "
                  "sets NodeResourcesFit's ignoredResources; the profile does not run NodeResourcesFit)", path, ...)
    decoded = profile.plugin_args.get("NodeResourcesFit")
    if decoded is not None:
        profile.plugin_args = {**profile.plugin_args,
                               "NodeResourcesFit": {**decoded, "ignoredResources": frozenset(ignored)}}
    else:
        raw = dict(profile.plugin_config.get("NodeResourcesFit") or {})
        raw["ignoredResources"] = ignored
        profile.plugin_config = {**profile.plugin_config, "NodeResourcesFit": raw}
