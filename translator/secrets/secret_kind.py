"""What a secret kind is, and the two forms the hand-written kinds are built in.

A :class:`SecretKind` is a name (the marker's), a core for the one scan, an exact
pattern and an example; :mod:`translator.secrets.redact` masks with it, whether it
is hand-written (:mod:`translator.secrets.hand_written`) or gitleaks'
(:mod:`translator.secrets.gitleaks_kinds`). Apart from both because both make
kinds of it, and apart from the tables because :func:`by_prefix` and
:func:`by_name` are where the boundary rule and the linear-time reads of a
hand-written pattern are written once (see :mod:`translator.secrets.redact`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import orjson

#: a test of a match: the secret (its head read back, if any) and the match
Check = Callable[[bytes, re.Match[bytes]], bool]


@dataclass(frozen=True)
class SecretKind:
    name: str
    core: bytes  # what the scanner looks for: every exact match contains a match of it
    #: ``(?P<secret>…)``, or ``(?P<keep>…)(?P<secret>…)`` (no other groups): only the
    #: secret is replaced; with a ``check``, ``(…)(?P<secret>…)`` of any shape
    source: bytes
    #: text of this shape, as a user would paste it (docs, tests, and the scan
    #: database's self-test: its core must find it)
    example: str
    #: a test of the match, where a pattern would have to read the match again
    check: Check | None = None
    #: the JSON key the example sits under in a line (most sit in any text)
    key: str = "text"
    #: up to this many bytes of ``head_chars`` just before the secret group are the
    #: secret's too (read back from the match, so the pattern can begin with its
    #: literal)
    head: int = 0
    head_chars: bytes = b""
    #: the gitleaks rule it is translated from (translator/secrets/gitleaks.py); None: ours
    rule: str | None = None

    @property
    def probe(self) -> bytes:
        """The example as an encoded line holds it: what the core must find."""
        return orjson.dumps({self.key: self.example}) + b"\n"

    @cached_property
    def exact(self) -> re.Pattern[bytes]:
        # Compiled when a line first needs it: compiling all of them took ~8 ms
        # of every start, and most conversions mask nothing.
        return re.compile(self.source)

    @cached_property
    def cut(self) -> str:
        """How matches are cut out: ``sub``, ``split`` (both in C) or ``each``."""
        if self.check is not None or self.head:
            return "each"
        if self.in_c is None:
            raise ValueError(f"{self.name}: {self.source!r} has groups besides keep and secret")
        return self.in_c

    @cached_property
    def in_c(self) -> str | None:
        """How its pattern alone could be cut in C (``sub``, ``split``; None: no way)."""
        groups = self.exact.groupindex
        if self.head:
            return None
        if self.exact.groups == 1 and groups == {"secret": 1}:
            return "sub"
        if self.exact.groups == 2 and groups == {"keep": 1, "secret": 2}:
            return "split"
        return None


_ANY = rb"[\x00-\xff]"


def boundary(width: int, before: bytes = rb"[A-Za-z0-9]") -> bytes:
    """After a prefix ``width`` bytes long: the prefix does not follow a byte of
    ``before`` (an escape such as ``\\n``, two bytes in the line, counts as a break)."""
    n = b"{%d}" % width
    return rb"(?:(?<!" + before + _ANY + n + rb")|(?<=\\[nrtbf]" + _ANY + n + rb"))"


def _width(prefix: bytes) -> int:
    """The bytes a prefix pattern matches: a class ``[...]`` or an escape is one
    (no groups or repeats: a look-behind needs the width exact)."""
    flat = re.sub(rb"\[[^\]]*\]|\\.", b"x", prefix)
    assert not re.search(rb"[()|?*+{]", flat), prefix
    return len(flat)


def by_prefix(
    kind: str,
    prefixes: tuple[bytes, ...],
    body: bytes,
    example: str,
    check: Check | None = None,
    core: bytes | None = None,
) -> SecretKind:
    """A kind recognised by a literal prefix (alternatives begin with the same byte)
    and the body that follows it; the whole match is the secret."""
    core = core if core is not None else b"|".join(prefixes)
    lead = b"(?:" + b"|".join(p + boundary(_width(p)) for p in prefixes) + b")"
    return SecretKind(kind, core, rb"(?P<secret>" + lead + body + rb")", example, check)


# -- named secrets: NAME=value, NAME: value, "name": "value", --name=value --------
#
# A value bound to a name is masked in the line's own JSON (``"password":"…"``, the
# whole string), quoted in text (``password = "…"``, ``\"password\": \"…\"``), or
# unquoted (``password: …``, ``?password=…``). An unquoted value may be code or prose
# (``password: str``, ``password=self.password``, "the password: field is
# required"), so it needs a digit or a symbol; but after an upper-case name (.env
# files, shells, compose files: ``DB_PASSWORD=postgres``, ``POSTGRES_PASSWORD:
# postgres``) any value goes. Never a value that is a reference or a stand-in
# (``$VAR``, ``${VAR}``, ``<your key>``, ``***``, ``none``, ``string``).
#
# One pattern for the name in lower, camel or capitalised case, one in upper case;
# each begins with the name's second byte (``assword(?<=[Pp]assword)``), a literal.
#
# Linear time: an unquoted value is read as (plain characters)(a digit or symbol)
# (the rest), each part possessive; ``:`` and ``=`` are symbols, so a run of plain
# characters that fails holds no ``name=``/``name:`` to be tried again.

_VCHAR = rb"""[^\s"'\\,;&()<>\[\]{}`]"""
_PLAIN = rb"""[^\s"'\\,;&()<>\[\]{}`0-9!@#$%^*+=?~|:]"""
_STRONG = rb"[0-9!@#$%^*+=?~|:]"
#: a reference or a stand-in: ``$VAR``, ``${VAR}``, ``%VAR%``, ``<your key>``, ``***``
#: (a value whose first byte begins none of them is let through at once)
_REFERENCE = (
    rb"(?:(?![$<{%*.\[yYeEcCpPxX])|(?![$<{%]|\*{3}|\.{3}|\[(?i:redacted)"
    rb"|(?i:your[ _-]|example|changeme|placeholder|x{4})))"
)
#: a value that is a word of code or docs (an unquoted value with a digit or a
#: symbol is none of them: only quoted and upper-case-name values are tested)
_WORD = (
    rb"(?:(?![nNtTfFuUsSiIbBoOrRhHmMpP])|(?!(?i:n(?:one|ull|il)|t(?:rue|oken)|false"
    rb"|undefined|s(?:tring|tr|ecret)|int|bytes|optional|re(?:quired|dacted)|hidden"
    rb"|masked|password)(?!" + _VCHAR + rb")))"
)
_STAND_IN_FREE = _REFERENCE + _WORD


def _values(min_len: int, spaces: bool) -> tuple[bytes, bytes]:
    """A value bound to a name, in lower/camel case (``secret``) and after an
    upper-case name (``env``, any value: a branch that comes first)."""
    n = b"%d" % min_len
    free = _STAND_IN_FREE
    # (never across a marker: a secret masked before stays its own)
    json = (
        rb'(?:[^"\\\[]++|\\.|\[(?!REDACTED:))++'
        if spaces
        else rb'(?:[^"\\ \[]++|\\.|\[(?!REDACTED:))++'
    )
    qchar = rb"(?:[^\"'\\\[]|\[(?!REDACTED:))" if spaces else rb"[^\s\"'\\\[]"
    # cheap tests first: most names followed by words fail at the first
    secret = (
        rb'(?<=":")(?=[^"]{'
        + n
        + b"})"
        + free
        + json
        + rb'(?=")'
        + rb"|(?<=[\"'])(?="
        + qchar
        + b"{"
        + n
        + b"})"
        + free
        + qchar
        + b"{"
        + n
        + b",}+"
        + rb"|(?<![\"'])(?="
        + _PLAIN
        + rb"*+"
        + _STRONG
        + rb")"
        + _REFERENCE
        + _VCHAR
        + b"{"
        + n
        + b",}+"
    )
    env = (
        rb"(?<=[A-Z0-9]=)"
        + free
        + _VCHAR
        + b"{"
        + n
        + b",}+"
        + rb"|(?<=[A-Z0-9]: )"
        + free
        + _VCHAR
        + b"{"
        + n
        + b",}+|"
    )
    return secret, env


# -- the space form: an option or a config key, then its value --------------------
#
# What people type on a command line: ``--db-password V``, ``-Password V``
# (PowerShell), ``--api-key "V"``, ``"--token", "V"`` (an argv list, in JSON or
# Python), and a CLI's configuration set by name: ``aws configure set
# aws_secret_access_key V``, ``npm config set //registry/:_authToken V``, ``git config
# --global github.token V``. The name ends the option or key (``--token-file PATH``,
# ``--password-stdin``, ``--api-key-env NAME`` are other options), and the value is
# the ``=`` form's (above): a quoted one always, an unquoted one with a digit or a
# symbol, never a reference or a stand-in; and never the next option (``-…``) nor a
# path (``--private-key ~/.ssh/id``: the file the secret is in).
#
# Both begin with a literal (``-``, ``config``) that starts a word (one candidate a
# word: ``-a-a-a…`` is read once), read the word to where the name ends it, and run
# the name-first patterns' own name (``mixed``/``upper``) from the byte before it.

#: an option's name that ends in a secret's but is a flag, no value after it
#: (``--no-password``, ``--ask-pass``, ``--with-token`` reads stdin)
_FLAG = (
    rb"(?!(?:no|ask|with|without|show|print|prompt|skip|generate|random|read|require"
    rb"|allow|disable|enable|save|store|forget|stdin)[_-])"
)
#: a quote, escaped once or more (JSON in a string), around the name or the value
_QUOTE = rb"""(?:(?:\\\\)*+\\?["'])"""
#: what stands between the name and its value: spaces (a quote on either side), or
#: an argv list's ``", "``
_SPACE_OP = (
    rb"(?>" + _QUOTE + rb"?+ ++" + _QUOTE + rb"?+|" + _QUOTE + rb" {0,8}+, {0,8}+" + _QUOTE + b")"
)
#: the core's: the name, a closing quote, then a space or a comma
_SPACE_CORE = rb"""(?:(?:\\\\)*\\?["'])?[ ,]"""
#: a value that is the next option or a path is no secret
_NOT_OPTION_OR_PATH = rb"(?!-|~?/|\.\.?/)"
_CONFIG_KEY = rb"[A-Za-z0-9_./:@-]"


def _space_forms(
    kind: str, core: bytes, name: bytes, secret: bytes, example: str
) -> tuple[SecretKind, SecretKind]:
    """``--NAME value`` and ``config[ure] [set] NAME value`` (see above); ``name``:
    the name from its second byte on, both casings."""
    tail = rb"[A-Za-z]" + name
    value = rb")(?P<secret>" + _NOT_OPTION_OR_PATH + rb"(?:" + secret + rb"))"
    option = (
        rb"(?P<keep>-"
        + boundary(1, rb"[A-Za-z0-9_-]")
        + rb"-?+"
        + _FLAG
        # (first, in C: the word is followed by a value at all; most are not)
        + rb"(?=[A-Za-z0-9_-]*+"
        + _SPACE_OP
        + rb"(?!-))"
        + rb"[A-Za-z0-9_-]*?"
        + tail
        + rb"(?![A-Za-z0-9_-])"
        + _SPACE_OP
        + value
    )
    # (up to three words between: ``set``, ``--global``, ``--profile dev``)
    config = (
        rb"(?P<keep>config"
        + boundary(6, rb"[A-Za-z0-9_]")
        + rb"(?:ure)?+(?: ++(?!config)[^\s\"'\\]++){0,3}? ++"
        + _QUOTE
        + rb"?+"
        + _CONFIG_KEY
        + rb"*?"
        + tail
        + rb"(?!"
        + _CONFIG_KEY
        + rb")"
        + _SPACE_OP
        + value
    )
    space_core = rb"(?i:" + core + rb")" + _SPACE_CORE
    spaced = _spaced(example, core)
    return (
        SecretKind(kind, space_core, option, f"./deploy --{spaced} --verbose"),
        SecretKind(kind, space_core, config, f"tool config set {spaced}"),
    )


#: ``name=value``, ``name: value``, ``"name": "value"`` in an example
_BOUND = re.compile(r"""([A-Za-z][A-Za-z0-9_-]*)["']? {0,8}[:=] {0,8}["']?([^"';\s]+)""")


def _spaced(example: str, core: bytes) -> str:
    """The name-first example's ``NAME=value`` as ``name value`` (the name kebab-case,
    as an option spells it)."""
    ends = re.compile(rb"(?i:" + core + rb")$")
    for m in _BOUND.finditer(example):
        if ends.search(m[1].encode()):
            return m[1].lower().replace("_", "-") + " " + m[2]
    raise ValueError(f"no NAME=value of {core!r} in {example!r}")


def by_name(
    kind: str,
    core: bytes,
    mixed: bytes,
    upper: bytes,
    example: str,
    min_len: int = 8,
    spaces: bool = False,
    value: bytes | None = None,
    with_op: bool = False,
) -> tuple[SecretKind, ...]:
    """A secret known by the name it is bound to. ``core``: the name, any case;
    ``mixed`` and ``upper``: the name in lower/camel/capitalised and in upper case,
    from a literal on. The name may end a longer one (``DB_PASSWORD``,
    ``dbPassword``, ``--db-password``). ``value``: a pattern of the value's own
    shape, taken in every form. Four kinds: the name then ``=``/``:`` in each
    casing, then the space forms (an option, a config key)."""
    # The name is the core (a core that reads on, to the "=", costs Hyperscan ~10x on
    # a line full of names); one as common in lines as "token" (``input_tokens``)
    # takes its operator along.
    # (a quote escaped once, as JSON text in a string, or more: JSON in a string
    # of JSON in a string, as a tool's output quoting a command's holds it)
    quote = rb"""(?:(?:\\\\)*+\\?["'])?+"""
    any_quote = rb"""(?:(?:\\\\)*\\?[\"'])?"""  # (the core's: Hyperscan has no possessives)
    named = rb"(?i:" + core + rb")" + (any_quote + rb" {0,8}(?::=|=>|[:=])" if with_op else b"")
    # what follows the name, read once (atomic: never tried again shorter)
    keep = rb"""(?>":"|""" + quote + rb" {0,8}+(?::=|=>|[:=]) {0,8}+" + quote + b")"
    if value is not None:
        secret, env = value, b""
    else:
        secret, env = _values(min_len, spaces)
    return (
        SecretKind(
            kind, named, rb"(?P<keep>" + mixed + keep + rb")(?P<secret>" + secret + b")", example
        ),
        SecretKind(
            kind,
            named,
            rb"(?P<keep>" + upper + keep + rb")(?P<secret>" + env + secret + b")",
            example,
        ),
        *_space_forms(kind, core, rb"(?:" + mixed + b"|" + upper + b")", secret, example),
    )
