"""What the controllers do with the claims of a deleted pod's generic ephemeral volumes
(docs/reference/sequences.md, Claims and volumes), at once as a sequence's deletions go.

The claim ``<pod>-<volume>`` is owned by its pod (upstream's ephemeral volume controller,
pkg/controller/volume/ephemeral), so the garbage collector deletes it once the pod is gone,
whoever deleted the pod (a step, the taint manager, preemption). Every claim carries the PVC
protection finalizer: the deletion first sets its deletionTimestamp (a claim update the queue
sees), and the PVC protection controller lets it go once no scheduled pod uses it. The PV
controller then releases the volume it was bound to (an update: Released, its claimRef keeping
the old claim's UID, so that no claim binds it again, a new claim of the same name neither) and
reclaims it by its policy. kspread drops that volume whatever the policy (a Released volume
binds no claim, and a deleted one none either; later updates move no other pod), so that a
StatefulSet's replacement, whose new claim has the old one's name, is not taken for its old
volume's claim. A claim another scheduled pod still uses (a persistentVolumeClaim volume of that
name) would stay, being deleted, until that pod goes, and a volume of reclaim policy Recycle
would be scrubbed and made Available again: neither is modelled, each an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from kspread.engine.framework.interface import PodEvent
from kspread.engine.model import Pod
from kspread.engine.storage import Storage
from kspread.errors import CaseError


def delete_owned_claims(storage: Storage | None, pod: Pod, scheduled: Iterable[Pod],
                        path: Sequence[str | int]) -> list[PodEvent]:
    """The pod is gone: its ephemeral volumes' claims (those it owns) and their volumes are
    dropped from ``storage``. Returns the events the queue sees, in order: each claim's update
    (its deletionTimestamp set), then its volume's (Released). ``scheduled``: the pods bound or
    assumed now (those the PVC protection controller counts)."""
    if storage is None:
        return []
    events: list[PodEvent] = []
    for v in pod.volumes:
        if v.ephemeral is None:
            continue
        claim = storage.claim(pod.namespace, v.claim_name(pod.name))
        if claim is None or claim.owner_pod != pod.name:
            continue
        users = sorted(q.key for q in scheduled if q.namespace == pod.namespace and q.key != pod.key
                       and any(u.claim == claim.name for u in q.volumes))
        if users:
            raise CaseError(f"pod {pod.key} is deleted and the garbage collector deletes the claim {claim.name!r} "
                            f"of its ephemeral volume {v.name!r}, which pod {users[0]} uses as a "
                            "persistentVolumeClaim: the PVC protection finalizer keeps that claim, being deleted, "
                            "until no scheduled pod uses it, which kspread does not model", list(path))
        pv = storage.pvs.get(claim.volume_name) if claim.volume_name else None
        if pv is not None and pv.claim_ref == (claim.namespace, claim.name) and pv.reclaim_policy == "Recycle":
            raise CaseError(f"pod {pod.key} is deleted, and the claim {claim.name!r} of its ephemeral volume with it: "
                            f"its volume {pv.name!r} has reclaim policy Recycle, whose recycler (a pod scrubbing "
                            "the volume, which is then Available again) kspread does not model", list(path))
        events.append(PodEvent("PVCUpdate", pod, obj=replace(claim, deleting=True)))
        del storage.pvcs[claim.key]
        if pv is not None and pv.claim_ref == (claim.namespace, claim.name):
            events.append(PodEvent("PVUpdate", pod, obj=replace(pv, phase="Released")))
            del storage.pvs[pv.name]
    return events
