"""Text that kspread writes into YAML (an imported case, a golden update): every string
reads back as itself, and no text it did not mean as structure can become structure.

YAML breaks lines not only at ``\\n`` but at ``\\r``, U+0085 (NEL), U+2028 and U+2029, and
refuses characters it does not deem printable (most C0 and C1 controls, DEL, U+FFFE,
U+FFFF, lone surrogates). JSON's quoting escapes neither the three Unicode line breaks nor
the C1 controls, so a dump's file name or kind holding U+2028 written raw would end a
comment line and start a top-level key, or fold a quoted scalar into another string.
"""

from __future__ import annotations

import json
import re

# Characters that a YAML double-quoted scalar or a comment must not hold raw: the line
# breaks, and everything outside YAML's printable set (the BOM too, which a reader may
# take for a stream's start).
_UNSAFE = re.compile("[^\t\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def writable_raw(s: str) -> bool:
    """Whether ``s`` holds no line break and nothing YAML does not print: it may be
    written plain or single-quoted."""
    return _UNSAFE.search(s) is None


def double_quoted(s: str) -> str:
    """``s`` as a YAML double-quoted scalar (JSON's quoting, which YAML reads, with every
    line break and non-printable character escaped) that reads back as ``s``."""
    return _UNSAFE.sub(_escape, json.dumps(s, ensure_ascii=False))


def comment_text(s: str) -> str:
    """``s`` made safe to follow ``# `` on one comment line: a line break or a character
    YAML does not print is shown as its escape (``\\u2028``), never written raw."""
    return _UNSAFE.sub(_escape, s)
