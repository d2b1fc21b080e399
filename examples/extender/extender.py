"""An example kube-scheduler extender: the Python standard library only; copy and adapt.

It speaks k8s.io/kube-scheduler/extender/v1 over HTTP (POST urlPrefix/<verb>, JSON with
Go's field names) and answers every verb kspread and kube-scheduler call:

* /filter      a node fits when its label example.com/pool equals the pod's label
               pool (a pod without that label fits everywhere); a node labelled
               example.com/maintenance=true fails as unresolvable;
* /prioritize  10 for nodes whose example.com/tier equals the pod's label tier, else 0;
* /preempt     never evicts a pod labelled example.com/critical=true;
* /bind        accepts every binding (a real binder would create it in the API).

With nodeCacheCapable the scheduler sends node names only: this example then reads
the pool and the tier from the names (<pool>-<tier>-<n>), as an extender with its own
node cache would look them up.

    python3 examples/extender/extender.py [PORT]     # prints its URL; Ctrl-C stops it
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 16 << 20


def _labels(node: dict[str, Any]) -> dict[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def _nodes(args: dict[str, Any]) -> list[tuple[str, dict[str, str]]]:
    """(name, labels) of the nodes sent: whole Node objects, or names (nodeCacheCapable)."""
    if args.get("NodeNames") is not None:
        out = []
        for name in args["NodeNames"]:
            pool, tier = (name.split("-") + ["", ""])[:2]
            out.append((name, {"example.com/pool": pool, "example.com/tier": tier}))
        return out
    return [(n["metadata"]["name"], _labels(n)) for n in (args.get("Nodes") or {}).get("items") or []]


def filter_(args: dict[str, Any]) -> dict[str, Any]:
    want = _labels(args["Pod"]).get("pool")
    kept, failed, unresolvable = [], {}, {}
    for name, labels in _nodes(args):
        if labels.get("example.com/maintenance") == "true":
            unresolvable[name] = "node is under maintenance"
        elif want is not None and labels.get("example.com/pool") != want:
            failed[name] = f"node is not in pool {want}"
        else:
            kept.append(name)
    if args.get("NodeNames") is not None:
        return {"NodeNames": kept, "FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable}
    items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in kept]
    return {"Nodes": {"items": items}, "FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable}


def prioritize(args: dict[str, Any]) -> list[dict[str, Any]]:
    tier = _labels(args["Pod"]).get("tier")
    return [{"Host": name, "Score": 10 if tier is not None and labels.get("example.com/tier") == tier else 0}
            for name, labels in _nodes(args)]


def preempt(args: dict[str, Any]) -> dict[str, Any]:
    """Drop the candidates whose victims include a pod labelled example.com/critical=true;
    keep the others with their victims (answered by UID, as the scheduler expects)."""
    out = {}
    for node, victims in (args.get("NodeNameToMetaVictims") or {}).items():
        out[node] = victims  # nodeCacheCapable: UIDs only, nothing to judge by here
    for node, victims in (args.get("NodeNameToVictims") or {}).items():
        if any(_labels(p).get("example.com/critical") == "true" for p in victims["Pods"]):
            continue
        out[node] = {"Pods": [{"UID": p["metadata"]["uid"]} for p in victims["Pods"]],
                     "NumPDBViolations": victims["NumPDBViolations"]}
    return {"NodeNameToMetaVictims": out}


def bind(args: dict[str, Any]) -> dict[str, Any]:
    return {"Error": ""}


VERBS = {"filter": filter_, "prioritize": prioritize, "preempt": preempt, "bind": bind}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # http.server calls it by this name
        verb = self.path.rstrip("/").rsplit("/", 1)[-1]
        size = int(self.headers.get("Content-Length") or 0)
        if verb not in VERBS or not 0 < size <= MAX_BODY:
            self.send_error(404 if verb not in VERBS else 400)
            return
        body = json.dumps(VERBS[verb](json.loads(self.rfile.read(size)))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: no line per request
        pass


def serve(port: int = 0, host: str = "127.0.0.1") -> tuple[ThreadingHTTPServer, str]:
    """Start the extender in a background thread: the server and its URL."""
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}/scheduler"


if __name__ == "__main__":
    arg = sys.argv[1] if len(sys.argv) > 1 else "8888"
    if not arg.isdigit() or len(sys.argv) > 2:  # --help, or a mistake: the usage, not a traceback
        wanted = arg in ("-h", "--help")
        print(__doc__, file=sys.stdout if wanted else sys.stderr)
        sys.exit(0 if wanted else 2)
    srv, url = serve(int(arg))
    print(url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.shutdown()
