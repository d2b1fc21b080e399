"""A Go module proxy on disk (GOPROXY=file://DIR) made from the vendored modules of the
upstream tarball, to try README's "with network" recipe (backend/newmodule.sh) on a machine
that reaches no module proxy. A maintainer's tool, not CI.

    python3 dev/goproxy.py TREE OUT

TREE: the unpacked tarball (.backend-build/sp after backend/build.sh). OUT: the proxy
directory to write. For every module vendor/modules.txt lists at a version (the replacement's
path and version where one is given, as the build used it) it writes the layout a proxy
serves: <module>/@v/list, <version>.info, <version>.mod and <version>.zip (entries
<module>@<version>/<file>; uppercase letters of the path escaped as !x in the directory names,
as cmd/go asks for them).

What the modules hold is only what vendor/ holds: the packages the tree imports (for every
build tag), no tests, no go.mod of their own. So each .mod is written here: the module path
and its `go` line from modules.txt, no requirements, except k8s.io/kubernetes's, which requires,
as the real go.mod of k8s.io/kubernetes v1.35.4 does, every other module of the list at its
version and its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0, which no proxy
serves: a module of one's own must replace them (newmodule.sh writes the lines) exactly as
with the real proxy. A package the vendored tree does not import is missing here, where the
real proxy would have it.
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

KUBERNETES = "k8s.io/kubernetes"
TIME = "2026-04-14T00:00:00Z"  # any fixed time: cmd/go shows it, never compares it


@dataclass
class Module:
    path: str
    version: str
    go: str | None = None
    packages: list[str] = field(default_factory=list)


def escape(path: str) -> str:
    """golang.org/x/mod/module.EscapePath: an uppercase letter becomes ! and its lowercase."""
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), path)


def read_modules(modules_txt: Path) -> tuple[list[Module], set[str]]:
    """The modules a vendor/modules.txt lists (as the build used them: the replacement where
    one is given), and k8s.io/kubernetes's staging modules: the k8s.io modules but
    k8s.io/kubernetes that a replace line points at themselves at v0.35.4."""
    mods: list[Module] = []
    staging: set[str] = set()
    cur: Module | None = None
    for line in modules_txt.read_text().splitlines():
        if line.startswith("# "):
            parts = line[2:].split()
            cur = None
            if "=>" in parts:
                i = parts.index("=>")
                old, new = parts[:i], parts[i + 1:]
                if len(new) == 2 and new[0] == old[0] and old[0].startswith("k8s.io/") and old[0] != KUBERNETES \
                        and new[1] == "v0.35.4":
                    staging.add(old[0])
                if len(old) == 2 and len(new) == 2 and new[0] != old[0]:
                    # replaced by a fork (1.31's golang.org/x/crypto => github.com/openshift/golang-crypto):
                    # vendor/ holds the fork's files under the module's own path, served as that module
                    cur = Module(old[0], old[1])
                    mods.append(cur)
                elif len(old) == 2 and len(new) == 2:  # a module in use, replaced by another version
                    cur = Module(new[0], new[1])
                    mods.append(cur)
            elif len(parts) == 2:
                cur = Module(parts[0], parts[1])
                mods.append(cur)
        elif line.startswith("## "):
            m = re.search(r"\bgo (\S+)", line)
            if cur is not None and m:
                cur.go = m.group(1)
        elif line.strip() and cur is not None:
            cur.packages.append(line.strip())
    return mods, staging


def mod_file(m: Module, mods: list[Module], staging: set[str]) -> str:
    text = f"module {m.path}\n"
    if m.go:
        text += f"\ngo {m.go}\n"
    if m.path == KUBERNETES:
        reqs = sorted({(o.path, "v0.0.0" if o.path in staging else o.version) for o in mods if o.path != m.path}
                      | {(s, "v0.0.0") for s in staging})
        text += "\nrequire (\n" + "".join(f"\t{p} {v}\n" for p, v in reqs) + ")\n"
    return text


def write_module(m: Module, vendor: Path, out: Path, mods: list[Module], staging: set[str],
                 owned: set[str]) -> int:
    """The module's files in the proxy; ``owned``: every directory that is a package or a
    module root of the list (a package's subdirectory that is none of them, such as files it
    embeds, belongs to the package)."""
    d = out / escape(m.path) / "@v"
    d.mkdir(parents=True, exist_ok=True)
    mod = mod_file(m, mods, staging)
    (d / f"{m.version}.mod").write_text(mod)
    (d / f"{m.version}.info").write_text(json.dumps({"Version": m.version, "Time": TIME}) + "\n")
    (d / "list").write_text(m.version + "\n")
    prefix = f"{m.path}@{m.version}/"
    root = vendor / m.path
    files = 0
    with zipfile.ZipFile(d / f"{m.version}.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(prefix + "go.mod", mod)
        seen: set[str] = set()
        for pkg in [m.path, *m.packages]:
            todo = [vendor / pkg]
            while todo:
                src = todo.pop()
                if not src.is_dir():
                    continue
                for f in sorted(src.iterdir()):
                    if f.is_dir():
                        if f.relative_to(vendor).as_posix() not in owned:
                            todo.append(f)
                        continue
                    rel = f.relative_to(root).as_posix()
                    if rel in ("go.mod", "go.sum") or rel in seen:
                        continue
                    seen.add(rel)
                    z.write(f, prefix + rel)
                    files += 1
    return files


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python3 dev/goproxy.py TREE OUT (TREE: the unpacked tarball, .backend-build/sp)",
              file=sys.stderr)
        return 2
    tree, out = Path(argv[0]), Path(argv[1])
    modules_txt = tree / "vendor" / "modules.txt"
    if not modules_txt.is_file():
        print(f"goproxy.py: no {modules_txt} (unpack the tarball first: backend/build.sh does)", file=sys.stderr)
        return 2
    mods, staging = read_modules(modules_txt)
    owned = {m.path for m in mods} | {p for m in mods for p in m.packages}
    files = sum(write_module(m, tree / "vendor", out, mods, staging, owned) for m in mods)
    print(f"wrote {len(mods)} modules ({files} files; {len(staging)} staging modules required at v0.0.0 by "
          f"{KUBERNETES}) to {out}: GOPROXY=file://{out.resolve()} GOSUMDB=off")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
