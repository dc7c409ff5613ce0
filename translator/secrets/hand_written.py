"""The hand-written secret kinds: our tables of shapes and contexts.

:data:`SHAPES` are secrets known by their own bytes (a prefix such as ``ghp_``, or a
shape such as a JWT's); :data:`CONTEXTS` are secrets known by what stands around
them (``Bearer``, a URL's userinfo, ``curl -u``, a name bound to a value). They
mask a service's secrets in more forms than gitleaks' rules take (a PEM block cut
off, escaped newlines, .env files), which is why a rule of gitleaks' that one of
them covers is left out (``COVERED`` in :mod:`translator.secrets.gitleaks`). Apart
from the masking (:mod:`translator.secrets.redact`) because they are data: a kind
is added here, in its place in the order, and nothing else changes.
"""

from __future__ import annotations

import re

from streamv1.translator.secrets import formats
from streamv1.translator.secrets.secret_kind import SecretKind, boundary, by_name, by_prefix

_DIGIT = re.compile(rb"[0-9]")
_SEGMENT16 = re.compile(rb"[A-Za-z0-9]{16}")


def _random(secret: bytes, m: re.Match[bytes]) -> bool:
    """A digit somewhere and 16 letters or digits in a row: a random token, not
    hyphenated words (``sk-learn-compatible-estimator-v2``)."""
    return _DIGIT.search(secret) is not None and _SEGMENT16.search(secret) is not None


#: look-aheads (read a run that holds no candidate: see translator.secrets.redact)
_HAS_DIGIT = rb"(?=[^0-9\s\"\\]*+[0-9])"
_HAS_LETTER = rb"(?=[^A-Za-z\s\"\\]*+[A-Za-z])"

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

#: a quote, escaped once or more (a command in a JSON string: ``-p \"…\"``)
_QUOTE = rb"""(?:(?:\\\\)*+\\?["'])"""
#: a value that is a secret by its place alone (a password flag's): any value of 4
#: or more, quoted (to its quote) or not; never the next option, a reference
#: (``$TOKEN``, ``"$(cat f)"``) or a stand-in, nor a secret masked before
_BY_PLACE = (
    rb"(?!-|\[REDACTED:)(?![$<{%]|\*{3}|\.{3}|(?i:your[ _-]|example|changeme|placeholder))"
    rb"(?:(?<=[\"'])(?:[^\"'\\\[]|\[(?!REDACTED:)){4,}+"
    rb"|(?<![\"'])[^\s\"'\\\[;&|<>()`]{4,}+)"
)
#: the registry clients whose ``login -p`` is ``docker login``'s, and the clouds'
_LOGIN_TOOLS = b"docker podman nerdctl buildah skopeo oras registry az oc cf".split()

# In the order they are applied: a specific kind before a general one (an Anthropic
# key before the generic sk- form, a JWT before the bearer token that carries it, a
# kind with a shape before a value known only by its name, which then sees the
# marker and leaves it). gitleaks' kinds come between the shapes and the contexts.
SHAPES: tuple[SecretKind, ...] = (
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
    *by_name(
        "private_key",
        rb"client[_-]?key[_-]?data",
        rb"lient(?<=[Cc]lient)[_-]?[Kk]ey[_-]?[Dd]ata",
        rb"LIENT(?<=CLIENT)[_-]?KEY[_-]?DATA",
        "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpGQUtF",
        value=_B64,
    ),
    by_prefix(
        "anthropic_api_key",
        (rb"sk-ant-",),
        _T + rb"{20,}+",
        "sk-ant-api03-Zq8vR2mK7xT4pL9wN3bH6cJ1dF5gS0aE2yU8iO4kM7nB3vC9xZ1qW5eR7tY",
    ),
    # Not an Anthropic key (masked before), and random (see _random).
    by_prefix(
        "openai_api_key",
        (rb"sk-",),
        rb"(?!ant-)" + _T + rb"{20,}+",
        "sk-proj-4fT9kL2mN8pQ1rS6tV3wX7yZ0aB5cD9eF2gH6iJ1kL4mN8oP3qR7sT0uV5wX9y",
        _random,
        core=rb"sk-",
    ),
    by_prefix(
        "aws_access_key",
        (rb"AKIA", rb"ASIA", rb"ABIA", rb"ACCA"),
        rb"[A-Z0-9]{16}(?![A-Za-z0-9])",
        "AKIAZ7QW3RTYUIOP4ASD",
    ),
    # A secret access key has no prefix of its own: only after its name.
    *by_name(
        "aws_secret_key",
        rb"secret[_-]?access[_-]?key",
        rb"ecret(?<=[Ss]ecret)[_-]?[Aa]ccess[_-]?[Kk]ey",
        rb"ECRET(?<=SECRET)[_-]?ACCESS[_-]?KEY",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY9FAKEKEYQQ",
        value=rb"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
    ),
    *by_name(
        "aws_secret_key",
        rb"aws[_-]?secret[_-]?key",
        rb"ws(?<=[Aa]ws)[_-]?[Ss]ecret[_-]?[Kk]ey",
        rb"WS(?<=AWS)[_-]?SECRET[_-]?KEY",
        "AWS_SECRET_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY9FAKEKEYQQ",
        value=rb"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
    ),
    by_prefix(
        "aws_session_token",
        (rb"FwoGZXIvYXdz",),
        rb"[A-Za-z0-9/+=]{60,}+",
        "FwoGZXIvYXdzEFAKEaDFAKEfakeSessionTokenForTestsOnly0123456789abcdefghij"
        "klmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+fakeFAKE==",
    ),
    by_prefix(
        "aws_session_token",
        (rb"IQoJb3JpZ2lu",),
        rb"[A-Za-z0-9/+=]{60,}+",
        "IQoJb3JpZ2luX2VjEFAKEaDFAKEfakeSessionTokenForTestsOnly0123456789abcdefghij"
        "klmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+fakeFAKE==",
    ),
    *by_name(
        "aws_session_token",
        rb"session[_-]?token",
        rb"ession(?<=[Ss]ession)[_-]?[Tt]oken",
        rb"ESSION(?<=SESSION)[_-]?TOKEN",
        "AWS_SESSION_TOKEN=FAKEfakeSessionToken0123456789abcdefghij",
        value=rb"[A-Za-z0-9/+=%]{16,}+",
    ),
    by_prefix(
        "github_token",
        (rb"gh[pousr]_",),
        rb"[A-Za-z0-9]{36,}+",
        "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0nlyAbCdEf",
        core=rb"gh[pousr]_",
    ),
    by_prefix(
        "github_token",
        (rb"github_pat_",),
        rb"[A-Za-z0-9_]{22,}+",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
    ),
    by_prefix(
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
    by_prefix(
        "slack_webhook",
        (rb"https://hooks\.slack\.com/",),
        rb"(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}+",
        "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX",
        core=rb"hooks\.slack\.com/",
    ),
    by_prefix(
        "slack_token",
        (rb"xox[abcdeoprs]-",),
        rb"[A-Za-z0-9-]{10,}+",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        core=rb"xox[abcdeoprs]-",
    ),
    by_prefix(
        "slack_token",
        (rb"xapp-",),
        rb"[A-Za-z0-9-]{20,}+",
        "xapp-1-A0123ABCDEF-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    ),
    by_prefix(
        "stripe_key",
        (rb"sk_live_", rb"sk_test_"),
        rb"[A-Za-z0-9]{16,}+",
        "sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
        core=rb"sk_(?:live|test)_",
    ),
    by_prefix(
        "stripe_key",
        (rb"rk_live_", rb"rk_test_"),
        rb"[A-Za-z0-9]{16,}+",
        "rk_test_51HxYzAbCdEfGhIjKlMnOpQr",
        core=rb"rk_(?:live|test)_",
    ),
    by_prefix(
        "stripe_webhook_secret",
        (rb"whsec_",),
        rb"[A-Za-z0-9]{24,}+",
        "whsec_FAKEfake0123456789abcdefFAKEfake01",
    ),
    by_prefix(
        "google_api_key",
        (rb"AIza",),
        _T + rb"{35}" + _END,
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    ),
    by_prefix(
        "google_oauth_token",
        (rb"ya29\.",),
        _T + rb"{20,}+",
        "ya29.a0AfH6SMBx7Yz3Kq9Lm2Np5Rs8Tv1Wx4Yz7Ab0Cd3Ef6Gh",
    ),
    by_prefix(
        "google_oauth_client_secret",
        (rb"GOCSPX-",),
        _T + rb"{24,}+",
        "GOCSPX-FAKEfake0123456789abcdefABCD",
    ),
    *by_name(
        "gcp_private_key_id",
        rb"private[_-]?key[_-]?id",
        rb"rivate(?<=[Pp]rivate)[_-]?[Kk]ey[_-]?[Ii]d",
        rb"RIVATE(?<=PRIVATE)[_-]?KEY[_-]?ID",
        '"private_key_id": "0123456789abcdef0123456789abcdeffedcba98"',
        value=rb"[0-9a-f]{40}(?![0-9a-f])",
    ),
    by_prefix(
        "npm_token",
        (rb"npm_",),
        rb"[A-Za-z0-9]{36}(?![A-Za-z0-9])",
        "npm_FAKEfake0123456789abcdefghijklmnopqr",
    ),
    # Mixed case: hf_ + 34 letters or digits that are not an identifier.
    by_prefix(
        "huggingface_token",
        (rb"hf_",),
        rb"(?=[a-z0-9]*+[A-Z])(?=[A-Z0-9]*+[a-z])[A-Za-z0-9]{34,}+",
        "hf_FAKEfakeAbCdEfGhIjKlMnOpQrStUvWxYz",
    ),
    by_prefix(
        "pypi_token",
        (rb"pypi-",),
        rb"Ag" + _T + rb"{50,}+",
        "pypi-AgEIcHlwaS5vcmcCJFAKEfake0123456789abcdefghijklmnopqrstuvwxyzABCDEF",
        core=rb"pypi-Ag",
    ),
    by_prefix(
        "docker_token",
        (rb"dckr_[po]at_",),
        _T + rb"{20,}+",
        "dckr_pat_FAKEfake0123456789abcdefgh",
        core=rb"dckr_[po]at_",
    ),
    by_prefix(
        "digitalocean_token",
        (rb"do[por]_v1_",),
        rb"[a-f0-9]{64}(?![A-Za-z0-9])",
        "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        core=rb"do[por]_v1_",
    ),
    by_prefix(
        "vault_token",
        (rb"hv[sbr]\.",),
        _T + rb"{20,}+",
        "hvs.CAESIFAKEfake0123456789abcdefghijklmnopqrstuv",
        core=rb"hv[sbr]\.",
    ),
    by_prefix(
        "twilio_api_key",
        (rb"SK",),
        rb"[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        "SK0123456789abcdef0123456789abcdef",
    ),
    *by_name(
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
        + boundary(1, rb"[A-Za-z0-9_-]")
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
    *by_name(
        "azure_storage_key",
        rb"account[_-]?key",
        rb"ccount(?<=[Aa]ccount)[_-]?[Kk]ey",
        rb"CCOUNT(?<=ACCOUNT)[_-]?KEY",
        "DefaultEndpointsProtocol=https;AccountName=planted;AccountKey=FAKEfake0123456789"
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/FAKEfake012==;"
        "EndpointSuffix=core.windows.net",
        value=rb"[A-Za-z0-9+/]{20,}+={0,2}",
    ),
    *by_name(
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
    # A header is {"alg"... (eyJ); a payload is any object: {"a":1} is eyJhIjoxfQ,
    # and a key that starts with a digit, or an empty one, makes eyI.
    SecretKind(
        "jwt",
        rb"\.ey[IJ]",
        rb"(?P<secret>eyJ"
        + boundary(3, rb"[A-Za-z0-9_-]")
        + _T
        + rb"{10,}+\.ey[IJ]"
        + _T
        + rb"{4,}+(?:\."
        + _T
        + rb"*+)?)",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkZBS0UifQ"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_FAKEfake",
    ),
)

SHAPES += formats.SHAPES

CONTEXTS: tuple[SecretKind, ...] = (
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
            + boundary(len(tool), rb"[A-Za-z0-9_-]")
            + rb"[a-z-]*+(?: ++(?!mysql|mariadb)[^\s\"\\]++){0,8}? ++-p)"
            rb"(?P<secret>(?!\[REDACTED:)[^\s\"'\\]{4,}+)",
            tool.decode() + " -u root -pFAKEpa55 appdb",
        )
        for tool in (rb"mysql", rb"mariadb")
    ),
    # A short flag that is a password for these commands only: ``docker login -p``
    # (and the registry clients that copy it, ``helm registry login``), ``az``, ``oc``
    # and ``cf login -p``, ``sshpass -p``, ``redis-cli -a``; ``gh secret set NAME
    # --body``/``-b`` (a secret's value by its command). Elsewhere ``-p`` is a port,
    # a path, a protocol (``gh auth login -p https``).
    *(
        SecretKind(
            kind,
            core,
            rb"(?P<keep>"
            + head
            # (up to 8 words, none the command's own: "docker login docker login …"
            # is read once)
            + rb"(?: ++(?!"
            + stop
            + rb")(?:[^\s\"\\]|\\[\"'])++){0,8}? ++"
            + flag
            # (``-p V``, ``-p=V``, a one-letter flag also ``-pV``)
            + rb"(?:=| ++|(?<=[^-]-[a-z]))"
            + _QUOTE
            + rb"?+)(?P<secret>"
            + _BY_PLACE
            + b")",
            example,
        )
        for kind, core, head, stop, flag, example in (
            (
                "password",
                rb"(?:docker|podman|nerdctl|buildah|skopeo|oras|registry|az|oc|cf) +login",
                rb" login(?:"
                + b"|".join(
                    rb"(?<=" + tool + rb" login)" + boundary(len(tool) + 6, rb"[A-Za-z0-9_-]")
                    for tool in _LOGIN_TOOLS
                )
                + b")",
                rb"login",
                rb"-p",
                "docker login -u deploy -p FAKEpa55w0rd registry.example.com",
            ),
            (
                "password",
                rb"sshpass",
                rb"sshpass" + boundary(7, rb"[A-Za-z0-9_-]"),
                rb"sshpass",
                rb"-p",
                "sshpass -p 'FAKEpa55w0rd' ssh host",
            ),
            (
                "password",
                rb"redis-cli",
                rb"redis-cli" + boundary(9, rb"[A-Za-z0-9_-]"),
                rb"redis-cli",
                rb"-a",
                "redis-cli -h cache -a FAKEpa55w0rd ping",
            ),
            (
                "secret_key",
                rb"secret +set",
                rb" secret +set",
                rb"secret",
                rb"(?:-b|--body)",
                'gh secret set DEPLOY_KEY --body "FAKEfake0123456789abcdef"',
            ),
        )
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
    *by_name(
        "password",
        rb"pass(?:word|wd|phrase)|[_-]pass",
        rb"ass(?:(?<=[Pp]ass)(?:word|wd|phrase)|(?<=[_-][Pp]ass))",
        rb"ASS(?:(?<=PASS)(?:WORD|WD|PHRASE)|(?<=[_-]PASS))",
        "DB_PASSWORD=FAKEpa55w0rd",
        min_len=4,
        spaces=True,
    ),
    *by_name(
        "password",
        rb"[_-]pwd",
        rb"wd(?<=[_-][Pp]wd)",
        rb"WD(?<=[_-]PWD)",
        "MYSQL_PWD=FAKEpa55w0rd",
        min_len=4,
        spaces=True,
    ),
    *by_name(
        "api_key",
        rb"api[_-]?(?:key|secret)",
        rb"pi(?<=[Aa]pi)[_-]?(?:[Kk]ey|[Ss]ecret)",
        rb"PI(?<=API)[_-]?(?:K(?:EY|ey)|S(?:ECRET|ecret))",
        "X-API-Key: FAKEfake0123456789abcdef",
    ),
    *by_name(
        "api_key",
        rb"access[_-]?key",
        rb"ccess(?<=[Aa]ccess)[_-]?[Kk]ey",
        rb"CCESS(?<=ACCESS)[_-]?KEY",
        "MINIO_ACCESS_KEY=FAKEfake0123456789abcdef",
    ),
    *by_name(
        "http_auth",
        rb"[_-]auth",
        rb"uth(?<=[_-][Aa]uth)",
        rb"UTH(?<=[_-]AUTH)",
        "HTTP_AUTH=deploy:FAKEpa55w0rd",
    ),
    *by_name(
        "secret_key",
        rb"secret(?:[_-]?key(?:[_-]?base)?)?",
        rb"ecret(?<=[Ss]ecret)(?:[_-]?[Kk]ey(?:[_-]?[Bb]ase)?)?",
        rb"ECRET(?<=SECRET)(?:[_-]?KEY(?:[_-]?BASE)?)?",
        "SECRET_KEY=django-insecure-FAKE0123456789abcdef",
    ),
    *by_name(
        "secret_key",
        rb"private[_-]?key",
        rb"rivate(?<=[Pp]rivate)[_-]?[Kk]ey",
        rb"RIVATE(?<=PRIVATE)[_-]?KEY",
        "PRIVATE_KEY=0xFAKEfake0123456789abcdef0123456789abcdef",
    ),
    *by_name(
        "token",
        rb"token",
        rb"oken(?<=[Tt]oken)",
        rb"OKEN(?<=TOKEN)",
        "access_token=FAKEfake0123456789abcdef",
        with_op=True,
    ),
)
