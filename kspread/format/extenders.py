"""HTTP extenders as a case's ``profile.extenders`` or a KubeSchedulerConfiguration's
``extenders`` write them: upstream's Extender fields (urlPrefix, filterVerb,
prioritizeVerb, preemptVerb, bindVerb, weight, enableHTTPS, tlsConfig, httpTimeout,
nodeCacheCapable, managedResources, ignorable), decoded strictly and validated as
upstream's ValidateExtenders validates them (a positive weight for a prioritizer, at
most one binder, managed resources that are extended resource names, each once).

``urlPrefix`` may name environment variables, ``${NAME}`` or ``${NAME:-default}``: a
case stays portable while a test session points it at the extender it started. An
unset variable without a default is an error at the urlPrefix line. Only http and https
URLs are called, and only the one written (after expansion).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kspread.engine.extender import DEFAULT_EXTENDER_TIMEOUT, HTTPConfig, TLSConfig, tls_data
from kspread.engine.framework.profile import Extender, Profile
from kspread.errors import CaseError, PathT
from kspread.format.apivalidation import is_extended

HTTP_FIELDS = ("urlPrefix", "filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb", "weight", "enableHTTPS",
               "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable")
_TLS_FIELDS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}

Err = Callable[[str, PathT, Any], CaseError]


def _case_err(msg: str, path: PathT, value: Any = ...) -> CaseError:
    return CaseError(msg, path, value=value)


def expand_url(raw: str, path: PathT, err: Err = _case_err, env: Mapping[str, str] | None = None) -> str:
    """``${NAME}`` and ``${NAME:-default}`` replaced from the environment."""
    environ = os.environ if env is None else env

    def sub(m: re.Match) -> str:
        name, default = m.group(1), m.group(2)
        if name in environ and environ[name] != "":
            return environ[name]
        if default is not None:
            return default
        raise err(f"urlPrefix names the environment variable {name}, which is not set (set it, or write "
                  f"${{{name}:-http://host:port}} to give a default)", path, raw)

    return _VAR.sub(sub, raw)


def check_url(url: str, path: PathT, err: Err = _case_err) -> None:
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest:
        raise err(f"urlPrefix {url!r} is not an http:// or https:// URL", path, url)


def resolve_url(e: Extender, overrides: Mapping[str, str] | None) -> Extender:
    """The extender with the URL it is called at: the override given for its name on the
    command line, else its urlPrefix with environment variables expanded. A CaseError
    (path inside the case, or ``file`` the configuration) when that is not a URL."""
    from dataclasses import replace

    at = (*e.path, "urlPrefix")

    def err(msg: str, path: PathT, value: Any = ...) -> CaseError:
        return CaseError(msg, path, value=value, file=e.file)

    if overrides and e.name in overrides:
        url = overrides[e.name]
        check_url(url, at, lambda m, p, v: CaseError(f"--extender {e.name}={url}: {m}", p, value=v, file=e.file))
    else:
        url = expand_url(e.http.url_prefix, at, err)
        check_url(url, at, err)
    return replace(e, http=replace(e.http, url_prefix=url))


def parse_duration(raw: Any, path: PathT, err: Err = _case_err) -> float:
    """A Go duration string (``5s``, ``1m30s``, ``500ms``) in seconds; 0 is "not set"."""
    if isinstance(raw, bool) or not isinstance(raw, str):
        raise err("httpTimeout must be a duration string such as \"5s\" or \"500ms\"", path, raw)
    s = raw.strip()
    sign = -1.0 if s.startswith("-") else 1.0
    s = s.lstrip("+-")
    if s == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    if pos != len(s) or not s:
        raise err(f"time: invalid duration {raw!r}", path, raw)
    return sign * total


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


def _tls(raw: Any, path: PathT, base_dir: str, err: Err) -> TLSConfig | None:
    if raw is None:
        return None
    raw = _strict(raw, _TLS_FIELDS, path, err, "tlsConfig")
    files = {}
    for key in ("certFile", "keyFile", "caFile"):
        f = _str(raw, key, path, err)
        if f:
            f = os.path.join(base_dir, f)  # relative to the file that names it
            if not os.path.isfile(f):
                raise err(f"tlsConfig.{key}: no such file: {f}", (*path, key), raw[key])
        files[key] = f
    data = {}
    for key in ("certData", "keyData", "caData"):
        v = _str(raw, key, path, err)
        try:
            data[key] = tls_data(v) if v else b""
        except ValueError:
            raise err(f"tlsConfig.{key} must be base64 (a []byte field)", (*path, key), ...) from None
    return TLSConfig(insecure=_bool(raw, "insecure", path, err), server_name=_str(raw, "serverName", path, err),
                     cert_file=files["certFile"], key_file=files["keyFile"], ca_file=files["caFile"],
                     cert_data=data["certData"], key_data=data["keyData"], ca_data=data["caData"])


def http_extender(raw: Mapping[str, Any], path: PathT, *, name: str | None, base_dir: str, default_weight: int,
                  err: Err = _case_err, file: str | None = None) -> tuple[Extender, list[tuple[str, bool]]]:
    """One HTTP extender, and its managed resources (name, ignoredByScheduler). ``name``:
    the case's name for it; a configuration's extender is named by its urlPrefix as
    written, as upstream names it. The urlPrefix is kept as written: ``resolve_url``
    expands it (or applies an override) once the case is loaded."""
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
        tls=_tls(raw.get("tlsConfig"), (*path, "tlsConfig"), base_dir, err),
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
