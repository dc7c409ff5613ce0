"""Secrets masked on the way out: every encoded line, whatever its shape or sink.

The unified stream leaves the machine (dashboards, CI logs, eval harnesses), so no
key, token or password may ride on it. The masker works on the *encoded* line:
orjson writes a string's secret-like characters (letters, digits, ``-_./+=:@``)
as they are, so a secret in any string, at any depth, is the same bytes in the
line. Each kind's pattern stays inside one JSON string (no unescaped quote can
match), so the masked line is still valid JSON, and the marker keeps the kind:
``[REDACTED:aws_access_key]``.

Each kind has a *core*: a pattern every match of its exact pattern contains, in the
syntax both Python's ``re`` and Hyperscan take. The cores go into the one scan every
buffer of lines gets anyway (:mod:`translator.scan`); only a line a core hit runs
that kind's exact pattern. Exact patterns begin with a literal where they can, so
``re`` skips to candidates at memchr speed: the left-boundary test is made on the
match instead of in a look-behind (which would be tried at every byte of lines
that can be hundreds of kilobytes long).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

_TOKEN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=.-")
_ESCAPES = frozenset(b"nrtbf")


def at_boundary(data: bytes, at: int) -> bool:
    """Does a token start at ``at``: no token byte before it, or an escape such as
    ``\\n`` (two bytes in the encoded line, the second a letter)?"""
    if at == 0 or data[at - 1] not in _TOKEN_BYTES:
        return True
    return at >= 2 and data[at - 2] == 0x5C and data[at - 1] in _ESCAPES


def _after_scheme(data: bytes, at: int) -> bool:
    """``at`` is the ``://`` of a URL: a scheme's letter or digit comes before it."""
    return at > 0 and chr(data[at - 1]).isalnum()


@dataclass(frozen=True)
class SecretKind:
    name: str
    core: bytes  # what the scanner looks for: every exact match contains a match of it
    source: bytes  # (kept prefix)(?P<secret>...): only the secret is replaced
    caseless: bool = False
    #: a test of the match's start (where a look-behind would cost too much)
    starts: Callable[[bytes, int], bool] | None = at_boundary

    @cached_property
    def exact(self) -> re.Pattern[bytes]:
        # Compiled when a line first needs it: compiling all of them took ~8 ms
        # of every start, and most conversions mask nothing.
        return re.compile(self.source, re.IGNORECASE if self.caseless else 0)


def _kind(name: str, core: bytes, exact: bytes, caseless: bool = False,
          starts: Callable[[bytes, int], bool] | None = at_boundary) -> SecretKind:
    return SecretKind(name, core, exact, caseless, starts)


_T = rb"[A-Za-z0-9_-]"  # a token character
_END = rb"(?![A-Za-z0-9_-])"
_PEM = rb"[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_AWS_SECRET_NAME = (
    rb"(?:(?:(?:aws|AWS)_?)?(?:[sS]ecret|SECRET)_?(?:[aA]ccess|ACCESS)_?(?:[kK]ey|KEY)"
    rb"|(?:aws|AWS)_?(?:[sS]ecret|SECRET)_?(?:[kK]ey|KEY))"
)

# In the order they are applied: a specific kind before a general one (an Anthropic
# key before the generic sk- form, a JWT before the bearer token that carries it).
KINDS: tuple[SecretKind, ...] = (
    # The whole block, to its END line, or to the end of the string if it was cut.
    _kind("private_key", rb"PRIVATE KEY",
          rb"(?P<secret>-----BEGIN " + _PEM + rb'(?:[^"\\]|\\.)*?(?:-----END ' + _PEM
          + rb'|(?=")))', starts=None),
    _kind("anthropic_api_key", rb"sk-ant-", rb"(?P<secret>sk-ant-" + _T + rb"{20,})" + _END),
    # Not an Anthropic key (masked before), and random: a digit somewhere.
    _kind("openai_api_key", rb"sk-" + _T + rb"{20}",
          rb"(?P<secret>sk-(?!ant-)(?=" + _T + rb"*[0-9])(?:proj-|svcacct-|admin-)?"
          + _T + rb"{20,})" + _END),
    _kind("aws_access_key", rb"AKIA|ASIA|ABIA|ACCA",
          rb"(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})" + _END),
    # A secret access key has no prefix of its own: only after its name, in the
    # casings it is written in (caseless matching would triple the scan's cost).
    _kind("aws_secret_key", _AWS_SECRET_NAME,
          _AWS_SECRET_NAME + rb"(?:\\?[\"']|\s){0,3}[:=](?:\\?[\"']|\s){0,3}"
          rb"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", starts=None),
    _kind("github_token", rb"gh[pousr]_|github_pat_",
          rb"(?P<secret>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
    _kind("gitlab_token", rb"glpat-", rb"(?P<secret>glpat-" + _T + rb"{20,})"),
    _kind("slack_webhook", rb"hooks\.slack\.com/services/",
          rb"(?P<secret>https://hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,})", starts=None),
    _kind("slack_token", rb"xox[abposr]-", rb"(?P<secret>xox[abposr]-[A-Za-z0-9-]{10,})"),
    _kind("stripe_key", rb"[sr]k_(?:live|test)_",
          rb"(?P<secret>[sr]k_(?:live|test)_[A-Za-z0-9]{16,})"),
    _kind("google_api_key", rb"AIza", rb"(?P<secret>AIza" + _T + rb"{35})" + _END),
    _kind("google_oauth_token", rb"ya29\.", rb"(?P<secret>ya29\." + _T + rb"{20,})"),
    _kind("jwt", rb"\.eyJ",
          rb"(?P<secret>eyJ" + _T + rb"{10,}\.eyJ" + _T + rb"{10,}\." + _T + rb"*)"),
    # Only the token goes; "Bearer " stays. Random: a digit somewhere.
    _kind("bearer_token", rb"(?:[Bb]earer|BEARER)\s",
          rb"(?:[Bb]earer|BEARER)\s+(?=[A-Za-z_~+/.-]*[0-9])(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"
          rb"(?![A-Za-z0-9._~+/=-])"),
    # scheme://user:PASSWORD@host: only the password goes.
    _kind("url_password", rb'://[^\s:/@"\\]+:[^\s/@"\\]+@',
          rb'://[^\s:/@"\\]{1,256}:(?P<secret>[^\s/@"\\]{1,256})(?=@)', starts=_after_scheme),
)


def marker(kind: str) -> bytes:
    return b"[REDACTED:" + kind.encode() + b"]"


def mask(data: bytes, kinds: list[SecretKind]) -> bytes:
    """Replace every secret of the given kinds (in their order) with its marker; what
    an exact pattern matches before the secret (a key name, a URL's user) stays."""
    for kind in kinds:
        data = kind.exact.sub(_replacer(kind, data), data)
    return data


def _replacer(kind: SecretKind, data: bytes) -> Callable[[re.Match[bytes]], bytes]:
    mark = marker(kind.name)
    starts = kind.starts

    def replace(m: re.Match[bytes]) -> bytes:
        if starts is not None and not starts(data, m.start()):
            return m[0]  # inside a longer token: not a secret of this kind
        return m[0][: m.start("secret") - m.start()] + mark

    return replace
