"""Where yaml-rs starts to pay off (issue 19): the read time of case-like YAML files of
1 KB to 256 KB (a case with its nodes and pods written out, block style, as users write
them) by kspread's strict reader and by the fast path (yaml-rs with all its checks:
``_may_read_otherwise``, the YAML 1.1 agreement checks, segmenting, and on an error the
scan that finds its line), and the time to an error (a duplicate key, a syntax error, on
the last pod) with its message and line. CPU seconds, best of ``--repeat``, in one run:
``python bench/yamlsizes.py``. Each path is timed through ``loader._read_docs`` with
``FAST_YAML_THRESHOLD`` set so that it takes the path measured; both must give the same
data, and the same message and line on an error.
"""

from __future__ import annotations

import argparse
import time

SIZES_KB = (1, 4, 16, 64, 256)

_HEAD = "apiVersion: kspread/v1\nkind: Case\nname: sizes\nversion: \"1.30\"\n"
_NODE = """\
- name: node-{i}
  labels:
    topology.kubernetes.io/zone: zone-{z}
    disk: ssd
  allocatable:
    cpu: "4"
    memory: 32Gi
    pods: 110
"""
_POD = """\
- name: pod-{i}
  node: node-{i}
  labels:
    app: app-{z}
  requests:
    cpu: 100m
    memory: 256Mi
"""
_TAIL = "pod:\n  name: new\n  requests:\n    cpu: 500m\nexpect:\n  selected: node-0\n"


def case_text(kb: int, error: str = "") -> str:
    """A case of about ``kb`` KB: n nodes and n pods; ``error``: "duplicate" (the last pod
    names itself twice) or "syntax" (its labels' flow mapping left open)."""
    n = 1
    while True:
        nodes = "".join(_NODE.format(i=i, z=i % 3) for i in range(n))
        pods = [_POD.format(i=i, z=i % 7) for i in range(n)]
        if error == "duplicate":
            pods[-1] = pods[-1].replace("  node:", "  name: again\n  node:")
        elif error == "syntax":
            pods[-1] = pods[-1].replace("  labels:\n    app: app-", "  labels: {app: app-")
        text = _HEAD + "nodes:\n" + nodes + "pods:\n" + "".join(pods) + _TAIL
        if len(text) >= kb * 1024 or kb == 0:
            return text
        n = max(n + 1, int(n * kb * 1024 / len(text)))


def _outcome(docs) -> tuple:
    return tuple((d.data, str(d.error) if d.error is not None else None, d.line) for d in docs)


def measure(text: str, repeat: int) -> tuple[float, float, tuple]:
    """The best CPU seconds of the strict reader and of the fast path on ``text``."""
    from kspread.format import loader

    saved = loader.FAST_YAML_THRESHOLD
    best = {True: float("inf"), False: float("inf")}
    out = {}
    try:
        for _ in range(repeat):
            for fast in (False, True):  # alternating
                loader.FAST_YAML_THRESHOLD = 0 if fast else len(text)
                c0 = time.process_time()
                docs = loader._read_docs(text, "sizes.yaml")
                best[fast] = min(best[fast], time.process_time() - c0)
                out[fast] = _outcome(docs)
    finally:
        loader.FAST_YAML_THRESHOLD = saved
    if out[True] != out[False]:
        raise SystemExit(f"the paths disagree on a {len(text)} byte file:\n{out[True]!r}\n{out[False]!r}")
    return best[False], best[True], out[True]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--sizes", type=int, nargs="*", default=list(SIZES_KB), help="KB")
    args = ap.parse_args()
    from kspread.format import loader

    if loader.yaml_rs is None:
        raise SystemExit("yaml-rs is not installed (pip install kspread[fast])")
    # warm-up: imports, compiled regular expressions
    measure(case_text(4), 2)
    measure(case_text(4, "syntax"), 2)
    print(f"threshold now {loader.FAST_YAML_THRESHOLD} bytes; CPU ms, best of {args.repeat}")
    for kb in args.sizes:
        for error in ("", "duplicate", "syntax"):
            text = case_text(kb, error)
            strict, fast, out = measure(text, args.repeat)
            what = "data" if not error else f"{error} key" if error == "duplicate" else "syntax error"
            where = f" ({out[0][1][:70]})" if error else ""
            print(f"{kb:4d} KB ({len(text):7d} bytes, {text.count(chr(10)):5d} lines) {what:12s}: strict "
                  f"{strict * 1000:7.2f} ms, fast {fast * 1000:6.2f} ms, x{strict / fast:5.1f}{where}", flush=True)


if __name__ == "__main__":
    main()
