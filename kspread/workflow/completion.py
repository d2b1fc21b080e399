"""``kspread completion bash|zsh|fish``: a shell completion script, written from the
command line's own parser (its subcommands and their options), so it never falls
behind it. Install: ``kspread completion bash > ~/.local/share/bash-completion/completions/kspread``
(zsh: a file ``_kspread`` on ``$fpath``; fish: ``~/.config/fish/completions/kspread.fish``)."""

from __future__ import annotations

import argparse
import re


def _commands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, list[argparse.Action]]]:
    """Each subcommand: its help and its actions (options and positionals)."""
    out: dict[str, tuple[str, list[argparse.Action]]] = {}
    for action in parser._actions:  # argparse has no public walk of its parser tree
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                out[name] = (helps.get(name, ""), [a for a in sub._actions if not isinstance(a, argparse._HelpAction)])
    return out


def _plain(text: str | None, n: int = 70) -> str:
    """A description safe inside any shell's quotes and zsh's brackets."""
    s = re.sub(r"[\[\]:'\"\\`$]", "", " ".join((text or "").split()))
    return s if len(s) <= n else s[: n - 3] + "..."


def _flags(actions: list[argparse.Action]) -> list[str]:
    return [o for a in actions for o in a.option_strings] + ["--help"]


def bash(parser: argparse.ArgumentParser) -> str:
    cmds = _commands(parser)
    cases = []
    for name, (_, actions) in cmds.items():
        choices = [c for a in actions if not a.option_strings and a.choices for c in a.choices]
        words = " ".join(choices) if choices else ""
        cases.append(f"        {name}) opts='{' '.join(_flags(actions))}'; words='{words}' ;;")
    return f"""# bash completion for kspread (kspread completion bash)
_kspread() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{' '.join(cmds)} --help --version" -- "$cur"))
        return
    fi
    local opts="" words=""
    case "${{COMP_WORDS[1]}}" in
{chr(10).join(cases)}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [ -n "$words" ]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -o bashdefault -F _kspread kspread
"""


def zsh(parser: argparse.ArgumentParser) -> str:
    cmds = _commands(parser)
    described = "\n".join(f"        '{name}:{_plain(h)}'" for name, (h, _) in cmds.items())
    branches = []
    for name, (_, actions) in cmds.items():
        specs = []
        for a in actions:
            desc = _plain(a.help)
            if a.option_strings:
                takes = a.nargs != 0
                for o in a.option_strings:
                    specs.append(f"'{o}[{desc}]" + (":value:_files'" if takes else "'"))
            elif a.choices:
                specs.append(f"':{a.dest}:({' '.join(a.choices)})'")
            else:
                specs.append(f"'*:{a.dest}:_files'")
        branches.append(f"        {name}) _arguments {' '.join(specs)} ;;")
    return f"""#compdef kspread
# zsh completion for kspread (kspread completion zsh > _kspread, on $fpath)
_kspread() {{
    local -a commands
    commands=(
{described}
    )
    if (( CURRENT == 2 )); then
        _describe 'command' commands
        return
    fi
    shift words
    (( CURRENT-- ))
    case $words[1] in
{chr(10).join(branches)}
    esac
}}
if [ "$funcstack[1]" = "_kspread" ]; then
    _kspread "$@"  # autoloaded from $fpath
else
    compdef _kspread kspread  # sourced
fi
"""


def fish(parser: argparse.ArgumentParser) -> str:
    cmds = _commands(parser)
    lines = ["# fish completion for kspread (kspread completion fish > ~/.config/fish/completions/kspread.fish)",
             "complete -c kspread -f -n __fish_use_subcommand -l version -d 'print the version'"]
    for name, (h, actions) in cmds.items():
        lines.append(f"complete -c kspread -f -n __fish_use_subcommand -a {name} -d '{_plain(h)}'")
        seen = f"'__fish_seen_subcommand_from {name}'"
        for a in actions:
            desc = _plain(a.help)
            if a.option_strings:
                flags = " ".join(f"-l {o[2:]}" if o.startswith("--") else f"-s {o[1:]}" for o in a.option_strings)
                lines.append(f"complete -c kspread -n {seen} {flags}{' -r' if a.nargs != 0 else ''} -d '{desc}'")
            elif a.choices:
                lines.append(f"complete -c kspread -f -n {seen} -a '{' '.join(a.choices)}'")
    return "\n".join(lines) + "\n"


SHELLS = {"bash": bash, "zsh": zsh, "fish": fish}
