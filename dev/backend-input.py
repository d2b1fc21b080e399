#!/usr/bin/env python3
"""The JSON a backend reads for one case, to run the backend by hand (a maintainer's tool).

    python3 dev/backend-input.py FILE NAME | KSPREAD_BACKEND_V=5 BACKEND > answer.json 2> trace.txt

NAME is the case's name as ``kspread run`` prints it (a variant: ``name[variant]``).
``KSPREAD_BACKEND_V`` (0-10) sets klog's verbosity in the backend: upstream's own log on stderr
(at 5: each cycle's pod, every queue move with its event and queueing hint). kspread does not
pass it to the backends it starts (docs/reference/backends.md, "Protocol").
"""

from __future__ import annotations

import argparse
import json
import sys

from kspread.errors import CaseError
from kspread.format.loader import load_case, read_file
from kspread.workflow.backend import backend_input


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("name")
    ap.add_argument("--observe", choices=["last", "none"], default="last")
    args = ap.parse_args(argv)
    names = []
    try:
        got = read_file(args.file)
        if got.error is not None:
            raise got.error
        for doc in got.docs:
            if doc.name == args.name:
                print(json.dumps(backend_input(load_case(doc), args.observe)))
                return 0
            names.append(doc.name)
    except CaseError as e:
        print(f"backend-input: {e}", file=sys.stderr)
        return 2
    print(f"backend-input: no case {args.name!r} in {args.file} (there: {', '.join(map(repr, names)) or 'none'})",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
