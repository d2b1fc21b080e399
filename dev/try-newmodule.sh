#!/usr/bin/env bash
# Try README's "with network" recipe (backend/newmodule.sh) on a machine that reaches no Go module
# proxy: a proxy on disk made from the vendored tree (dev/goproxy.py), a module of our own with
# TeamRank (examples/backend-outoftree/teamrank) and a main package registering it, built by
# newmodule.sh and run on the example's TeamRank cases. A maintainer's tool, not CI. Usage:
#   dev/try-newmodule.sh [WORK_DIR]      (default: a new temporary directory)
# Needs the unpacked tree (.backend-build/sp: backend/build.sh makes it). The build cannot reuse
# build.sh's Go cache (other file paths): about 5 minutes on 2 busy cores the first time.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
B=${KSPREAD_BUILD_DIR:-$REPO/.backend-build}
W=${1:-$(mktemp -d)}
[ -f "$B/sp/.unpacked" ] || { echo "try-newmodule.sh: no unpacked tree in $B/sp (run backend/build.sh first)" >&2; exit 2; }
. "$REPO/backend/go.sh"
export GOPROXY=file://$W/proxy GOSUMDB=off GOPATH=$W/gopath GOFLAGS=-modcacherw GOTOOLCHAIN=local
export GOCACHE=${GOCACHE:-$B/gocache}
python3 "$REPO/dev/goproxy.py" "$B/sp" "$W/proxy"
rm -rf "$W/mod" && mkdir -p "$W/mod/plugins" "$W/mod/cmd/teamrank-backend"
cp -r "$REPO/examples/backend-outoftree/teamrank" "$W/mod/plugins/"
(cd "$W/mod" && "$GO" mod init example.com/teamrank-backend)
cat > "$W/mod/cmd/teamrank-backend/main.go" <<'GO'
package main

import (
	"example.com/teamrank-backend/kspreadbackend"
	"example.com/teamrank-backend/plugins/teamrank"
)

func main() { kspreadbackend.Main(kspreadbackend.WithPlugin(teamrank.Name, teamrank.New)) }
GO
GO=$GO "$REPO/backend/newmodule.sh" "$W/mod" "$W/teamrank-backend" ./cmd/teamrank-backend
cd "$REPO" && python3 -m kspread run -q --backend "$W/teamrank-backend" -k teamrank examples/backend-outoftree
