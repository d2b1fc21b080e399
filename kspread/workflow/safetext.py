"""Text from a case, an extender or a backend, made safe for the place it is printed.

A case under review is untrusted input: its name, description, file name and the
texts an extender or a backend answers reach a CI log, a terminal, a pull-request
comment. Each sink has its function here, and every output path of kspread goes
through one of them:

- ``line`` / ``lines``: the terminal and the CI log (``kspread run``, ``validate``,
  ``explain``, ``diff``, ``import`` messages, pytest's reports). A control character
  (C0 but for the line breaks ``lines`` keeps, DEL, C1, ESC among them), a Unicode line
  or paragraph separator and a bidirectional override or isolate is shown escaped
  (``\\x1b``, ``\\u202e``); ``line`` shows a line break as ``\\n``. A line whose first
  non-blank characters are ``::`` (a GitHub workflow command, which the runner reads
  after leading blanks) starts with a backslash instead, and ``##[`` (the runner's older
  command form, read anywhere in a line) is written ``##\\[``.
- ``md_inline`` / ``md_plain`` / ``md_html`` / ``md_block``: GitHub-flavoured markdown.
  Inline text is a code span (``md_plain``: unless it holds only letters, digits and a
  few punctuation marks; ``md_html``: ``<code>`` inside an HTML element), a block a
  fenced code block: GitHub renders no mention, link, image, HTML or emoji inside them.
- ``gh_data`` / ``gh_property``: a workflow command's message and property values,
  escaped as the runner unescapes them (``%``, CR, LF; in a property also ``:`` and ``,``).
- ``xml_text`` / ``xml_attr``: an XML document's text and attribute values (the JUnit
  report): ``lines`` / ``line`` text, any character XML 1.0 forbids (a lone surrogate,
  U+FFFE, U+FFFF) shown escaped, then XML-escaped.
- ``json_text``: JSON that kspread printed: ``##[`` inside its strings written ``##\\u005b``.
"""

from __future__ import annotations

import html
import io
import json
import re
import sys
from typing import Any

from kspread.errors import UNPRINTABLE, UNPRINTABLE_RE, escape_unprintable

# kspread.errors.UNPRINTABLE (C0, DEL, C1, separators, bidi controls) but the line feed
_BLOCK_UNSAFE = re.compile(f"(?!\n)[{UNPRINTABLE}]")


def unsafe(text: str) -> re.Match[str] | None:
    """The first character ``line`` would escape (a line break included), or None."""
    return UNPRINTABLE_RE.search(text)


def _no_command_start(line: str) -> str:
    """A backslash before ``::`` that begins the line after blanks (the runner trims them)."""
    stripped = line.lstrip()
    if not stripped.startswith("::"):
        return line
    cut = len(line) - len(stripped)
    return line[:cut] + "\\" + stripped


def _neutral(line: str) -> str:
    return _no_command_start(line.replace("##[", "##\\["))


def line(text: Any) -> str:
    """One line of terminal or log output: nothing in it breaks the line, moves the
    cursor, colours or reorders text, or is a workflow command."""
    return _neutral(escape_unprintable(str(text), UNPRINTABLE_RE))


def lines(text: Any) -> str:
    """Lines of terminal or log output (a report kspread wrote, holding case text): each
    line as ``line`` makes it, the line breaks kept (CR LF read as a line break)."""
    s = str(text).replace("\r\n", "\n")
    return "\n".join(_neutral(x) for x in escape_unprintable(s, _BLOCK_UNSAFE).split("\n"))


def md_inline(text: Any) -> str:
    """Markdown inline text (a table cell too): a code span of ``line`` text, its pipes
    escaped for GFM tables."""
    s = line(text)
    if not s:
        return ""
    ticks = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (ticks + 1)
    pad = " " if s[0] == "`" or s[-1] == "`" or (s[0] == " " and s[-1] == " " and s.strip()) else ""
    return f"{fence}{pad}{s}{pad}{fence}".replace("|", "\\|")


_MD_PLAIN = re.compile(r"[A-Za-z0-9 ,.;:()'=+-]*")


def md_plain(text: Any) -> str:
    """Markdown inline text that reads as prose when it can: as it is when it holds only
    letters, digits, spaces and ``,.;:()'=+-`` (nothing markdown or GitHub reads as markup,
    a mention, a link or HTML), else ``md_inline``."""
    s = str(text)
    return s if _MD_PLAIN.fullmatch(s) else md_inline(s)


def md_html(text: Any) -> str:
    """Text inside an HTML element of a markdown document (``<summary>``): a ``<code>``
    element, its text HTML-escaped."""
    return f"<code>{html.escape(line(text), quote=False)}</code>"


def md_block(text: Any) -> str:
    """A fenced code block of ``lines`` text: longer fences than any run of backticks in it."""
    s = lines(text)
    ticks = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * max(3, ticks + 1)
    return f"{fence}text\n{s}\n{fence}"


def html_text(text: Any) -> str:
    """Text of an HTML page: ``lines`` text (a control character or a bidi override shown
    escaped), HTML-escaped."""
    return html.escape(lines(text), quote=True)


# characters XML 1.0 allows (its production Char); ``lines`` has already escaped the controls
_XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_allowed(text: str) -> str:
    return _XML_FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def xml_text(text: Any) -> str:
    """An XML element's text: ``lines`` text (its line breaks kept), any character XML 1.0
    forbids shown escaped (``\\udcff``), ``&``, ``<``, ``>`` and quotes escaped."""
    return html.escape(_xml_allowed(lines(text)), quote=True)


def xml_attr(text: Any) -> str:
    """An XML attribute's value (written between double quotes): ``line`` text (a line
    break shown as ``\\n``: a parser would read it as a blank), as ``xml_text``."""
    return html.escape(_xml_allowed(line(text)), quote=True)


def gh_data(text: Any) -> str:
    """A workflow command's message: ``lines`` text (its line breaks kept, as GitHub shows
    a multi-line annotation), then escaped as the runner unescapes it."""
    return lines(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(text: Any) -> str:
    """A workflow command's property value (``file``, ``title``): ``line`` text, then
    ``%``, CR, LF, ``:`` and ``,`` escaped."""
    s = line(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return s.replace(":", "%3A").replace(",", "%2C")


def json_text(text: str) -> str:
    """JSON text kspread dumped (``ensure_ascii``: every control character escaped by
    JSON already): ``##[`` can only be inside a string, where ``\\u005b`` reads as ``[``."""
    return text.replace("##[", "##\\u005b")


def say(text: Any, file: Any = None) -> None:
    """Print kspread's text, which may hold a case's, an extender's or a backend's, to
    the terminal or log (``lines``); ``file`` defaults to standard output."""
    print(lines(text), file=file if file is not None else sys.stdout)


def print_json(data: Any, file: Any = None) -> None:
    """Print a JSON report (indented) as ``json_text``."""
    out = file if file is not None else sys.stdout
    out.write(json_text(json.dumps(data, indent=2)) + "\n")


class Lines(io.TextIOBase):
    """A text stream that passes each line written to it on as ``lines`` makes it: for
    messages printed by code that prints for itself (``kspread import``'s, to standard error)."""

    def __init__(self, out: Any) -> None:
        super().__init__()
        self.out = out
        self.pending = ""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        head, sep, self.pending = (self.pending + s).rpartition("\n")
        if sep:
            self.out.write(lines(head) + "\n")
        return len(s)

    def flush(self) -> None:
        if self.pending:
            self.out.write(lines(self.pending))
            self.pending = ""
        self.out.flush()


class CommandGuard(io.TextIOBase):
    """The stream a terminal renderer (rich) writes to: passed on as written (its colours
    and cursor moves are its own), but a line that would begin with ``::`` after blanks
    (where the renderer folded a long line of ``line``/``lines`` text) gets a backslash
    before it. Line starts are tracked across writes; CR starts a line too, as the runner
    reads it."""

    def __init__(self, out: Any) -> None:
        super().__init__()
        self.out = out
        self.at_start = True

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(self.out.isatty())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.out, "encoding", None) or "utf-8"

    def write(self, s: str) -> int:
        pieces = re.split(r"(\r\n|\r|\n)", s)
        out = []
        for i, piece in enumerate(pieces):
            if i % 2:  # a line break
                out.append(piece)
                self.at_start = True
                continue
            if self.at_start:
                piece = _no_command_start(piece)
            if piece.strip():
                self.at_start = False
            out.append(piece)
        self.out.write("".join(out))
        return len(s)

    def flush(self) -> None:
        self.out.flush()
