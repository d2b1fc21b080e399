#!/usr/bin/env python3
"""Every golden case through the backend at one version: how far the reference engine agrees.

A maintainer's tool, not part of CI (README, "Backends"; dev/README.md, "Every golden case at
1.35"). Most golden cases are at other versions than the backend's, which skips them. This
copies ``cases/`` (or the directories given) into a temporary directory with every case's
``version`` set to the backend's (the minor its ``--info`` names, or ``--version``) and, in each variant, the variant's own
``version`` removed (a variant that then only replaces ``expect``, or changes nothing, is
dropped: it is its case again). Left out, and counted:

* a case (or variant) that expects an error (``expect.error``: kspread's own validation);
* one whose profile has extenders (in the case, or HTTP extenders of its configuration);
* one that is not valid at that version (the loader's error, printed with ``-v``: a plugin
  or gate the version does not have, a configuration of another API version, ...). An
  ``expect`` that is not valid there (a plugin the version does not score with) is dropped
  instead, as ``--compare`` compares the two schedulers' whole results, not the expectations.

Then it runs ``kspread run --backend BACKEND --compare`` over the copy (``FAIL`` lines are the
golden expectations, written for other versions, and are not shown: only ``DIFFER`` and the
summary).

    export PYTHONPATH=$PWD
    python3 dev/force-version.py --backend .backend-build/kspread-backend [--version 1.N] [--keep DIR] [-v]
                                 [--reruns N]

``--reruns N`` runs each case that differed N more times, alone (``--case``), and says in how
many of them it agreed: a case that agrees in some run is upstream's nondeterminism (a random
pick among tied nodes before 1.35's heap, the dry run's offset, the parallel search), one
that differs in every run is a difference to explain. The last line counts both.

The cases are rewritten from their data (PyYAML, keys in order): comments go, and line numbers
in the copy are not the originals'; the case names are (a variant keeps its name, ``[v1.13]``
included, although it now runs at the forced version).
"""

from __future__ import annotations

import argparse
import copy
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from kspread.errors import CaseError
from kspread.format.loader import CaseDoc, load_case, variant_data
from kspread.workflow.backend import BackendError, open_backend


def _load(file: Path, index: int, data: dict) -> tuple[Any, str | None]:
    """The case as the loader builds it, or None and the error."""
    doc = CaseDoc(str(file), index, 1, data, file.stem if index == 0 else f"{file.stem}-{index + 1}")
    try:
        return load_case(doc), None
    except CaseError as e:
        return None, str(e)


def _usable(file: Path, index: int, data: dict) -> tuple[dict | None, str]:
    """``data`` (its ``expect`` possibly dropped) when it runs at the forced version, else
    None; and why (or "")."""
    expect = data.get("expect")
    if isinstance(expect, dict) and "error" in expect:
        return None, "expects an error"
    case, err = _load(file, index, data)
    if case is None:
        # an expectation of another version (a plugin it scored with): not what is compared
        trimmed = {**data, "expect": {"unschedulable": False} if "pod" in data else {}}
        case, _ = _load(file, index, trimmed)
        if case is None:
            return None, f"invalid: {err}"
        data = trimmed
    if case.profile.extenders:
        return None, "extenders"
    return data, ""


def force(src: Path, dst: Path, version: str, verbose: bool) -> dict[str, int]:
    counts = {"cases": 0, "kept": 0, "expects an error": 0, "extenders": 0, "invalid": 0,
              "variant duplicates": 0}
    for f in sorted(src.rglob("*")):
        if f.suffix not in (".yaml", ".yml") or not f.is_file():
            continue
        out = dst / f.relative_to(src)
        try:
            docs = list(yaml.safe_load_all(f.read_text()))
        except yaml.YAMLError:
            continue
        if not any(isinstance(d, dict) and d.get("kind") == "Case" for d in docs):
            continue
        new: list[Any] = []
        for i, d in enumerate(docs):
            if not (isinstance(d, dict) and d.get("kind") == "Case"):
                new.append(d)
                continue
            d = copy.deepcopy(d)
            d["version"] = version
            variants = d.pop("variants", None) or {}
            name = d.get("name", f.stem)
            counts["cases"] += 1
            base, why = _usable(out, i, d)
            if base is None:
                counts[why.split(":")[0]] += 1
                counts["cases"] += len(variants)
                counts[why.split(":")[0]] += len(variants)
                if verbose:
                    print(f"left out {name} ({f}): {why}", file=sys.stderr)
                continue
            counts["kept"] += 1
            kept: dict[str, Any] = {}
            for vname, over in variants.items():
                counts["cases"] += 1
                over = {k: v for k, v in over.items() if k != "version"}
                if not {k for k in over if k != "expect"} \
                        or variant_data(d, over) == {k: v for k, v in d.items()}:
                    counts["variant duplicates"] += 1
                    continue
                vdata, why = _usable(out, i, variant_data(d, over))
                if vdata is None:
                    counts[why.split(":")[0]] += 1
                    if verbose:
                        print(f"left out {name}[{vname}] ({f}): {why}", file=sys.stderr)
                    continue
                if vdata.get("expect") != variant_data(d, over).get("expect"):
                    over["expect"] = vdata["expect"]
                counts["kept"] += 1
                kept[vname] = over
            if kept:
                base["variants"] = kept
            new.append(base)
        if any(isinstance(d, dict) and d.get("kind") == "Case" for d in new):
            out.write_text(yaml.safe_dump_all(new, sort_keys=False, allow_unicode=True))
        else:
            out.unlink()
    return counts


_DIFFER = re.compile(r"DIFFER (?P<name>.+) \((?P<file>.+):\d+\): ")
# a case whose verdict has no loaded case (``kspread run`` writes no ", version"): the backend
# failed on it (a BackendError: a timeout, a panic), so it was not compared
_NOT_COMPARED = re.compile(r"FAIL (?P<name>.+) \((?P<file>[^()]+):\d+\)$")
_AGREED = re.compile(r"agrees with it on (\d+) of (\d+) cases")


def rerun(backend: str, differed: list[tuple[str, str]], n: int) -> None:
    """Runs each differing case ``n`` more times alone and prints in how many it agreed."""
    nondeterministic = deterministic = 0
    for name, file in differed:
        agreed = ran = 0
        for _ in range(n):
            p = subprocess.run([sys.executable, "-m", "kspread", "run", "-q", "--backend", backend, "--compare",
                                "--case", name, file], capture_output=True, text=True, check=False)
            m = _AGREED.search(p.stdout)
            if m is None or m[2] != "1":
                continue
            ran += 1
            agreed += int(m[1])
        if ran == 0:
            print(f"RERUN {name}: did not run alone (--case)")
            continue
        if agreed:
            nondeterministic += 1
        else:
            deterministic += 1
        print(f"RERUN {name}: agreed in {agreed} of {ran} reruns"
              + (" (nondeterministic)" if agreed else " (every run differed)"))
    print(f"reruns: {nondeterministic} of {len(differed)} differing cases agreed in some run, "
          f"{deterministic} differed in every run")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", required=True, help="the backend program (backend/build.sh)")
    ap.add_argument("--version", help="the version to force (default: the backend's minor, from its --info)")
    ap.add_argument("--keep", help="write the copy here (an empty or new directory) and keep it")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each case left out, and why")
    ap.add_argument("--reruns", type=int, default=0, metavar="N",
                    help="run each case that differed N more times alone, and say in how many it agreed")
    ap.add_argument("paths", nargs="*", default=["cases"], help="case directories (default: cases)")
    args = ap.parse_args(argv)
    if args.version is None:
        try:
            args.version = f"1.{open_backend(args.backend).minor}"
        except BackendError as e:
            ap.error(str(e))

    tmp = None
    if args.keep:
        root = Path(args.keep)
        if root.exists() and any(root.iterdir()):
            ap.error(f"--keep {root}: not an empty directory")
    else:
        tmp = tempfile.TemporaryDirectory(prefix="kspread-force-")
        root = Path(tmp.name)
    try:
        total: dict[str, int] = {}
        dirs = []
        for p in args.paths:
            src = Path(p)
            dst = root / src.name
            shutil.copytree(src, dst, dirs_exist_ok=True)
            for k, v in force(src, dst, args.version, args.verbose).items():
                total[k] = total.get(k, 0) + v
            dirs.append(str(dst))
        print(f"{total['cases']} cases and variants; at {args.version}: {total['kept']} run, left out: "
              f"{total['expects an error']} expecting an error, {total['extenders']} with extenders, "
              f"{total['invalid']} not valid at {args.version}, {total['variant duplicates']} variants "
              "that were their case again", flush=True)
        p = subprocess.run([sys.executable, "-m", "kspread", "run", "--backend", args.backend, "--compare",
                            *dirs], capture_output=True, text=True, check=False)
        show = False
        differed: list[tuple[str, str]] = []
        failed = 0
        for line in p.stdout.splitlines():
            if line.startswith(("DIFFER", "ERROR")) or _NOT_COMPARED.match(line):
                show = True
                if (m := _DIFFER.match(line)) is not None:
                    differed.append((m["name"], m["file"]))
                elif line.startswith("FAIL"):
                    failed += 1
            elif not line.startswith("  "):
                show = False
            if show or " passed, " in line:
                print(line)
        if failed:
            print(f"not compared: {failed} case(s) the backend failed on (the FAIL lines above)")
        if p.stderr.strip():
            print(p.stderr.strip(), file=sys.stderr)
        if args.reruns > 0 and differed:
            rerun(args.backend, differed, args.reruns)
        return 0
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
