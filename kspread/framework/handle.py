"""What a plugin may read: the snapshot, the listers, the version, the framework."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kspread.listers import Listers
from kspread.model import Cluster
from kspread.snapshot import Nominator, Snapshot
from kspread.versions import Version

if TYPE_CHECKING:  # pragma: no cover
    from kspread.framework.runtime import Framework


@dataclass
class Handle:
    version: Version
    cluster: Cluster
    snapshot: Snapshot
    listers: Listers
    nominator: Nominator = field(default_factory=Nominator)
    framework: "Framework | None" = None
