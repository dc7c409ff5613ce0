"""Kinds written from a vendor's own format where gitleaks' rule for it takes some
forms only (issue #38 item 5: each of these passed in a form its rule missed).

* **SendGrid** API keys are ``SG.``, 22 base64url characters (the key's id), ``.``,
  43 more (the secret). gitleaks' rule wants a quote, a space, ``;`` or the end
  after them: a key ending a sentence, or followed by ``,`` ``)`` ``&`` ``.``, passed.
* **age** identities (age's own spec, c2sp.org/age, and age-keygen(1)): an HRP,
  ``1``, then bech32 in upper case. ``AGE-SECRET-KEY-1`` (X25519, 58 characters
  for its 32-byte key), ``AGE-SECRET-KEY-PQ-1`` (the ML-KEM-768 + X25519 hybrid of
  age 1.3, ``age-keygen -pq``), ``AGE-PLUGIN-<NAME>-1`` (a plugin's identity).
  gitleaks' rule knows the first only.
* **AWS STS credentials** where their name has no ``=`` or ``:`` after it: the
  Query API's XML (``<SecretAccessKey>…</SecretAccessKey>``, what ``--debug``
  prints), ``--output table`` (``|  SecretAccessKey |  …  |``) and ``--output
  text`` (``CREDENTIALS`` then AccessKeyId, Expiration, SecretAccessKey,
  SessionToken, tab-separated, no names). A session token is masked by its prefix
  when it has one we know (:mod:`translator.secrets.hand_written`), here by its
  place.

They run after the hand-written shapes (an access key id is a marker by then) and
before gitleaks' kinds.
"""

from __future__ import annotations

from streamv1.translator.secrets.secret_kind import SecretKind, by_prefix

_T = rb"[A-Za-z0-9_-]"  # base64url
_END = rb"(?![A-Za-z0-9_-])"
_BECH32 = rb"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]"  # bech32's alphabet, upper case
_SECRET_KEY = rb"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"  # an AWS secret access key
_SESSION_TOKEN = rb"[A-Za-z0-9/+=]{16,}+"
#: an access key id as the line holds it here (masked before, or not)
_KEY_ID = rb"(?:A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}|\[REDACTED:aws_access_key\])"
#: ``--output text``'s row up to the secret: its tabs are ``\t`` in the line
_TEXT_ROW = rb"CREDENTIALS\\t" + _KEY_ID + rb"\\t[0-9TZ:.+-]{10,40}+\\t"
_STS_XML = (
    "<Credentials><AccessKeyId>ASIAZ7QW3RTYUIOP4ASD</AccessKeyId>"
    "<SecretAccessKey>FAKEfake0123456789/abcdefghijklmnopqrstu</SecretAccessKey>"
    "<SessionToken>AQoDYXdzEFAKEfake0123456789abcdefghijklmnop/+==</SessionToken>"
    "</Credentials>"
)
_STS_TEXT = (
    "CREDENTIALS\tASIAZ7QW3RTYUIOP4ASD\t2026-12-05T03:00:00+00:00\t"
    "FAKEfake0123456789/abcdefghijklmnopqrstu\tAQoDYXdzEFAKEfake0123456789abcdefghijklmnop/+=="
)

SHAPES: tuple[SecretKind, ...] = (
    by_prefix(
        "sendgrid_api_key",
        (rb"SG\.",),
        _T + rb"{22}\." + _T + rb"{43}" + _END,
        "SG.FAKEfake0123456789abcd.FAKEfake0123456789abcdefghijklmnopqrstuvwxy.",
    ),
    # (the HRP's words read whole, then "1": nothing is read twice)
    by_prefix(
        "age_secret_key",
        (rb"AGE-SECRET-KEY-", rb"AGE-PLUGIN-"),
        rb"(?:[A-Z0-9]{1,32}+-)*+1" + _BECH32 + rb"{20,}+(?![A-Za-z0-9])",
        "AGE-SECRET-KEY-PQ-1QQFAKEFAKEFAKE2345678FAKEFAKEFAKE2345678FAKEFAKEFAKE234567",
        core=rb"AGE-(?:SECRET-KEY|PLUGIN)-",
    ),
    SecretKind(
        "aws_secret_key",
        rb"<SecretAccessKey>",
        rb"(?P<keep>SecretAccessKey>(?<=<SecretAccessKey>) *+)(?P<secret>" + _SECRET_KEY + b")",
        _STS_XML,
    ),
    SecretKind(
        "aws_session_token",
        rb"<SessionToken>",
        rb"(?P<keep>SessionToken>(?<=<SessionToken>) *+)(?P<secret>" + _SESSION_TOKEN + b")",
        _STS_XML,
    ),
    SecretKind(
        "aws_secret_key",
        rb"SecretAccessKey *\|",
        rb"(?P<keep>SecretAccessKey *+\| *+)(?P<secret>" + _SECRET_KEY + b")",
        "||  SecretAccessKey|  FAKEfake0123456789/abcdefghijklmnopqrstu  ||",
    ),
    SecretKind(
        "aws_session_token",
        rb"SessionToken *\|",
        rb"(?P<keep>SessionToken *+\| *+)(?P<secret>" + _SESSION_TOKEN + b")",
        "||  SessionToken   |  AQoDYXdzEFAKEfake0123456789abcdefghijklmnop/+==  ||",
    ),
    SecretKind(
        "aws_secret_key",
        rb"CREDENTIALS\\t",
        rb"(?P<keep>" + _TEXT_ROW + rb")(?P<secret>" + _SECRET_KEY + b")",
        _STS_TEXT,
    ),
    SecretKind(
        "aws_session_token",
        rb"CREDENTIALS\\t",
        rb"(?P<keep>"
        + _TEXT_ROW
        + rb"(?:[A-Za-z0-9/+]{40}|\[REDACTED:aws_secret_key\])\\t)(?P<secret>"
        + _SESSION_TOKEN
        + b")",
        _STS_TEXT,
    ),
)
