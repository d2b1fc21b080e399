#!/usr/bin/env python3
"""Turn an unpacked kubernetes source tree into a vendored module tree the backend builds in.

Usage: dev/k8stree.py SRC VERSION OUT
       dev/k8stree.py --extract GIT_DIR TREE_ISH DIR

SRC is a kubernetes source tree of one release (the repository's root: go.mod, go.work,
staging/src/k8s.io/*, vendor/modules.txt); VERSION its release (1.36.2); OUT a new directory.
OUT gets what backend/build.sh takes as KSPREAD_TREE: a module sigs.k8s.io/scheduler-plugins
(with none of that project's own packages) whose go.mod requires k8s.io/kubernetes VERSION, every
staging module at v0.MINOR.PATCH and the third-party modules the tree vendors, and whose vendor/
holds them (hard links into SRC) with a modules.txt listing every package, so that
`go build -mod=vendor` runs offline. This is how dev/ and the backend reach a minor for which no
vendored scheduler-plugins tree is at hand: 1.36, from the openshift/kubernetes tree that
openshift/microshift keeps under deps/ (dev/README.md, "1.36").

``--extract`` writes the files of TREE_ISH (a commit's directory, ``COMMIT:deps/github.com/
openshift/kubernetes``) of the repository GIT_DIR into the new directory DIR, leaving out (and
naming) any file whose blob the repository lacks: a mirror's snapshot may omit its largest files
(microshift's 8e16b12 lacks two swagger.json test files), which ``git archive`` stops at.
backend/build.sh does so for 1.36 when KSPREAD_TREE is not set.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SKIP_DIRS = {"testdata", "vendor", "staging", "_output", "node_modules"}


def packages(root: Path, prefix: str) -> list[str]:
    """Import paths of the directories under root that hold a non-test Go file."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith((".", "_")))
        if any(f.endswith(".go") and not f.endswith("_test.go") for f in files):
            rel = Path(d).relative_to(root).as_posix()
            out.append(prefix if rel == "." else f"{prefix}/{rel}")
    return sorted(out)


def go_version(gomod: Path) -> str:
    m = re.search(r"^go (\S+)", gomod.read_text(), re.M)
    return m.group(1) if m else ""


def third_party(modules_txt: Path) -> list[tuple[str, str, str, list[str]]]:
    """(path, version, go version, packages) of each module the tree vendors from elsewhere."""
    mods: list[tuple[str, str, str, list[str]]] = []
    cur: list | None = None
    for line in modules_txt.read_text().splitlines():
        if line.startswith("# "):
            parts = line[2:].split()
            cur = None
            if "=>" in parts and parts[parts.index("=>") + 1].startswith("./"):
                continue  # a staging module: taken from staging/
            if len(parts) < 2 or parts[1] == "=>":
                continue  # a replacement's own line: the module is listed with its version too
            cur = [parts[0], parts[1], "", []]
            mods.append(cur)  # type: ignore[arg-type]
        elif line.startswith("## ") and cur is not None:
            m = re.search(r"go (\S+)", line)
            if m:
                cur[2] = m.group(1)
        elif line and not line.startswith("#") and cur is not None:
            cur[3].append(line)
    return [tuple(m) for m in mods]  # type: ignore[misc]


def link_tree(src: Path, dst: Path, skip_top: set[str] = frozenset()) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for entry in src.iterdir():
        if entry.name in skip_top:
            continue
        target = dst / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry), target)
        elif entry.is_dir():
            shutil.copytree(entry, target, copy_function=os.link, symlinks=True)
        else:
            os.link(entry, target)


def extract(git_dir: str, tree_ish: str, out: Path) -> int:
    """The files of tree_ish into out (new), those whose blob is absent left out; symlinks as such."""
    if out.exists():
        print(f"k8stree.py: {out} exists: give a new directory", file=sys.stderr)
        return 2
    git = ["git", f"--git-dir={git_dir}"]
    ls = subprocess.run([*git, "ls-tree", "-r", "-z", tree_ish], capture_output=True, check=False)
    if ls.returncode != 0:
        print(f"k8stree.py: git ls-tree {tree_ish} in {git_dir}: {ls.stderr.decode(errors='replace').strip()}",
              file=sys.stderr)
        return 2
    entries = []
    for rec in ls.stdout.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob":  # (a submodule's commit has no files here)
            entries.append((mode.decode(), sha.decode(), path.decode()))
    cat = subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert cat.stdin is not None and cat.stdout is not None
    absent = []
    for mode, sha, path in entries:
        cat.stdin.write(sha.encode() + b"\n")
        cat.stdin.flush()
        head = cat.stdout.readline().split()
        if len(head) < 3:  # "<sha> missing"
            absent.append(path)
            continue
        data = cat.stdout.read(int(head[2]))
        cat.stdout.read(1)  # the newline after the contents
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(data.decode(), target)
        else:
            target.write_bytes(data)
            if mode == "100755":
                target.chmod(0o755)
    cat.stdin.close()
    cat.wait()
    print(f"k8stree.py: {out}: {len(entries) - len(absent)} files of {tree_ish}"
          + (f"; absent from the repository, left out: {', '.join(absent)}" if absent else ""))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "--extract":
        return extract(argv[1], argv[2], Path(argv[3]))
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    src, version, out = Path(argv[0]), argv[1], Path(argv[2])
    m = re.fullmatch(r"1\.(\d+)\.(\d+)", version)
    if not m:
        print(f"k8stree.py: VERSION {version!r}: give a release such as 1.36.2", file=sys.stderr)
        return 2
    staging_version = f"v0.{m.group(1)}.{m.group(2)}"
    if not (src / "vendor/modules.txt").is_file() or not (src / "staging/src/k8s.io").is_dir():
        print(f"k8stree.py: {src} is not a kubernetes source tree (vendor/modules.txt, staging/src/k8s.io)",
              file=sys.stderr)
        return 2
    if out.exists():
        print(f"k8stree.py: {out} exists: give a new directory", file=sys.stderr)
        return 2
    vendor = out / "vendor"
    gov = go_version(src / "go.mod")
    mods = third_party(src / "vendor/modules.txt")
    entries: list[tuple[str, str, str, list[str]]] = list(mods)
    link_tree(src / "vendor", vendor, {"modules.txt"})
    for d in sorted((src / "staging/src/k8s.io").iterdir()):
        path = f"k8s.io/{d.name}"
        link_tree(d, vendor / path)
        entries.append((path, staging_version, go_version(d / "go.mod") or gov, packages(d, path)))
    link_tree(src, vendor / "k8s.io/kubernetes", {"vendor", "staging", ".git", "_output", "go.work", "go.work.sum"})
    entries.append(("k8s.io/kubernetes", f"v{version}", gov, packages(src, "k8s.io/kubernetes")))
    entries.sort(key=lambda e: e[0])
    with open(out / "go.mod", "w") as f:
        f.write(f"module sigs.k8s.io/scheduler-plugins\n\ngo {gov}\n\nrequire (\n")
        for path, ver, _, _ in entries:
            f.write(f"\t{path} {ver}\n")
        f.write(")\n")
    with open(vendor / "modules.txt", "w") as f:
        for path, ver, mgo, pkgs in entries:
            f.write(f"# {path} {ver}\n## explicit{'; go ' + mgo if mgo else ''}\n")
            for p in pkgs:
                f.write(p + "\n")
    print(f"k8stree.py: {out}: {len(entries)} modules, k8s.io/kubernetes v{version}, go {gov}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
