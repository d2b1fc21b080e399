"""What the person running kspread allows a case's HTTP extenders, as command-line
options (``kspread run|explain|validate|diff``; the pytest plugin reads the same from its
options and ini keys): ``--extender NAME=URL``, ``--extender-env NAME``,
``--allow-extender-host HOST[:PORT]``. A case cannot give them: it is untrusted input."""

from __future__ import annotations

import argparse
import re
from typing import Any


def extender_url(text: str) -> tuple[str, str]:
    """``NAME=URL`` of ``--extender`` (the NAME is the case's extender name, or the urlPrefix a
    KubeSchedulerConfiguration writes; the URL is split at the first ``=`` after it)."""
    name, sep, url = text.partition("=")
    if text.startswith(("http://", "https://")):
        # a configuration's extender is named by its URL, which may hold '='
        name, sep, url = text.rpartition("=")
    if not sep or not name or not url:
        raise argparse.ArgumentTypeError(f"expected NAME=URL, got {text!r}")
    return name, url


def extender_env_name(text: str) -> str:
    """NAME of ``--extender-env``: an environment variable's name."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        raise argparse.ArgumentTypeError(f"expected an environment variable's name, got {text!r}")
    return text


def extender_host(text: str) -> str:
    """HOST[:PORT] of ``--allow-extender-host``."""
    from kspread.format.extenders import parse_host

    try:
        parse_host(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def extender_options(p: argparse.ArgumentParser) -> None:
    """What a person allows a case's HTTP extenders (README: What a case may make kspread do)."""
    p.add_argument("--extender", action="append", type=extender_url, metavar="NAME=URL", default=[],
                   help="call the HTTP extender NAME (its name in the case, or its urlPrefix in a "
                        "KubeSchedulerConfiguration) at URL instead of the urlPrefix written (repeatable)")
    p.add_argument("--extender-env", action="append", type=extender_env_name, metavar="NAME", default=[],
                   help="let an extender's urlPrefix read the environment variable NAME as ${NAME} (repeatable; "
                        "a variable not named here is never read: ${NAME:-default} takes its default)")
    p.add_argument("--allow-extender-host", action="append", type=extender_host, metavar="HOST[:PORT]", default=[],
                   help="let a case's extenders be called on HOST (any port, or PORT) besides loopback (repeatable)")
    p.add_argument("--extender-max-timeout", type=extender_max_timeout, metavar="SECONDS", default=None,
                   help="the longest httpTimeout a case's extender may set (default 60): a call holds the run "
                        "that long at most")


def extender_max_timeout(text: str) -> float:
    """SECONDS of ``--extender-max-timeout``: a positive number."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1e9:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def extender_access(args: argparse.Namespace) -> Any:
    """The ExtenderAccess the options give."""
    from kspread.format.extenders import DEFAULT_MAX_TIMEOUT, ExtenderAccess

    most = getattr(args, "extender_max_timeout", None)
    return ExtenderAccess(urls=dict(getattr(args, "extender", None) or []),
                          env=frozenset(getattr(args, "extender_env", None) or ()),
                          hosts=tuple(getattr(args, "allow_extender_host", None) or ()),
                          max_timeout=DEFAULT_MAX_TIMEOUT if most is None else most)


