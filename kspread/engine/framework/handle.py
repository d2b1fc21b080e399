"""What a plugin may read: the snapshot, the listers, the version, the framework."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kspread.engine.listers import Listers
from kspread.engine.model import Cluster
from kspread.engine.snapshot import Nominator, Snapshot
from kspread.engine.versions import Version

if TYPE_CHECKING:  # pragma: no cover
    from kspread.engine.framework.runtime import Framework


@dataclass
class Handle:
    version: Version
    cluster: Cluster
    snapshot: Snapshot
    listers: Listers
    nominator: Nominator = field(default_factory=Nominator)
    framework: Framework | None = None
    # the profile's extenders as the cycle calls them (kspread.engine.extender.Extenders)
    extenders: Any = None
    # the ResourceClaims during a run (kspread.engine.devices.ClaimTracker)
    claims: Any = None
    # claim events a plugin caused outside Reserve (DynamicResources' PostFilter), for the queue
    dra_events: list = field(default_factory=list)
    # the storage objects as the cycle sees them (kspread.engine.storage.Storage; a
    # sequence's binding changes them)
    storage: Any = None
    # GangScheduling and its workload manager (kspread.engine.plugins.gangscheduling); None: off
    gang: Any = None
