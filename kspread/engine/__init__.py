"""The engine: kspread's reference implementation of kube-scheduler (what upstream's
pkg/scheduler is): the framework runtime, one module per plugin, the snapshot plugins
read, the scheduling cycle and queue, and every version difference as a named flag.
It imports neither the case format nor the workflow."""
