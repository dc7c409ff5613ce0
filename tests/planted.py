"""Planted secrets and their look-alikes, and the fixtures that carry them.

Every secret here is made up, in the exact shape of the real thing. The fixtures
``testdata/claude-session/secrets.jsonl`` and ``testdata/claude-stream/secrets.jsonl``
are the ``bash`` captures with all of them written into the prompt, the thinking,
the assistant's text, the tool's input and the tool's output (content and
``toolUseResult``). Regenerate them with ``.venv/bin/python tests/planted.py``.

:func:`cases` is every kind in every form it is pasted in (``NAME=value``,
``export``, .env, YAML, JSON, ``--flag=``, query strings, paths, identifiers, URL
userinfo, ``curl -u``, ``mysql -p``, ...), built from the table of :data:`PLANTS`
and :data:`FORMS`, plus the forms that belong to one kind (PEM blocks, STS JSON,
connection strings, headers); tests/test_redact.py runs them through ``convert``.
The plants are the hand-written kinds' and one of each gitleaks rule kept (made from
its pattern's example: translator/secrets/gitleaks.py). :data:`ISSUE_23_22` holds the seven
kinds issue #23 (item 22) found passing through; :data:`NOT_SECRETS`, ordinary text
(prose, code, ids, hashes, image data) that must come out as it went in.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from streamv1.translator.secrets import redact
from streamv1.translator.secrets.secret_kind import SecretKind

ROOT = Path(__file__).resolve().parent.parent

# kind -> the secret as it would appear in text (the part after "=" in a few)
SECRETS: dict[str, str] = {
    "anthropic_api_key": "sk-ant-api03-Zq8vR2mK7xT4pL9wN3bH6cJ1dF5gS0aE2yU8iO4kM7nB3vC9xZ1qW5eR7tY"
    "2uI6oP0aS4dF8gH3jK1lZ9xC-AbCdEfGhAA",
    "openai_api_key": "sk-proj-4fT9kL2mN8pQ1rS6tV3wX7yZ0aB5cD9eF2gH6iJ1kL4mN8oP3qR7sT0uV5wX9y"
    "Z2aB6c",
    "aws_access_key": "AKIAZ7QW3RTYUIOP4ASD",
    "aws_secret_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY9EXAMPLEKQ",
    "github_token": "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0nlyAbCdEf",
    "gitlab_token": "glpat-Xy9Zk3Lm7Qp2Rs5Tv8Wz",
    "slack_token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "slack_webhook": "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX",
    "stripe_key": "sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
    "google_api_key": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "google_oauth_token": "ya29.a0AfH6SMBx7Yz3Kq9Lm2Np5Rs8Tv1Wx4Yz7Ab0Cd3Ef6Gh",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "bearer_token": "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q\n"
    "q7R8s9T0u1V2w3X4y5Z6a7B8c9D0e1F2g3H4i5J6k7L8m9N0\n-----END RSA PRIVATE KEY-----",
    "url_password": "s3cr3tP4ssw0rd",
    "github_pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
    # the kinds of issue #14
    "slack_app_token": "xapp-1-A0123ABCDEF-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    "stripe_webhook_secret": "whsec_FAKEfake0123456789abcdefFAKEfake01",
    "google_oauth_client_secret": "GOCSPX-FAKEfake0123456789abcdefABCD",
    "gcp_private_key_id": "0123456789abcdef0123456789abcdeffedcba98",
    "npm_token": "npm_FAKEfake0123456789abcdefghijklmnopqr",
    "huggingface_token": "hf_FAKEfakeAbCdEfGhIjKlMnOpQrStUvWxYz",
    "sendgrid_api_key": "SG.FAKEfake0123456789abcd.FAKEfake0123456789abcdefghijklmnopqrstuvwxy",
    "pypi_token": "pypi-AgEIcHlwaS5vcmcCJFAKEfake0123456789abcdefghijklmnopqrstuvwxyzABCDEF",
    "docker_token": "dckr_pat_FAKEfake0123456789abcdefgh",
    "digitalocean_token": "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "vault_token": "hvs.CAESIFAKEfake0123456789abcdefghijklmnopqrstuv",
    "twilio_api_key": "SK0123456789abcdef0123456789abcdef",
    "twilio_auth_token": "fedcba9876543210fedcba9876543210",
    "discord_bot_token": "MTA5NzY1NDMyMTA5ODc2NTQz.GFaKeA.FAKEfake0123456789abcdefghijklmn",
    "telegram_bot_token": "123456789:AAFAKEfake0123456789abcdefghijklmno",
    "aws_session_token": "FwoGZXIvYXdzEFAKEaDFAKEfakeSessionTokenForTestsOnly0123456789abcdefghij"
    "klmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+fakeFAKE==",
    "aws_session_token_sts": "IQoJb3JpZ2luX2VjEFAKEaDFAKEfakeSessionTokenForTestsOnly0123456789"
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+fakeFAKE==",
    "azure_storage_key": "FAKEfake0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    "0123456789+/FAKEfake012==",
    "azure_sb_key": "FAKEfake0123456789abcdefABCDEF0123456789abc=",
    "azure_sas_signature": "FAKEfake0123456789abcdefABCDEF%2BfakeFAKE%3D",
    "azure_client_secret": "abc8Q~FAKEfake0123456789abcdefghij.FAKE",
    "age_secret_key": "AGE-SECRET-KEY-1QQFAKEFAKEFAKE2345678FAKEFAKEFAKE2345678FAKEFAKEFAKE234567",
    "openssh_key": "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBGQUtFZmFrZUZBS0VmYWtlRkFLRWZha2VGQUtFZmFrZQAAAJBGQUtFZmFr\n"
    "-----END OPENSSH PRIVATE KEY-----",
    "putty_private_lines": "AAAAIFAKEfakeFAKEfakePrivateKeyMaterial0123456789abcdefgh",
    "kube_client_key": "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpGQUtFZmFrZUZBS0VmYWtl",
    "basic_auth": "cGxhbnRlZDpGQUtFLXBhc3N3b3JkLTEyMw==",
    "http_token": "0123456789abcdef0123456789abcdef01234567",
    "password": "FAKEpa55w0rd",
    "password_at": "p@ss:w0rd@FAKE",
    "password_long": "FAKE" + "x9Y8" * 70,
    "url_token": "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b",
    "api_key": "FAKEfake0123456789abcdef",
    "secret_key": "django-insecure-FAKE0123456789abcdef",
    "token": "FAKEfake0123456789abcdef",
}

#: kinds whose marker differs from the SECRETS key
MARKER_KIND = {
    "github_pat": "github_token",
    "slack_app_token": "slack_token",
    "aws_session_token_sts": "aws_session_token",
    "azure_sb_key": "azure_storage_key",
    "openssh_key": "private_key",
    "putty_private_lines": "private_key",
    "kube_client_key": "private_key",
    "basic_auth": "http_auth",
    "http_token": "http_auth",
    "password_at": "url_password",
    "password_long": "url_password",
}

_PUTTY = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: planted\n"
    "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIFAKEfakeFAKEfakePublicKey0123456789abcd\n"
    "Private-Lines: 1\n{}\nPrivate-MAC: 0123456789abcdef0123456789abcdef"
)

#: how each secret is written into a fixture's text (some need a context to be one)
_CONTEXT = {
    "aws_secret_key": "aws_secret_access_key = {}",
    "bearer_token": "Authorization: Bearer {}",
    "url_password": "DATABASE_URL=postgres://admin:{}@db.internal:5432/app",
    "gcp_private_key_id": '{{"private_key_id": "{}"}}',
    "twilio_auth_token": "TWILIO_AUTH_TOKEN={}",
    "azure_storage_key": "DefaultEndpointsProtocol=https;AccountName=p;AccountKey={};"
    "EndpointSuffix=core.windows.net",
    "azure_sb_key": "Endpoint=sb://p.servicebus.windows.net/;SharedAccessKey={}",
    "azure_sas_signature": "https://p.blob.core.windows.net/c/f?sv=2022-11-02&sig={}",
    "kube_client_key": "client-key-data: {}",
    "basic_auth": "Authorization: Basic {}",
    "http_token": "Authorization: token {}",
    "password": "DB_PASSWORD={}",
    "password_at": "mysql://app:{}@db.internal/app",
    "password_long": "amqp://guest:{}@mq.internal:5672/",
    "url_token": "https://{}@git.example.com/org/repo.git",
    "api_key": "X-API-Key: {}",
    "secret_key": "SECRET_KEY={}",
    "token": "access_token={}",
}


def in_context(kind: str, secret: str) -> str:
    if kind == "putty_private_lines":
        return _PUTTY.format(secret)
    return _CONTEXT.get(kind, "{}").format(secret)


#: text that looks a little like a secret and must come out as it went in
LOOKALIKES: list[str] = [
    "pip install scikit-learn (sk-learn) for the task-runner-configuration-for-the-build job",
    "risk-assessment-2024-quarterly-summary-document",
    "AKIA alone, or AKIAEXAMPLE, is not a key",
    "ghp_short is too short to be a token",
    "the bearer of bad news; a Bearer token expires in 3600 seconds",
    "eyJhbGciOiJIUzI1NiJ9 is only a header",
    "http://localhost:8080/path and user@example.com and git@github.com:org/repo.git",
    "-----BEGIN PUBLIC KEY-----",
    "xoxo, see you soon",
    "use sk_live_ keys in production, sk_test_ keys in CI",
    "secret_access_key: <your key here>",
    "glpat- tokens are made in GitLab's settings",
    "AIza is how Google keys begin",
    "https://hooks.slack.com/ is Slack's webhook host",
    # issue #14: prose, code and names without values
    "the password: field is required",
    "AKIA is a prefix, and so are ghp_, xoxb-, hf_ and npm_",
    "sk-learn-compatible-estimator-v2 and the-task-sk-runner-for-builds-2024",
    "set DB_PASSWORD and GITHUB_TOKEN in your environment, then export API_KEY",
    'password = os.environ["DB_PASSWORD"]',
    "def login(username: str, password: str) -> bool:",
    "password=self.password, token=request.token",
    "api_key = os.getenv('API_KEY')",
    "password: ${DB_PASSWORD}",
    "API_KEY=<your key here>",
    "SECRET_KEY=",
    "token: 3 days",
    "max_tokens: 4096, input_tokens: 12, the next_token field",
    "mkdir -p /tmp/x && git push -u origin main && docker run -u 1000:1000 img",
    "mysql -u root -p appdb (it prompts for the password)",
    "curl -u deploy https://api.example.com",
    "Authorization: Basic <base64 of user:pass>",
    "npm_config_cache and hf_hub_download and self.hf_model_name_or_path",
    "an eyJ prefix is how a JWT begins",
    "-----END RSA PRIVATE KEY-----",
    "ssh://git@github.com:22/org/repo.git and https://user@example.com:8443/x",
    "password: string; token: string | undefined",
    '"password": "********", "token": "<redacted>"',
]


def payload() -> str:
    lines = [in_context(kind, secret) for kind, secret in SECRETS.items()]
    return "\n".join(["Planted secrets:", *lines, "Look-alikes:", *LOOKALIKES])


# -- every kind in every form (tests/test_redact.py runs them through convert) ----


@dataclass(frozen=True)
class Plant:
    """A made-up secret of one kind, and how people keep it."""

    kind: str  # the marker's kind
    value: str  # the secret, exactly as pasted
    name: str  # the variable it lives in (NAME=value, YAML, JSON, --flag forms)
    #: "prefix": known by its own shape, wherever it sits; "run": known by its own
    #: shape where a run of its characters starts (not inside an identifier);
    #: "named": known only by the name it is bound to; "password": a password
    #: (named, and in URLs and command lines)
    shape: str


@dataclass(frozen=True)
class Case:
    label: str
    kind: str  # the marker expected
    text: str  # the text the secret sits in
    secret: str  # the part of it the marker replaces

    @property
    def expected(self) -> str:
        return self.text.replace(self.secret, f"[REDACTED:{self.kind}]")


_HAND_PLANTS: list[Plant] = [
    Plant("anthropic_api_key", SECRETS["anthropic_api_key"], "ANTHROPIC_API_KEY", "prefix"),
    Plant("openai_api_key", SECRETS["openai_api_key"], "OPENAI_API_KEY", "prefix"),
    Plant("aws_access_key", SECRETS["aws_access_key"], "AWS_ACCESS_KEY_ID", "prefix"),
    Plant("aws_secret_key", SECRETS["aws_secret_key"], "AWS_SECRET_ACCESS_KEY", "named"),
    Plant("aws_session_token", SECRETS["aws_session_token"], "AWS_SESSION_TOKEN", "prefix"),
    Plant("github_token", SECRETS["github_token"], "GITHUB_TOKEN", "prefix"),
    Plant("github_token", SECRETS["github_pat"], "GH_TOKEN", "prefix"),
    Plant("gitlab_token", SECRETS["gitlab_token"], "GITLAB_TOKEN", "prefix"),
    Plant("slack_token", SECRETS["slack_token"], "SLACK_BOT_TOKEN", "prefix"),
    Plant("slack_token", SECRETS["slack_app_token"], "SLACK_APP_TOKEN", "prefix"),
    Plant("slack_webhook", SECRETS["slack_webhook"], "SLACK_WEBHOOK_URL", "prefix"),
    Plant("stripe_key", SECRETS["stripe_key"], "STRIPE_SECRET_KEY", "prefix"),
    Plant(
        "stripe_webhook_secret", SECRETS["stripe_webhook_secret"], "STRIPE_WEBHOOK_SECRET", "prefix"
    ),
    Plant("google_api_key", SECRETS["google_api_key"], "GOOGLE_API_KEY", "prefix"),
    Plant("google_oauth_token", SECRETS["google_oauth_token"], "GOOGLE_ACCESS_TOKEN", "prefix"),
    Plant(
        "google_oauth_client_secret",
        SECRETS["google_oauth_client_secret"],
        "GOOGLE_CLIENT_SECRET",
        "prefix",
    ),
    Plant("gcp_private_key_id", SECRETS["gcp_private_key_id"], "private_key_id", "named"),
    Plant("npm_token", SECRETS["npm_token"], "NPM_TOKEN", "prefix"),
    Plant("huggingface_token", SECRETS["huggingface_token"], "HF_TOKEN", "prefix"),
    Plant("sendgrid_api_key", SECRETS["sendgrid_api_key"], "SENDGRID_API_KEY", "prefix"),
    Plant("pypi_token", SECRETS["pypi_token"], "PYPI_TOKEN", "prefix"),
    Plant("docker_token", SECRETS["docker_token"], "DOCKER_TOKEN", "prefix"),
    Plant("digitalocean_token", SECRETS["digitalocean_token"], "DIGITALOCEAN_TOKEN", "prefix"),
    Plant("vault_token", SECRETS["vault_token"], "VAULT_TOKEN", "prefix"),
    Plant("twilio_api_key", SECRETS["twilio_api_key"], "TWILIO_API_KEY", "prefix"),
    Plant("twilio_auth_token", SECRETS["twilio_auth_token"], "TWILIO_AUTH_TOKEN", "named"),
    Plant("discord_bot_token", SECRETS["discord_bot_token"], "DISCORD_BOT_TOKEN", "run"),
    Plant("telegram_bot_token", SECRETS["telegram_bot_token"], "TELEGRAM_BOT_TOKEN", "prefix"),
    Plant("azure_storage_key", SECRETS["azure_storage_key"], "AZURE_STORAGE_ACCOUNT_KEY", "named"),
    Plant("azure_client_secret", SECRETS["azure_client_secret"], "AZURE_CLIENT_SECRET", "run"),
    Plant("jwt", SECRETS["jwt"], "ID_TOKEN", "run"),
    Plant("age_secret_key", SECRETS["age_secret_key"], "SOPS_AGE_KEY", "prefix"),
    Plant("password", SECRETS["password"], "DB_PASSWORD", "password"),
    Plant("password", SECRETS["password"], "SMTP_PASS", "password"),
    Plant("api_key", SECRETS["api_key"], "WEATHER_API_KEY", "named"),
    Plant("secret_key", SECRETS["secret_key"], "SECRET_KEY", "named"),
    Plant("secret_key", SECRETS["secret_key"], "JWT_SECRET", "named"),
    Plant("token", SECRETS["token"], "ACCESS_TOKEN", "named"),
]


def _hand_masks(kind: SecretKind) -> bool:
    """Does the hand-written kind of the same name mask this example (all but a
    public prefix of up to 8 bytes), before the gitleaks kind sees it?"""
    ours = [k for k in redact.KINDS if k.name == kind.name and k.rule is None]
    out = orjson.loads(redact.mask(kind.probe, ours))["text"] if ours else kind.example
    marker = f"[REDACTED:{kind.name}]"
    return marker in out and len(out.replace(marker, "")) <= 8


def _gitleaks_plants() -> tuple[list[Plant], list[Case]]:
    """One plant per gitleaks rule kept (translator/secrets/gitleaks.py), from its first
    pattern's example: a prefix kind as its secret; a kind known by a name as the
    name (its keyword, ``_KEY`` after it) and the secret. A kind known by other
    text before it (a URL's scheme) is its example alone."""
    plants: list[Plant] = []
    alone: list[Case] = []
    seen: set[str] = set()
    for kind in redact.GITLEAKS:
        if kind.rule is None or kind.rule in seen:
            continue
        seen.add(kind.rule)
        m = kind.exact.search(kind.probe)
        assert m is not None, kind.rule
        secret = m["secret"].decode()
        if _hand_masks(kind):
            continue  # (its forms are the hand-written kind's: xoxe.[REDACTED:slack_token])
        if "keep" not in kind.exact.groupindex:
            plants.append(
                Plant(kind.name, kind.example, kind.rule.upper().replace("-", "_"), "prefix")
            )
        elif m["keep"].endswith(b"="):
            keyword = kind.example[: kind.example.index("=" + secret)]
            plants.append(
                Plant(kind.name, secret, keyword.upper().replace("-", "_") + "_KEY", "named")
            )
        else:
            alone.append(Case(f"{kind.name} / its example", kind.name, kind.example, secret))
    return plants, alone


_GITLEAKS_PLANTS, _GITLEAKS_ALONE = _gitleaks_plants()
#: the hand-written kinds' plants, then gitleaks' (its kinds in the same forms)
PLANTS: list[Plant] = _HAND_PLANTS + _GITLEAKS_PLANTS


def _kebab(name: str) -> str:
    return name.lower().replace("_", "-")


#: form -> (the shapes it applies to, text holding the value)
_ALL = ("prefix", "run", "named", "password")
_OWN = ("prefix", "run")
FORMS: dict[str, tuple[tuple[str, ...], Any]] = {
    "NAME=value": (_ALL, lambda p: f"{p.name}={p.value}"),
    'NAME="value"': (_ALL, lambda p: f'{p.name}="{p.value}"'),
    "NAME='value'": (_ALL, lambda p: f"{p.name}='{p.value}'"),
    "export NAME=": (_ALL, lambda p: f"export {p.name}={p.value} && ./deploy.sh"),
    ".env line": (_ALL, lambda p: f"# .env\nDEBUG=1\n{p.name}={p.value}\nPORT=8080\n"),
    "YAML key: value": (_ALL, lambda p: f"config:\n  {p.name.lower()}: {p.value}\n  port: 80"),
    "YAML NAME: value": (_ALL, lambda p: f"environment:\n  {p.name}: {p.value}\n"),
    'JSON "key": "value"': (_ALL, lambda p: f'{{"{p.name.lower()}": "{p.value}", "n": 1}}'),
    "--flag=value": (_ALL, lambda p: f"./tool --{_kebab(p.name)}={p.value} --verbose"),
    # (#39: the space form, as people type it, and an argv list)
    "--flag value": (_ALL, lambda p: f"./tool --{_kebab(p.name)} {p.value} --verbose"),
    '"--flag", "value"': (_ALL, lambda p: f'["./tool", "--{_kebab(p.name)}", "{p.value}"]'),
    "Python kwarg": (_ALL, lambda p: f'connect({p.name.lower()}="{p.value}", timeout=3)'),
    "query string": (
        _ALL,
        lambda p: f"GET https://api.example.com/v1/x?page=2&{p.name.lower()}={p.value}&limit=5",
    ),
    "bare in prose": (_OWN, lambda p: f"the value is {p.value} (from the vault)"),
    "path": (_OWN, lambda p: f"cat /run/secrets/{p.value}/config"),
    "inside an identifier": (("prefix",), lambda p: f"foo_{p.value}"),
    "URL user": (_OWN, lambda p: f"git clone https://{p.value}@git.example.com/org/repo.git"),
    "URL password": (_OWN, lambda p: f"https://oauth2:{p.value}@gitlab.example.com/x.git"),
    "curl -u user:pass": (
        (*_OWN, "password"),
        lambda p: f"curl -u deploy:{p.value} https://api.example.com",
    ),
    "mysql -pPASS": (("password",), lambda p: f"mysql -h db -u root -p{p.value} app"),
}

_SPACED = ("--flag value", '"--flag", "value"')
#: values whose shape breaks a form (a URL holds no URL, "@" or ":" as a user)
_HAND = {p.kind for p in _HAND_PLANTS}
_SKIP = (
    {("slack_webhook", f) for f in ("URL user", "URL password", "curl -u user:pass", "path")}
    | {
        # a base64 token holds "/": in a path it takes the rest of the path with it
        ("aws_session_token", "path"),
    }
    | {
        ("telegram_bot_token", "URL user"),
        ("telegram_bot_token", "curl -u user:pass"),
        ("telegram_bot_token", "URL password"),
    }
)


#: the byte that follows a value in a form: a secret whose bytes go on over it
#: (a base64 token in a path) takes more than itself
_AFTER = {"path": "/config", "URL user": "@git.example.com", "URL password": "@gitlab"}


def _skipped(plant: Plant, form: str) -> bool:
    """A value whose own shape breaks a form: a URL holds no ``/``, ``@`` or ``:`` in
    its user or password (nor ``curl -u`` in its user); a gitleaks secret whose bytes
    would go on over what follows it in the form, or whose prefix does not follow
    ``_`` (its own bytes are the secret's: docs/security.md); a gitleaks name with
    ``_`` in it as a ``--flag`` (a kebab-case flag holds none)."""
    if (plant.kind, form) in _SKIP:
        return True
    if form in _SPACED and plant.shape == "named" and plant not in _HAND_PLANTS:
        return True  # (gitleaks' names are bound by = or :; ours spaced too)
    if plant.kind in _HAND:
        return False
    if plant.shape == "named":
        return form == "--flag=value" and "_" in plant.name[: -len("_KEY")]
    if form in ("URL user", "URL password", "curl -u user:pass") and any(
        c in plant.value for c in ":/@"
    ):
        return True
    if form == "inside an identifier" and any(
        rb"(?<![0-9A-Z_a-z]" in k.source for k in redact.GITLEAKS if k.name == plant.kind
    ):
        return True  # (a prefix with "_" before a secret of "_": pscale_tkn_…)
    if form in _AFTER:
        text = plant.value + _AFTER[form]
        line = orjson.dumps({"text": text}) + b"\n"
        kinds = [k for k in redact.GITLEAKS if k.name == plant.kind]
        masked = orjson.loads(redact.mask(line, kinds))["text"]
        return bool(masked != f"[REDACTED:{plant.kind}]{_AFTER[form]}")
    return False


def _special() -> list[Case]:
    """Kinds and forms that are a context more than a value."""
    s = SECRETS
    sts = s["aws_session_token_sts"]
    azure = s["azure_storage_key"]
    sig = s["azure_sas_signature"]
    pw = s["password"]
    cases = [
        Case("PEM block", "private_key", f"key:\n{s['private_key']}\nend", s["private_key"]),
        Case("PEM block, cut off", "private_key", s["private_key"][:120], s["private_key"][:120]),
        Case(
            "PEM in JSON text",
            "private_key",
            '{"type": "service_account", "private_key": "'
            + s["private_key"].replace("\n", "\\n")
            + '"}',
            s["private_key"].replace("\n", "\\n"),
        ),
        Case(
            "PEM as YAML block",
            "private_key",
            "tls:\n  key: |\n    " + s["private_key"].replace("\n", "\n    "),
            s["private_key"].replace("\n", "\n    "),
        ),
        Case("OpenSSH key", "private_key", s["openssh_key"], s["openssh_key"]),
        Case(
            "PuTTY .ppk",
            "private_key",
            in_context("putty_private_lines", s["putty_private_lines"]),
            s["putty_private_lines"],
        ),
        Case(
            "kubeconfig client-key-data",
            "private_key",
            "users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTi"
            f"BDRVJUSUZJQ0FURS0tLS0t\n    client-key-data: {s['kube_client_key']}\n",
            s["kube_client_key"],
        ),
        Case(
            "AWS STS JSON",
            "aws_secret_key",
            '{"Credentials": {"SecretAccessKey": "'
            + s["aws_secret_key"]
            + '", "Expiration": "2030-01-01T00:00:00Z"}}',
            s["aws_secret_key"],
        ),
        Case(
            "AWS STS JSON session token",
            "aws_session_token",
            '{"Credentials": {"SessionToken": "' + sts + '"}}',
            sts,
        ),
        Case(
            "aws_session_token in ~/.aws/credentials",
            "aws_session_token",
            f"[default]\naws_session_token = {sts}\n",
            sts,
        ),
        Case(
            "Azure connection string",
            "azure_storage_key",
            "DefaultEndpointsProtocol=https;AccountName=planted;AccountKey="
            + azure
            + ";EndpointSuffix=core.windows.net",
            azure,
        ),
        Case(
            "Azure Service Bus",
            "azure_storage_key",
            "Endpoint=sb://planted.servicebus.windows.net/;SharedAccessKeyName=root;"
            "SharedAccessKey=" + s["azure_sb_key"],
            s["azure_sb_key"],
        ),
        Case(
            "SAS &sig=",
            "azure_sas_signature",
            "https://planted.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig="
            + sig
            + "&se=2030-01-01",
            sig,
        ),
        Case(
            "SAS ?sig=",
            "azure_sas_signature",
            "https://planted.blob.core.windows.net/c/f.txt?sig=" + sig,
            sig,
        ),
        Case(
            "SAS in a connection string",
            "azure_sas_signature",
            "BlobEndpoint=https://x.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02"
            "&ss=b&sig=" + sig,
            sig,
        ),
        Case(
            "Authorization: Bearer",
            "bearer_token",
            f"curl -H 'Authorization: Bearer {s['bearer_token']}' https://api.example.com",
            s["bearer_token"],
        ),
        Case(
            "bearer in JSON headers",
            "bearer_token",
            '{"headers": {"authorization": "Bearer ' + s["bearer_token"] + '"}}',
            s["bearer_token"],
        ),
        Case(
            "Authorization: Basic",
            "http_auth",
            f"Authorization: Basic {s['basic_auth']}",
            s["basic_auth"],
        ),
        Case(
            "Authorization: token",
            "http_auth",
            f'curl -H "Authorization: token {s["http_token"]}" https://api.example.com',
            s["http_token"],
        ),
        Case("X-API-Key header", "api_key", f"X-API-Key: {s['api_key']}", s["api_key"]),
        Case(
            "x-api-key in JSON headers",
            "api_key",
            '{"headers": {"x-api-key": "' + s["api_key"] + '"}}',
            s["api_key"],
        ),
        Case(
            "URL user:password",
            "url_password",
            f"DATABASE_URL=postgres://admin:{pw}@db.internal:5432/app",
            pw,
        ),
        Case("URL empty user", "url_password", f"redis://:{pw}@cache.internal:6379/0", pw),
        Case(
            "URL @ in the password",
            "url_password",
            f"mysql://app:{s['password_at']}@db.internal/app",
            s["password_at"],
        ),
        Case(
            "URL password > 256 chars",
            "url_password",
            f"amqp://guest:{s['password_long']}@mq.internal:5672/",
            s["password_long"],
        ),
        Case(
            "URL token as user",
            "url_token",
            f"git clone https://{s['url_token']}@git.example.com/org/repo.git",
            s["url_token"],
        ),
        Case(
            "URL x-access-token:TOKEN",
            "url_password",
            f"https://x-access-token:{s['url_token']}@github.com/org/repo.git",
            s["url_token"],
        ),
        Case("curl --user", "password", f"curl --user admin:{pw} https://x.example.com", pw),
        Case(
            "curl -u TOKEN (a token as the user)",
            "github_token",
            f"curl -u {s['github_token']} https://api.github.com/user",
            s["github_token"],
        ),
        Case("-pPASS mariadb", "password", f"mariadb-dump -u root -p{pw} --all-databases", pw),
        Case("password in SQL", "password", f"ALTER USER app WITH PASSWORD '{pw}';", pw),
        Case(
            "quoted password with spaces",
            "password",
            'db:\n  password: "correct horse battery staple"',
            "correct horse battery staple",
        ),
        Case(
            "Telegram bot API URL",
            "telegram_bot_token",
            f"https://api.telegram.org/bot{s['telegram_bot_token']}/sendMessage",
            s["telegram_bot_token"],
        ),
        Case(
            "Discord bot header",
            "discord_bot_token",
            f"Authorization: Bot {s['discord_bot_token']}",
            s["discord_bot_token"],
        ),
    ]
    return cases


def cases() -> list[Case]:
    """Every planted kind in every form it applies to, then the special forms."""
    out: list[Case] = []
    for plant in PLANTS:
        for form, (shapes, make) in FORMS.items():
            if plant.shape in shapes and not _skipped(plant, form):
                out.append(
                    Case(
                        f"{plant.kind} ({plant.name}) / {form}",
                        plant.kind,
                        make(plant),
                        plant.value,
                    )
                )
    return out + _special() + _GITLEAKS_ALONE + ISSUE_23_22


#: issue #23 item 22: seven kinds of public, well-known formats that passed through
#: before gitleaks' rules (each case as the issue names it)
ISSUE_23_22: list[Case] = [
    Case(
        "#23.22 npm token after a space",
        "npm_token",
        "npm config set //registry.npmjs.org/:_authToken npm_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
        "npm_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
    ),
    Case(
        "#23.22 AWS secret key as a JSON value",
        "aws_secret_key",
        '{"region": "eu-west-1", "secretAccessKey": "Zq8vR2mK7xT4pL9wN3bH6cJ1dF5gS0aE2yU8iO4k"}',
        "Zq8vR2mK7xT4pL9wN3bH6cJ1dF5gS0aE2yU8iO4k",
    ),
    Case(
        "#23.22 SendGrid key (segments of other lengths)",
        "sendgrid_api_key",
        "SENDGRID_API_KEY: SG.NqVwYS81VP7Hb1DX8pPd.uoV8FWnFbB0JxXujr4qqaaABvvLOzAxzXMcU1vsHiQMaR",
        "SG.NqVwYS81VP7Hb1DX8pPd.uoV8FWnFbB0JxXujr4qqaaABvvLOzAxzXMcU1vsHiQMaR",
    ),
    Case(
        "#23.22 age secret key (age-keygen output)",
        "age_secret_key",
        "# created: 2026-01-01T00:00:00Z\n# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2el"
        "w8zmrj2kg5sfn9aqmcac8p\nAGE-SECRET-KEY-196UM9P0REC4HN4F5KGTAF9XR5KFFS7G5GQ9FVXGUD22YY5CD"
        "PDXT4A2M4J\n",
        "AGE-SECRET-KEY-196UM9P0REC4HN4F5KGTAF9XR5KFFS7G5GQ9FVXGUD22YY5CDPDXT4A2M4J",
    ),
    Case(
        "#23.22 Telegram bot token (as in Telegram's docs)",
        "telegram_bot_token",
        "bot = Bot('110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw')",
        "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    ),
    Case(
        "#23.22 unsigned JWT (alg none, no signature part)",
        "jwt",
        "id_token eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiIxMjM0NTY3ODkwIiwiYWRtaW4iOnRydWV9"
        " accepted",
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiIxMjM0NTY3ODkwIiwiYWRtaW4iOnRydWV9",
    ),
    Case(
        "#23.22 bearer token without digits",
        "bearer_token",
        "curl -H 'Authorization: Bearer vRmKxTpLwNbHcJdFgSaEyUiOkMnBvCxZqWeRtY' https://x.example",
        "vRmKxTpLwNbHcJdFgSaEyUiOkMnBvCxZqWeRtY",
    ),
]

#: ordinary text that gitleaks' kinds must leave as it is: prose, code, ids, hashes,
#: image data (each a line of a transcript)
NOT_SECRETS: list[str] = [
    "The token bucket lets each client send a burst, then one request per second; the "
    "secret to a fast build is caching, and the key insight is that Twitter, Slack and "
    "Jira all rate-limit by API key.",
    "const twitterApiKeyFieldName = 'twitterApiKey'; function getGithubToken(env) {}",
    "def get_slack_webhook_url(self) -> str: return self.settings.slack_webhook_url",
    "heroku_app_name = my-app-staging; discord_channel = general; sentry_dsn = None",
    "request 0f0e0d0c-0b0a-4908-8706-050403020100 failed; session_id "
    "5eccd76e-a2bd-46d3-9ac7-285807858239",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8, parent a94a8fe5ccb19ba61c4c0873d391e987"
    "982fbbd3, sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "TWITTER_API_KEY=xxxxxxxxxxxxxxxxxxxxxxxxx and MAILGUN_KEY=${MAILGUN_KEY}",
    "linear regression: y = 3.2x + 1; the dropbox folder and the okta tenant",
    "s.isdigit() and s.startswith('ey') for s in names; os.environ.get('NPM_TOKEN')",
    # base64 image data, as a tool's output carries it (a PNG's bytes, made up)
    "data:image/png;base64,"
    + base64.b64encode(
        b"\x89PNG\r\n\x1a\n" + b"".join(hashlib.sha256(b"%d" % i).digest() for i in range(1000))
    ).decode(),
]


def structural_cases() -> list[tuple[str, str, str, str]]:
    """(label, kind, name, secret): a value in the line's own JSON (a tool's input)."""
    return [
        (f"{p.kind} ({p.name}) / tool input", p.kind, p.name, p.value)
        for p in PLANTS
        if p.kind != "telegram_bot_token"
    ]


def _plant_blocks(content: Any) -> None:
    if not isinstance(content, list):
        return
    for block in content:
        kind = block.get("type")
        if kind == "text":
            block["text"] += "\n" + payload()
        elif kind == "thinking":
            block["thinking"] += "\n" + payload()
        elif kind == "tool_use" and isinstance(block.get("input"), dict):
            block["input"]["command"] = block["input"].get("command", "") + " # " + payload()
        elif kind == "tool_result":
            if isinstance(block.get("content"), str):
                block["content"] += "\n" + payload()
            elif isinstance(block.get("content"), list):
                _plant_blocks(block["content"])


def _plant(record: dict[str, Any]) -> dict[str, Any]:
    message = record.get("message")
    if isinstance(message, dict):
        if isinstance(message.get("content"), str):
            message["content"] += "\n" + payload()
        else:
            content = message.get("content")
            if (
                record.get("type") == "assistant"
                and isinstance(content, list)
                and any(b.get("type") == "text" for b in content)
            ):
                # a thinking block before the text: thinking is a place secrets leak to
                content.insert(
                    0,
                    {"type": "thinking", "thinking": "Let me think.", "signature": "c2lnbmF0dXJl"},
                )
            _plant_blocks(message.get("content"))
    result = record.get("toolUseResult") or record.get("tool_use_result")
    if isinstance(result, dict) and isinstance(result.get("stdout"), str):
        result["stdout"] += "\n" + payload()
    return record


def write_fixtures() -> None:
    for source, name in (("claude-session", "print_mode_bash"), ("claude-stream", "bash")):
        src = ROOT / "testdata" / source / f"{name}.jsonl"
        out = ROOT / "testdata" / source / "secrets.jsonl"
        lines = [orjson.dumps(_plant(orjson.loads(raw))) for raw in src.read_bytes().splitlines()]
        out.write_bytes(b"\n".join(lines) + b"\n")
        print(f"wrote {out.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    write_fixtures()
