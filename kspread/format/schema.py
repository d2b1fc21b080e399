"""The JSON Schema of the case format and the translation of its errors.

``schemas/case.schema.json`` is the one definition of the case shape. It ships
inside the wheel as ``kspread/format/case.schema.json``; in a source checkout it is read
from ``schemas/`` beside the package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator

from kspread.errors import CaseError, did_you_mean
from kspread.format.limits import huge_int_at, huge_int_message

_HERE = Path(__file__).resolve().parent


def schema_path() -> Path:
    for p in (_HERE / "case.schema.json", _HERE.parent.parent / "schemas" / "case.schema.json"):
        if p.is_file():
            return p
    raise FileNotFoundError("kspread's case.schema.json is missing from the installation")


@cache
def case_schema() -> dict:
    return json.loads(schema_path().read_text(encoding="utf-8"))


@cache
def validator(def_name: str | None = None) -> Draft202012Validator:
    schema = case_schema()
    if def_name is not None:
        schema = {"$defs": schema["$defs"], "$ref": f"#/$defs/{def_name}"}
    return Draft202012Validator(schema)


_TYPE_NAMES = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
               "number": "a number", "boolean": "true or false", "null": "null"}


def _enum_of_other_type(err: jsonschema.ValidationError) -> bool:
    """An enum of scalars failed by a mapping or a list: that branch was for another type."""
    return err.validator == "enum" and isinstance(err.instance, (Mapping, list))


def _leaf(err: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For oneOf/anyOf failures, follow the branch the instance was meant for: the one
    whose type fits (no type/const error at the instance itself), deepest error first."""
    while err.context:
        branches: dict[object, list[jsonschema.ValidationError]] = {}
        for sub in err.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        viable = [
            errs for errs in branches.values()
            if not any(len(e.relative_path) == 0 and (e.validator in ("type", "const") or _enum_of_other_type(e))
                       for e in errs)
        ]
        if not viable:
            return err
        errs = max(viable, key=lambda es: max(len(e.relative_path) for e in es))
        err = max(errs, key=lambda e: len(e.relative_path))
    return err


def _types_of(err: jsonschema.ValidationError) -> list[str]:
    out: list[str] = []
    for sub in err.context or []:
        if sub.validator == "type" and len(sub.relative_path) == 0:
            want: Any = sub.validator_value  # JSON from the schema; Unset only on hand-made errors
            for t in [want] if isinstance(want, str) else want:
                if t not in out:
                    out.append(t)
    return out


# Kinds that own pods only through another controller (a pod's ``controller``).
_OWNED_THROUGH = {"Deployment": "a Deployment's pods are owned by its ReplicaSet: give that as the controller",
                  "CronJob": "a CronJob's pods are owned by its Job: give that as the controller"}


def to_case_error(err: jsonschema.ValidationError, prefix: list | None = None) -> CaseError:
    e = _leaf(err)
    path = [*(prefix or []), *e.absolute_path]
    v = e.validator
    # JSON from the schema and the document (jsonschema sets them on every error it yields;
    # its stubs admit Unset for errors made by hand)
    value: Any = e.validator_value
    inst: Any = e.instance
    if v == "additionalProperties" and isinstance(inst, Mapping) and isinstance(e.schema, Mapping):
        allowed = sorted((e.schema.get("properties") or {}).keys())
        extras = [k for k in inst if k not in allowed]
        key = extras[0] if extras else "?"
        hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
        out = CaseError(f"unknown field {key!r}{hint}{did_you_mean(key, allowed)}", [*path, key])
        # a mistyped key of the format; plugin arguments are kube-scheduler's to refuse
        out.format_error = path[:2] != ["profile", "pluginConfig"]
        return out
    if v == "required":
        missing = [k for k in value if k not in inst] if isinstance(inst, Mapping) else []
        if missing and isinstance(e.schema, Mapping):
            # a required field mistyped (``kindd``): named at the mistyped key, as load_case does for kind
            known = e.schema.get("properties") or {}
            typo = [k for k in inst if isinstance(k, str) and k not in known and k.lower().startswith(missing[0].lower())]
            if typo:
                return CaseError(f"missing required field {missing[0]!r}; unknown field {typo[0]!r}", [*path, typo[0]])
        if not path and missing[:1] == ["expect"]:
            # a new case, written to ask a question: the update fills an empty expect
            return CaseError("missing required field 'expect' (write `expect: {}` and let `kspread run --update` "
                             "or `pytest --kspread-update` fill it)", path)
        return CaseError(f"missing required field {missing[0] if missing else e.message!r}", path)
    if v == "type" and path[-1:] == ["version"] and isinstance(inst, (int, float)) and not isinstance(inst, bool):
        out = CaseError(_unquoted_version(inst), path)
        out.format_error = True
        return out
    if v == "type":
        want = value
        want = [want] if isinstance(want, str) else want
        return CaseError("must be " + " or ".join(_TYPE_NAMES.get(t, t) for t in want), path, value=inst)
    if v == "enum":
        owner = _OWNED_THROUGH.get(inst) if isinstance(inst, str) and (
            path[-2:-1] == ["controller"] or "ownerReferences" in path) else None
        return CaseError("must be one of " + ", ".join(repr(x) for x in value)
                         + (f" ({owner})" if owner else ""), path, value=inst)
    if v == "const":
        return CaseError(f"must be {value!r}", path, value=inst)
    if v == "pattern":
        if "Ki|Mi" in value:
            return CaseError("not a Kubernetes quantity (expected e.g. '500m', '1.5', '8Gi', '1e3')", path, value=inst)
        if path and path[-1] == "version":
            out = CaseError('version must be a quoted string like "1.24"', path, value=inst)
            out.format_error = True
            return out
        return CaseError(f"does not match the pattern {value}", path, value=inst)
    if v in ("oneOf", "anyOf") and _types_of(e):
        return CaseError("must be " + " or ".join(_TYPE_NAMES.get(t, t) for t in _types_of(e)), path, value=inst)
    if v in ("minimum", "maximum", "minLength", "minItems"):
        return CaseError(e.message, path, value=inst)
    if v == "maxProperties" and len(path) == 2 and path[0] == "schedule" and isinstance(inst, Mapping):
        # a `schedule` entry without `name` is a step: one key
        out = CaseError(f"a step has one key ({', '.join(inst)} given: write them as separate steps, "
                        "or give a pod its `name`)", [*path, list(inst)[1]])
        out.format_error = True
        return out
    if v == "not":
        # a shape of the format that it does not allow: how the case is written, reported at the key
        # that breaks the rule (the later of two that exclude each other)
        if path == [] or path[-1:] == ["pod"] or (len(path) >= 2 and path[-2] == "schedule"):
            if isinstance(inst, Mapping) and "pod" in inst and "schedule" in inst:
                out = CaseError("give either `pod` or `schedule`, not both", _at_later(path, inst, "pod", "schedule"))
            elif isinstance(inst, Mapping) and "requests" in inst and "containers" in inst:
                out = CaseError("give either `requests` or `containers`, not both",
                                _at_later(path, inst, "requests", "containers"))
            else:
                if len(path) >= 2 and path[-2] == "schedule":
                    out = CaseError("an incoming pod may not have `node` (it is scheduled)", [*path, "node"])
                else:
                    given = [k for k in inst if k in ("node", "replicas")] if isinstance(inst, Mapping) else []
                    out = CaseError("the incoming pod may not have `node` or `replicas`", [*path, *given[:1]])
        else:
            if isinstance(inst, Mapping) and "requests" in inst and "containers" in inst:
                path = _at_later(path, inst, "requests", "containers")
            out = CaseError("give either `requests` or `containers`, not both", path)
        out.format_error = True
        return out
    return CaseError(e.message, path, value=inst)


def _unquoted_version(number: float) -> str:
    """The error for a version written as a YAML number: say how YAML read it and what to write."""
    read = repr(number)
    # 1.1 .. 1.9 name no supported minor (kspread's start at 1.12): YAML dropped a trailing 0
    meant = read + "0" if re.fullmatch(r"1\.[1-9]", read) else read
    written = f"the unquoted {meant} as the number {read}" if meant != read else f"an unquoted {read} as a number"
    return f'must be a quoted string: YAML reads {written}; write version: "{meant}"'


def _at_later(path: list, inst: Mapping[str, Any], a: str, b: str) -> list:
    """The path of whichever of keys ``a`` and ``b`` of ``inst`` is written second."""
    for k in reversed(list(inst)):
        if k in (a, b):
            return [*path, k]
    return path


def _order(err: jsonschema.ValidationError) -> tuple:
    """Errors ordered by their paths: list items by index (``schedule[9]`` before
    ``schedule[10]``), mapping keys by name."""
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in err.absolute_path], err.validator


def validate(doc: Any, def_name: str | None = None, prefix: list | None = None) -> None:
    """Raise a CaseError for the first schema error in ``doc``: the deepest, and of
    those the first in ``_order``."""
    v = validator(def_name)
    try:
        errors = sorted(v.iter_errors(doc), key=_order)
    except ValueError:
        # jsonschema writes the instance into its messages: an integer past Python's limit
        # for converting it to text (4,300 digits) cannot be
        at = huge_int_at(doc)
        if at is None:
            raise
        path, n = at
        raise CaseError(huge_int_message(n), [*(prefix or []), *path]) from None
    if errors:
        # the deepest error is usually the most specific one
        first = max(errors, key=lambda e: len(e.absolute_path)) if len(errors) > 1 else errors[0]
        raise to_case_error(first, prefix)


def check_args_shape(raw: Mapping[str, Any], def_name: str, path: tuple) -> None:
    """The shape check of plugin arguments (``kspread.engine.framework.args``): ``raw``
    against ``$defs/<def_name>``, errors under ``path``."""
    validate(dict(raw), def_name, list(path))
