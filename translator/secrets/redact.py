"""Secrets masked on the way out: every encoded line, whatever its shape or sink.

The unified stream leaves the machine (dashboards, CI logs, eval harnesses), so no
key, token or password may ride on it. The masker works on the *encoded* line:
orjson writes a string's secret-like characters (letters, digits, ``-_./+=:@``)
as they are, so a secret in any string, at any depth, is the same bytes in the
line. Each kind's pattern stays inside one JSON string (no unescaped quote can
match), so the masked line is still valid JSON, and the marker keeps the kind:
``[REDACTED:aws_access_key]``. docs/security.md lists every kind and form.

Each kind has a *core*: a pattern every match of its exact pattern contains, in the
syntax both Python's ``re`` and Hyperscan take. The cores go into the one scan every
line gets anyway (:mod:`translator.secrets.scan`); only a line a core hit runs that kind's
exact patterns. Exact patterns begin with one literal, so ``re`` skips to candidates
at memchr speed (a choice of first bytes, ``[Pp]assword``, makes it try every byte:
~40x slower): the left-boundary test is a look-behind placed *after* the literal,
and a name is written once per casing (``password``, ``Password``, ``PASSWORD``).

**Where a secret may start** (the boundary rule). A kind recognised by its prefix
(``ghp_``, ``sk-ant-``, ``AKIA``, ``glpat-``, ``AIza``, ``xoxb-``, ...) starts where
the prefix does not follow an ASCII letter or digit: after ``= / . + - _ : @``, a
quote, a space or a JSON escape such as ``\\n``, so ``TOKEN=ghp_…``,
``/secrets/xoxb-…`` and ``foo_ghp_…`` are all masked, while ``task-runner`` holds no
``sk-`` key. Two kinds have no prefix of their own and start only where a run of
their characters starts (not after a letter, a digit, ``-`` or ``_``): JWTs and
Discord bot tokens.

**Linear time, whatever the line.** A pattern is tried at every candidate, and a
line can be megabytes of candidates (``sk-sk-sk-…``). So after the literal every
pattern either fails within a bounded number of bytes, or succeeds and consumes
what it read, or fails having read a run that holds no other candidate (possessive
quantifiers, ``*+``: nothing is read twice). The one test that would have to read a
long run again (does this ``sk-`` run hold a digit?) is made in Python on the match
(:attr:`SecretKind.check`).

**Cut in C.** A line can also be megabytes of short secrets (``password=a1b2 …``),
and a Python call per match costs more than the rest of a line's conversion. So a
pattern is either the secret and nothing else (``re.sub`` with the marker), or
``(?P<keep>…)(?P<secret>…)`` (``re.split``, then every secret piece swapped for the
marker); only the few kinds with a Python check go match by match, and those at
most :data:`CHECKED` matches a line (a line with more is a flood: all its matches
are masked, unchecked, in C).

**gitleaks' kinds.** ~170 more kinds are gitleaks' rule set, translated by
:mod:`translator.secrets.gitleaks` into this design (a literal start, a core, bounded or
possessive reads) and loaded from ``secrets/gitleaks.kinds.json`` (:data:`GITLEAKS`):
they run between the shapes above and the contexts (``Bearer``, URLs, names).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

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


def _lead(width: int, before: bytes = rb"[A-Za-z0-9]") -> bytes:
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


def _run(
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
    lead = b"(?:" + b"|".join(p + _lead(_width(p)) for p in prefixes) + b")"
    return SecretKind(kind, core, rb"(?P<secret>" + lead + body + rb")", example, check)


_DIGIT = re.compile(rb"[0-9]")
_SEGMENT16 = re.compile(rb"[A-Za-z0-9]{16}")


def _random(secret: bytes, m: re.Match[bytes]) -> bool:
    """A digit somewhere and 16 letters or digits in a row: a random token, not
    hyphenated words (``sk-learn-compatible-estimator-v2``)."""
    return _DIGIT.search(secret) is not None and _SEGMENT16.search(secret) is not None


#: look-aheads (read a run that holds no candidate: see the docstring)
_HAS_DIGIT = rb"(?=[^0-9\s\"\\]*+[0-9])"
_HAS_LETTER = rb"(?=[^A-Za-z\s\"\\]*+[A-Za-z])"

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

_SEP = rb"""(?:\\?["'])? {0,8}(?::=|=>|[:=]) {0,8}"""
_OPEN = rb"""\\?["']"""
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


def _named(
    kind: str,
    core: bytes,
    mixed: bytes,
    upper: bytes,
    example: str,
    min_len: int = 8,
    spaces: bool = False,
    value: bytes | None = None,
    with_op: bool = False,
) -> tuple[SecretKind, SecretKind]:
    """A secret known by the name it is bound to. ``core``: the name, any case;
    ``mixed`` and ``upper``: the name in lower/camel/capitalised and in upper case,
    from a literal on. The name may end a longer one (``DB_PASSWORD``,
    ``dbPassword``, ``--db-password``). ``value``: a pattern of the value's own
    shape, taken in every form."""
    # The name is the core (a core that reads on, to the "=", costs Hyperscan ~10x on
    # a line full of names); one as common in lines as "token" (``input_tokens``)
    # takes its operator along.
    core = rb"(?i:" + core + rb")" + (rb"(?:\\?[\"'])? {0,8}(?::=|=>|[:=])" if with_op else b"")
    # what follows the name, read once (atomic: never tried again shorter)
    keep = rb"""(?>":"|(?:\\?["'])?+ {0,8}+(?::=|=>|[:=]) {0,8}+(?:\\?["'])?+)"""
    if value is not None:
        secret = value
        env = b""
    else:
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
    return (
        SecretKind(
            kind, core, rb"(?P<keep>" + mixed + keep + rb")(?P<secret>" + secret + b")", example
        ),
        SecretKind(
            kind,
            core,
            rb"(?P<keep>" + upper + keep + rb")(?P<secret>" + env + secret + b")",
            example,
        ),
    )


_T = rb"[A-Za-z0-9_-]"  # a token character (base64url)
_END = rb"(?![A-Za-z0-9_-])"
_PEM = rb"[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_B64 = rb"[A-Za-z0-9+/]{16,}+={0,2}"
_PEM_EXAMPLE = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6QFAKEFAKEFAKEFAKE\n"
    "q7R8s9T0u1V2w3X4y5Z6a7B8c9D0e1F2g3H4i5J6k7L8m9N0FAKEFAKEFAKEFAKE\n"
    "-----END RSA PRIVATE KEY-----"
)
_PPK_EXAMPLE = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: planted-test-key\n"
    "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIFAKEfakeFAKEfakePublicKey0123456789abcd\n"
    "Private-Lines: 1\nAAAAIFAKEfakeFAKEfakePrivateKeyMaterial0123456789abcdefgh\n"
    "Private-MAC: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

#: a stretch of a URL password between two "@" (a marker is never taken in)
_URL_PART = rb'(?:[^\s/"\\@\[]++|\[(?!REDACTED:))*+'

# In the order they are applied: a specific kind before a general one (an Anthropic
# key before the generic sk- form, a JWT before the bearer token that carries it, a
# kind with a shape before a value known only by its name, which then sees the
# marker and leaves it). gitleaks' kinds come between the shapes and the contexts.
_SHAPES: tuple[SecretKind, ...] = (
    # The whole block, to its END line, or to the end of the string if it was cut.
    SecretKind(
        "private_key",
        rb"PRIVATE KEY",
        rb"(?P<secret>-----BEGIN " + _PEM + rb'(?:[^"\\-]++|\\.|-(?!----END ))*+'
        rb"(?:-----END " + _PEM + rb")?)",
        _PEM_EXAMPLE,
    ),
    # PuTTY .ppk: the lines after "Private-Lines: N", to Private-MAC.
    SecretKind(
        "private_key",
        rb"Private-Lines:",
        rb"(?P<keep>Private-Lines: *[0-9]{1,4}(?:\\r)?\\n)(?P<secret>"
        rb"[A-Za-z0-9+/=]++(?:(?:\\r)?\\n(?!Private-)[A-Za-z0-9+/=]++)*+)",
        _PPK_EXAMPLE,
    ),
    # A key's lines as separate damaged-line fragments (lines of a file that are
    # not JSON): a fragment that is a base64 line and nothing else.
    SecretKind(
        "private_key",
        rb'"fragment":"[A-Za-z0-9+/]{8}',
        rb'(?P<keep>"fragment":")(?P<secret>'
        + _HAS_DIGIT
        + _HAS_LETTER
        + rb'[A-Za-z0-9+/]{8,}+={0,2})(?=(?:\\r)?")',
        "MIIEpAIBAAKCAQEA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6QFAKEFAKEFAKEFAKE",
        key="fragment",
    ),
    # kubeconfig: the client's private key, base64 of its PEM block.
    *_named(
        "private_key",
        rb"client[_-]?key[_-]?data",
        rb"lient(?<=[Cc]lient)[_-]?[Kk]ey[_-]?[Dd]ata",
        rb"LIENT(?<=CLIENT)[_-]?KEY[_-]?DATA",
        "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpGQUtF",
        value=_B64,
    ),
    _run(
        "anthropic_api_key",
        (rb"sk-ant-",),
        _T + rb"{20,}+",
        "sk-ant-api03-Zq8vR2mK7xT4pL9wN3bH6cJ1dF5gS0aE2yU8iO4kM7nB3vC9xZ1qW5eR7tY",
    ),
    # Not an Anthropic key (masked before), and random (see _random).
    _run(
        "openai_api_key",
        (rb"sk-",),
        rb"(?!ant-)" + _T + rb"{20,}+",
        "sk-proj-4fT9kL2mN8pQ1rS6tV3wX7yZ0aB5cD9eF2gH6iJ1kL4mN8oP3qR7sT0uV5wX9y",
        _random,
        core=rb"sk-",
    ),
    _run(
        "aws_access_key",
        (rb"AKIA", rb"ASIA", rb"ABIA", rb"ACCA"),
        rb"[A-Z0-9]{16}(?![A-Za-z0-9])",
        "AKIAZ7QW3RTYUIOP4ASD",
    ),
    # A secret access key has no prefix of its own: only after its name.
    *_named(
        "aws_secret_key",
        rb"secret[_-]?access[_-]?key",
        rb"ecret(?<=[Ss]ecret)[_-]?[Aa]ccess[_-]?[Kk]ey",
        rb"ECRET(?<=SECRET)[_-]?ACCESS[_-]?KEY",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY9FAKEKEYQQ",
        value=rb"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
    ),
    *_named(
        "aws_secret_key",
        rb"aws[_-]?secret[_-]?key",
        rb"ws(?<=[Aa]ws)[_-]?[Ss]ecret[_-]?[Kk]ey",
        rb"WS(?<=AWS)[_-]?SECRET[_-]?KEY",
        "AWS_SECRET_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY9FAKEKEYQQ",
        value=rb"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
    ),
    _run(
        "aws_session_token",
        (rb"FwoGZXIvYXdz",),
        rb"[A-Za-z0-9/+=]{60,}+",
        "FwoGZXIvYXdzEFAKEaDFAKEfakeSessionTokenForTestsOnly0123456789abcdefghij"
        "klmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+fakeFAKE==",
    ),
    _run(
        "aws_session_token",
        (rb"IQoJb3JpZ2lu",),
        rb"[A-Za-z0-9/+=]{60,}+",
        "IQoJb3JpZ2luX2VjEFAKEaDFAKEfakeSessionTokenForTestsOnly0123456789abcdefghij"
        "klmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+fakeFAKE==",
    ),
    *_named(
        "aws_session_token",
        rb"session[_-]?token",
        rb"ession(?<=[Ss]ession)[_-]?[Tt]oken",
        rb"ESSION(?<=SESSION)[_-]?TOKEN",
        "AWS_SESSION_TOKEN=FAKEfakeSessionToken0123456789abcdefghij",
        value=rb"[A-Za-z0-9/+=%]{16,}+",
    ),
    _run(
        "github_token",
        (rb"gh[pousr]_",),
        rb"[A-Za-z0-9]{36,}+",
        "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0nlyAbCdEf",
        core=rb"gh[pousr]_",
    ),
    _run(
        "github_token",
        (rb"github_pat_",),
        rb"[A-Za-z0-9_]{22,}+",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
    ),
    _run(
        "gitlab_token",
        (
            rb"glpat-",
            rb"glptt-",
            rb"glcbt-",
            rb"gloas-",
            rb"glffct-",
            rb"glimt-",
            rb"gldt-",
            rb"glrt-",
            rb"glsoat-",
            rb"glagent-",
        ),
        _T + rb"{20,}+(?:\." + _T + rb"++)*+",
        "glpat-Xy9Zk3Lm7Qp2Rs5Tv8Wz",
        core=rb"gl(?:pat|dt|rt|ptt|cbt|oas|soat|ffct|imt|agent)-",
    ),
    _run(
        "slack_webhook",
        (rb"https://hooks\.slack\.com/",),
        rb"(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}+",
        "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX",
        core=rb"hooks\.slack\.com/",
    ),
    _run(
        "slack_token",
        (rb"xox[abcdeoprs]-",),
        rb"[A-Za-z0-9-]{10,}+",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        core=rb"xox[abcdeoprs]-",
    ),
    _run(
        "slack_token",
        (rb"xapp-",),
        rb"[A-Za-z0-9-]{20,}+",
        "xapp-1-A0123ABCDEF-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    ),
    _run(
        "stripe_key",
        (rb"sk_live_", rb"sk_test_"),
        rb"[A-Za-z0-9]{16,}+",
        "sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
        core=rb"sk_(?:live|test)_",
    ),
    _run(
        "stripe_key",
        (rb"rk_live_", rb"rk_test_"),
        rb"[A-Za-z0-9]{16,}+",
        "rk_test_51HxYzAbCdEfGhIjKlMnOpQr",
        core=rb"rk_(?:live|test)_",
    ),
    _run(
        "stripe_webhook_secret",
        (rb"whsec_",),
        rb"[A-Za-z0-9]{24,}+",
        "whsec_FAKEfake0123456789abcdefFAKEfake01",
    ),
    _run(
        "google_api_key",
        (rb"AIza",),
        _T + rb"{35}" + _END,
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    ),
    _run(
        "google_oauth_token",
        (rb"ya29\.",),
        _T + rb"{20,}+",
        "ya29.a0AfH6SMBx7Yz3Kq9Lm2Np5Rs8Tv1Wx4Yz7Ab0Cd3Ef6Gh",
    ),
    _run(
        "google_oauth_client_secret",
        (rb"GOCSPX-",),
        _T + rb"{24,}+",
        "GOCSPX-FAKEfake0123456789abcdefABCD",
    ),
    *_named(
        "gcp_private_key_id",
        rb"private[_-]?key[_-]?id",
        rb"rivate(?<=[Pp]rivate)[_-]?[Kk]ey[_-]?[Ii]d",
        rb"RIVATE(?<=PRIVATE)[_-]?KEY[_-]?ID",
        '"private_key_id": "0123456789abcdef0123456789abcdeffedcba98"',
        value=rb"[0-9a-f]{40}(?![0-9a-f])",
    ),
    _run(
        "npm_token",
        (rb"npm_",),
        rb"[A-Za-z0-9]{36}(?![A-Za-z0-9])",
        "npm_FAKEfake0123456789abcdefghijklmnopqr",
    ),
    # Mixed case: hf_ + 34 letters or digits that are not an identifier.
    _run(
        "huggingface_token",
        (rb"hf_",),
        rb"(?=[a-z0-9]*+[A-Z])(?=[A-Z0-9]*+[a-z])[A-Za-z0-9]{34,}+",
        "hf_FAKEfakeAbCdEfGhIjKlMnOpQrStUvWxYz",
    ),
    _run(
        "pypi_token",
        (rb"pypi-",),
        rb"Ag" + _T + rb"{50,}+",
        "pypi-AgEIcHlwaS5vcmcCJFAKEfake0123456789abcdefghijklmnopqrstuvwxyzABCDEF",
        core=rb"pypi-Ag",
    ),
    _run(
        "docker_token",
        (rb"dckr_[po]at_",),
        _T + rb"{20,}+",
        "dckr_pat_FAKEfake0123456789abcdefgh",
        core=rb"dckr_[po]at_",
    ),
    _run(
        "digitalocean_token",
        (rb"do[por]_v1_",),
        rb"[a-f0-9]{64}(?![A-Za-z0-9])",
        "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        core=rb"do[por]_v1_",
    ),
    _run(
        "vault_token",
        (rb"hv[sbr]\.",),
        _T + rb"{20,}+",
        "hvs.CAESIFAKEfake0123456789abcdefghijklmnopqrstuv",
        core=rb"hv[sbr]\.",
    ),
    _run(
        "twilio_api_key",
        (rb"SK",),
        rb"[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        "SK0123456789abcdef0123456789abcdef",
    ),
    *_named(
        "twilio_auth_token",
        rb"twilio[_-]?auth[_-]?token",
        rb"wilio(?<=[Tt]wilio)[_-]?[Aa]uth[_-]?[Tt]oken",
        rb"WILIO(?<=TWILIO)[_-]?AUTH[_-]?TOKEN",
        "TWILIO_AUTH_TOKEN=0123456789abcdef0123456789abcdef",
        value=rb"[0-9a-f]{32}(?![0-9a-f])",
    ),
    # No prefix: a run of base64url that starts (a user id), then two parts.
    SecretKind(
        "discord_bot_token",
        rb"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}",
        rb"(?P<secret>[MNO]"
        + _lead(1, rb"[A-Za-z0-9_-]")
        + _T
        + rb"{23,25}\."
        + _T
        + rb"{6}\."
        + _T
        + rb"{27,38}"
        + _END
        + rb")",
        "MTA5NzY1NDMyMTA5ODc2NTQz.GFaKeA.FAKEfake0123456789abcdefghijklmn",
    ),
    # The bot's id, then ":AA" and 30 to 34 more (33 in tokens, 32 in Telegram's own
    # docs): found from ":AA", the id read back.
    SecretKind(
        "telegram_bot_token",
        rb"[0-9]:AA",
        rb"(?P<secret>:AA(?<=[0-9]:AA)" + _T + rb"{30,34}" + _END + rb")",
        "123456789:AAFAKEfake0123456789abcdefghijklmno",
        head=12,
        head_chars=b"0123456789",
    ),
    *_named(
        "azure_storage_key",
        rb"account[_-]?key",
        rb"ccount(?<=[Aa]ccount)[_-]?[Kk]ey",
        rb"CCOUNT(?<=ACCOUNT)[_-]?KEY",
        "DefaultEndpointsProtocol=https;AccountName=planted;AccountKey=FAKEfake0123456789"
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/FAKEfake012==;"
        "EndpointSuffix=core.windows.net",
        value=rb"[A-Za-z0-9+/]{20,}+={0,2}",
    ),
    *_named(
        "azure_storage_key",
        rb"shared[_-]?access[_-]?key",
        rb"hared(?<=[Ss]hared)[_-]?[Aa]ccess[_-]?[Kk]ey",
        rb"HARED(?<=SHARED)[_-]?ACCESS[_-]?KEY",
        "Endpoint=sb://planted.servicebus.windows.net/;SharedAccessKeyName=root;"
        "SharedAccessKey=FAKEfake0123456789abcdefABCDEF0123456789abc=",
        value=rb"[A-Za-z0-9+/]{20,}+={0,2}",
    ),
    SecretKind(
        "azure_sas_signature",
        rb"[?&;]sig=",
        rb"(?P<keep>sig=(?<=[?&;]sig=))(?P<secret>[A-Za-z0-9%+/]{20,}+(?:=|%3[Dd]){0,2})",
        "https://planted.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o"
        "&sp=r&se=2030-01-01T00:00:00Z&sig=FAKEfake0123456789abcdefABCDEF%2BfakeFAKE%3D",
    ),
    # Azure AD client secrets: 40 characters, "Q~" after three and a digit.
    SecretKind(
        "azure_client_secret",
        rb"[0-9]Q~",
        rb"(?<=(?:(?<![A-Za-z0-9_~.-])|(?<=\\[nrtbf]))[A-Za-z0-9_~.-]{3}[0-9])(?P<secret>Q~"
        rb"[A-Za-z0-9_~.-]{31,34}+)(?![A-Za-z0-9_~.-])",
        "abc8Q~FAKEfake0123456789abcdefghij.FAKE",
        head=4,
        head_chars=b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~.-",
    ),
    # No prefix: a run of base64url that starts, then a payload, and a signature
    # unless it is unsigned ("alg": "none": "header.payload." or "header.payload").
    SecretKind(
        "jwt",
        rb"\.eyJ",
        rb"(?P<secret>eyJ"
        + _lead(3, rb"[A-Za-z0-9_-]")
        + _T
        + rb"{10,}+\.eyJ"
        + _T
        + rb"{10,}+(?:\."
        + _T
        + rb"*+)?)",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkZBS0UifQ"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_FAKEfake",
    ),
)

_CONTEXTS: tuple[SecretKind, ...] = (
    # Only the token goes; "Bearer " stays. Random: a digit somewhere, or both
    # cases (a token of letters; not a word, "Bearer YOUR_TOKEN" or "<token>").
    *(
        SecretKind(
            "bearer_token",
            rb"(?i:bearer)\s",
            rb"(?P<keep>" + name + rb"\s++)(?P<secret>(?:(?=[A-Za-z._~+/=-]*+[0-9])"
            rb"|(?=[A-Z0-9._~+/=-]*+[a-z])(?=[a-z0-9._~+/=-]*+[A-Z]))"
            rb"[A-Za-z0-9._~+/-]{16,}+=*+)",
            "Authorization: Bearer 0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f",
        )
        for name in (rb"earer(?<=[Bb]earer)", rb"EARER(?<=BEARER)")
    ),
    *(
        SecretKind(
            "http_auth",
            rb"(?i:authorization)",
            rb"(?P<keep>" + name + rb"(?:\\?[\"'])? {0,8}[:=] {0,8}(?:\\?[\"'])?"
            rb"(?:[Bb]asic|BASIC|[Tt]oken|TOKEN) ++)(?P<secret>[A-Za-z0-9+/=._~-]{8,}+)",
            "Authorization: Basic cGxhbnRlZDpGQUtFLXBhc3N3b3JkLTEyMw==",
        )
        for name in (rb"uthorization(?<=[Aa]uthorization)", rb"UTHORIZATION(?<=AUTHORIZATION)")
    ),
    # scheme://user:PASSWORD@host: only the password goes (up to the last "@"
    # before the host: one inside the password stays in it; read without going
    # back: an "@" is the password's only when another follows).
    SecretKind(
        "url_password",
        rb'://[^\s/"\\]*@',
        rb'(?P<keep>://(?<=[A-Za-z0-9]://)[^\s:/"\\?#\[]*+:)'
        # (3 characters at least: an "@" counts when another follows)
        rb"(?P<secret>(?=(?:[^\s/\"\\@]|@(?=[^\s/\"\\@]*+@)){3})"
        + _URL_PART
        + rb'(?:@(?=[^\s/"\\@]*+@)'
        + _URL_PART
        + rb")*+)(?=@[A-Za-z0-9\[])",
        "postgres://admin:s3cr3tP4ssw0rd@db.internal:5432/app",
    ),
    # scheme://TOKEN@host: a random user is a token.
    SecretKind(
        "url_token",
        rb"://[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*@",
        rb"(?P<keep>://(?<=[A-Za-z0-9]://))(?P<secret>"
        + _HAS_DIGIT
        + _HAS_LETTER
        + rb"[A-Za-z0-9_-]{20,}+)(?=@[A-Za-z0-9\[])",
        "https://0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b@git.example.com/org/repo.git",
    ),
    # curl -u user:PASSWORD, --user user:PASSWORD (not -u UID:GID, nor a marker's
    # colon: "-u [REDACTED:github_token]" is a token as the user); mysql -pPASSWORD
    SecretKind(
        "password",
        rb"-u[ =]",
        rb"(?P<keep>-u(?<![A-Za-z0-9-]-u)(?:=| ++)(?:\\?[\"'])?+"
        rb"(?!\[REDACTED:)[^\s:\"'\\]*+:)"
        rb"(?P<secret>(?![0-9]++(?![^\s\"'\\]))(?!\[REDACTED:)[^\s\"'\\]{4,}+)",
        "curl -u admin:FAKE-pa55word https://api.example.com",
    ),
    SecretKind(
        "password",
        rb"--user[ =]",
        rb"(?P<keep>--user(?:=| ++)(?:\\?[\"'])?+(?!\[REDACTED:)[^\s:\"'\\]*+:)"
        rb"(?P<secret>(?![0-9]++(?![^\s\"'\\]))(?!\[REDACTED:)[^\s\"'\\]{4,}+)",
        "curl --user admin:FAKE-pa55word https://api.example.com",
    ),
    # (the tool's name where a word starts: "-umysql -umysql …" is not read again
    # at every "mysql")
    *(
        SecretKind(
            "password",
            tool,
            rb"(?P<keep>"
            + tool
            + _lead(len(tool), rb"[A-Za-z0-9_-]")
            + rb"[a-z-]*+(?: ++(?!mysql|mariadb)[^\s\"\\]++){0,8}? ++-p)"
            rb"(?P<secret>(?!\[REDACTED:)[^\s\"'\\]{4,}+)",
            tool.decode() + " -u root -pFAKEpa55 appdb",
        )
        for tool in (rb"mysql", rb"mariadb")
    ),
    # SQL: ... PASSWORD 'x', IDENTIFIED BY 'x'
    *(
        SecretKind(
            "password",
            core,
            rb"(?P<keep>" + keep + rb" ++')(?P<secret>(?!\[REDACTED:)[^'\\]++)",
            example,
        )
        for core, keep, example in (
            (
                rb"PASSWORD +'",
                rb"ASSWORD(?<=PASSWORD)",
                "ALTER USER app WITH PASSWORD 'FAKEpa55w0rd';",
            ),
            (
                rb"IDENTIFIED BY +'",
                rb"DENTIFIED(?<=IDENTIFIED) BY",
                "CREATE USER app IDENTIFIED BY 'FAKEpa55w0rd';",
            ),
        )
    ),
    *_named(
        "password",
        rb"pass(?:word|wd|phrase)|[_-]pass",
        rb"ass(?:(?<=[Pp]ass)(?:word|wd|phrase)|(?<=[_-][Pp]ass))",
        rb"ASS(?:(?<=PASS)(?:WORD|WD|PHRASE)|(?<=[_-]PASS))",
        "DB_PASSWORD=FAKEpa55w0rd",
        min_len=4,
        spaces=True,
    ),
    *_named(
        "api_key",
        rb"api[_-]?(?:key|secret)",
        rb"pi(?<=[Aa]pi)[_-]?(?:[Kk]ey|[Ss]ecret)",
        rb"PI(?<=API)[_-]?(?:K(?:EY|ey)|S(?:ECRET|ecret))",
        "X-API-Key: FAKEfake0123456789abcdef",
    ),
    *_named(
        "secret_key",
        rb"secret(?:[_-]?key(?:[_-]?base)?)?",
        rb"ecret(?<=[Ss]ecret)(?:[_-]?[Kk]ey(?:[_-]?[Bb]ase)?)?",
        rb"ECRET(?<=SECRET)(?:[_-]?KEY(?:[_-]?BASE)?)?",
        "SECRET_KEY=django-insecure-FAKE0123456789abcdef",
    ),
    *_named(
        "secret_key",
        rb"private[_-]?key",
        rb"rivate(?<=[Pp]rivate)[_-]?[Kk]ey",
        rb"RIVATE(?<=PRIVATE)[_-]?KEY",
        "PRIVATE_KEY=0xFAKEfake0123456789abcdef0123456789abcdef",
    ),
    *_named(
        "token",
        rb"token",
        rb"oken(?<=[Tt]oken)",
        rb"OKEN(?<=TOKEN)",
        "access_token=FAKEfake0123456789abcdef",
        with_op=True,
    ),
)


def entropy(data: bytes) -> float:
    """Shannon entropy in bits per byte, as gitleaks computes it."""
    n = len(data)
    if not n:
        return 0.0
    return -sum(k / n * math.log2(k / n) for k in map(data.count, set(data)))


@cache
def _either(patterns: tuple[bytes, ...]) -> re.Pattern[bytes] | None:
    """One pattern for a list of them (one search a match, not one each)."""
    return re.compile(b"|".join(b"(?:" + p + b")" for p in patterns)) if patterns else None


def _allowed(
    floor: float | None,
    allow: tuple[bytes, ...],
    allow_match: tuple[bytes, ...],
    stopwords: tuple[bytes, ...],
) -> Check:
    """A gitleaks rule's tests of a match: its entropy floor, its allowlists and the
    global one (what they allow is no secret: ``${VAR}``, ``xxxx…``, ``true``)."""

    compiled: list[re.Pattern[bytes] | None] = []  # (on first use: most never run)

    def check(secret: bytes, m: re.Match[bytes]) -> bool:
        if floor is not None and entropy(secret) < floor:
            return False
        if stopwords:
            low = secret.lower()
            if any(word in low for word in stopwords):
                return False
        if not compiled:
            compiled.extend((_either(allow), _either(allow_match)))
        on_secret, on_match = compiled
        if on_secret is not None and on_secret.search(secret):
            return False
        return on_match is None or not on_match.search(m[0])

    return check


def from_json(
    spec: dict[str, Any], global_allow: Sequence[bytes] = (), global_stopwords: Sequence[str] = ()
) -> SecretKind:
    """A kind of secrets/gitleaks.kinds.json (written by translator/secrets/gitleaks.py);
    the global allowlist is every kind's."""

    def raw(key: str) -> bytes:
        return str(spec.get(key, "")).encode("latin-1")

    allow = tuple(p.encode("latin-1") for p in spec.get("allow", ())) + tuple(global_allow)
    allow_match = tuple(p.encode("latin-1") for p in spec.get("allow_match", ()))
    stop = tuple(w.lower().encode() for w in (*spec.get("stopwords", ()), *global_stopwords))
    check = _allowed(spec.get("entropy"), allow, allow_match, stop)
    return SecretKind(
        spec["name"],
        raw("core"),
        raw("source"),
        spec["example"],
        check,
        head=int(spec.get("head", 0)),
        head_chars=raw("head_chars"),
        rule=spec["rule"],
    )


def _gitleaks() -> tuple[SecretKind, ...]:
    """gitleaks' kinds, as translated (~3 ms: read and built; each compiled when a
    line first needs it)."""
    # (beside this module: importlib.resources would import zipfile, ~4 ms)
    doc = orjson.loads((Path(__file__).parent / "gitleaks.kinds.json").read_bytes())
    glob = tuple(p.encode("latin-1") for p in doc["global_allow"])
    return tuple(from_json(k, glob, doc["global_stopwords"]) for k in doc["kinds"])


GITLEAKS: tuple[SecretKind, ...] = _gitleaks()
KINDS: tuple[SecretKind, ...] = _SHAPES + GITLEAKS + _CONTEXTS

#: Every kind's name, in the order first met.
NAMES: tuple[str, ...] = tuple(dict.fromkeys(k.name for k in KINDS))


def marker(kind: str) -> bytes:
    return b"[REDACTED:" + kind.encode() + b"]"


def mask(data: bytes, kinds: list[SecretKind]) -> bytes:
    """Replace every secret of the given kinds (in their order) with its marker; what
    an exact pattern matches before the secret (a key name, a URL's user) stays."""
    for kind in kinds:
        cut = kind.cut
        data = _each(kind, data) if cut == "each" else _in_c(kind, data, cut)
    return data


def _in_c(kind: SecretKind, data: bytes, cut: str) -> bytes:
    if cut == "sub":
        return kind.exact.sub(marker(kind.name), data)
    parts = kind.exact.split(data)
    if len(parts) > 1:
        # text, keep, secret, text, keep, secret, ..., text
        parts[2::3] = [marker(kind.name)] * (len(parts) // 3)
        return b"".join(parts)
    return data


#: how many matches of one kind in one line are checked in Python; a line with more
#: is a flood (megabytes of near-secrets), and all its matches are masked unchecked,
#: in C where the pattern allows (masking more is the safe side): its cost stays
#: that of the C cut, whatever the line
CHECKED = 256


def _each(kind: SecretKind, data: bytes) -> bytes:
    """Match by match, for kinds with a Python check or a head."""
    pieces: list[bytes] = []
    pos = 0
    check = kind.check
    left = CHECKED
    floor = kind.head
    chars = kind.head_chars
    mark = marker(kind.name)
    for m in kind.exact.finditer(data):
        start, end = m.span("secret")
        if floor:  # (the head: bytes of head_chars just before, read back in C)
            head = data[max(start - floor, pos) : start]
            start -= len(head) - len(head.rstrip(chars))
        if check is not None:
            left -= 1
            if left < 0:
                if kind.in_c is not None:
                    return _in_c(kind, data, kind.in_c)
                check = None
            elif not check(data[start:end], m):
                continue  # the shape without the substance (hyphenated words, say)
        pieces.append(data[pos:start])
        pieces.append(mark)
        pos = end
    if not pieces:
        return data
    pieces.append(data[pos:])
    return b"".join(pieces)
