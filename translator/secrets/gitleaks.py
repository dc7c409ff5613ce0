"""gitleaks' rule set, translated into secret kinds (translator/secrets/).

The secret kinds with a public, well-known shape are not ours to keep: gitleaks
(MIT) maintains ~220 of them, with the keywords, entropy floors and allowlists that
keep its false positives down. ``secrets/gitleaks.toml`` is its ``config/gitleaks.toml``
byte for byte (commit and digest in ``secrets/gitleaks.source.json``); this module
translates it into ``secrets/gitleaks.kinds.json``, which :mod:`translator.secrets.redact`
loads at import (~3 ms). Translating at every start would cost ~35 ms (tomllib
alone reads the file in ~13 ms; a start is ~120 ms), so it is done when the rule
file changes: ``scripts/update-secret-rules`` fetches a new one and runs
``python -m streamv1.translator.secrets.gitleaks``, which also writes docs/security.md's two
tables; tests/test_gitleaks.py translates the shipped file again and fails when
either differs, so neither is edited by hand.

**How a rule is translated.** Its regex (Go's RE2) is read into a tree of byte
sets (:mod:`translator.secrets.gitleaks_regex`), each alternative of it becomes a
pattern in the design of :mod:`translator.secrets.redact`
(:mod:`translator.secrets.gitleaks_patterns`, written in Python's ``re`` syntax by
:mod:`translator.secrets.gitleaks_emit`), and ``entropy``, the rule's allowlists
(``regexes``, ``stopwords``; ``paths`` mean nothing in a transcript) and the
global allowlist become a check made on each match. This module holds the rule
set's side: what is decided per rule (the tables below), the checks, a made-up
example of each pattern, the order of the kinds, and the files.

Left out, each with its reason (the table in docs/security.md): rules for a file's
path; ``COVERED``, masked by a hand-written kind in more forms (a test masks made-up
secrets of each with it); ``REFUSED``, which the translation refuses, with why
that is right (a test checks it refuses them); rules with an earlier rule's
pattern; ``LEFT_OUT``, by choice. A kind's marker is its rule id with ``_`` for
``-`` (``[REDACTED:gitlab_feed_token]``), or the name of the hand-written kind of
the same secret (``ALIASES``).
"""

from __future__ import annotations

import hashlib
import random
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from streamv1.translator.secrets.gitleaks_emit import plain
from streamv1.translator.secrets.gitleaks_kinds import from_json
from streamv1.translator.secrets.gitleaks_patterns import Pattern, expand, translate_branch
from streamv1.translator.secrets.gitleaks_regex import Unsupported, generate, parse

# -- what is decided per rule ------------------------------------------------------------

#: rule id -> the hand-written kind of the same secret (its marker name)
ALIASES = {
    "age-secret-key": "age_secret_key",
    "sendgrid-api-token": "sendgrid_api_key",
    "aws-access-token": "aws_access_key",
    "stripe-access-token": "stripe_key",
    "slack-webhook-url": "slack_webhook",
    "slack-config-access-token": "slack_token",
    "slack-app-token": "slack_token",
    "huggingface-access-token": "huggingface_token",
    "telegram-bot-api-token": "telegram_bot_token",
    "vault-service-token": "vault_token",
    "vault-batch-token": "vault_token",
    "digitalocean-refresh-token": "digitalocean_token",  # (its hex in either case)
}

#: rule id -> the hand-written kind that masks every match of it (tests/test_gitleaks.py
#: checks each example); left out
COVERED = {
    "anthropic-admin-api-key": "anthropic_api_key",
    "anthropic-api-key": "anthropic_api_key",
    "openai-api-key": "openai_api_key",
    "github-app-token": "github_token",
    "github-fine-grained-pat": "github_token",
    "github-oauth": "github_token",
    "github-pat": "github_token",
    "github-refresh-token": "github_token",
    "gitlab-cicd-job-token": "gitlab_token",
    "gitlab-deploy-token": "gitlab_token",
    "gitlab-feature-flag-client-token": "gitlab_token",
    "gitlab-incoming-mail-token": "gitlab_token",
    "gitlab-kubernetes-agent-token": "gitlab_token",
    "gitlab-oauth-app-secret": "gitlab_token",
    "gitlab-pat": "gitlab_token",
    "gitlab-pat-routable": "gitlab_token",
    "gitlab-ptt": "gitlab_token",
    "gitlab-runner-authentication-token": "gitlab_token",
    "gitlab-runner-authentication-token-routable": "gitlab_token",
    "gitlab-scim-token": "gitlab_token",
    "gcp-api-key": "google_api_key",
    "npm-access-token": "npm_token",
    "pypi-upload-token": "pypi_token",
    "digitalocean-access-token": "digitalocean_token",
    "digitalocean-pat": "digitalocean_token",
    "twilio-api-key": "twilio_api_key",
    "slack-bot-token": "slack_token",
    "slack-legacy-bot-token": "slack_token",
    "slack-legacy-token": "slack_token",
    "slack-legacy-workspace-token": "slack_token",
    "slack-user-token": "slack_token",
    "slack-config-refresh-token": "slack_token",
    "azure-ad-client-secret": "azure_client_secret",
}

#: rules left out by choice (they translate): why
LEFT_OUT = {
    "generic-api-key": "any value bound to a name holding access, auth, key, secret, token, "
    "password… (1,400 stopwords keep its false positives down in "
    "source trees); the named kinds (`password`, `api_key`, "
    "`secret_key`, `token`) do this with stand-in rules made for prose "
    "and code",
    "jwt": 'every JWT starts `eyJ` (base64 of `{"`), and the hand-written `jwt` masks '
    "those, unsigned ones too, where a run of their characters starts; this rule's "
    "`ey` and any other byte is no JWT, and it would also start inside an identifier",
}

#: rules the translation refuses (tests/test_gitleaks.py checks it does): why that is
#: right, or what masks their secrets instead
REFUSED = {
    "private-key": "the hand-written `private_key` is stronger: it masks a block cut off "
    "before its END line, escaped newlines, YAML blocks and key lines "
    "arriving one by one; this rule reads lazily to the END line "
    "(`[\\s\\S-]{64,}?`: not linear)",
    "curl-auth-header": "reads `.*?` over up to five lines to find `-H`: not linear; the "
    "header itself is masked by `bearer_token`, `http_auth` and "
    "`api_key`",
    "curl-auth-user": "reads `.*` over up to five lines to find `-u`: not linear; "
    "`curl -u user:…` and `--user` are masked by `password`",
    "aws-amazon-bedrock-api-key-short-lived": "matches only the token's fixed prefix "
    "(`bedrock-api-key-YmVkcm9jay5hbWF6b25hd3Mu"
    "Y29t`): masking it would leave the secret",
    "facebook-access-token": "no literal in it (15 digits, `|` or `%`, then 27–40 of a "
    "class): `re` would try it at every byte; and any such run "
    "would be masked, `facebook` or not",
    "sourcegraph-access-token": "its third alternative is any 40 hex digits (no literal to "
    "start from): every git commit id would be masked",
}

_EXAMPLE_TRIES = 40


@dataclass
class Kind:
    """One pattern of a kept rule, as gitleaks_kinds.py builds a SecretKind of it."""

    rule: str
    name: str
    core: bytes
    source: bytes
    example: str
    head: int = 0
    head_chars: bytes = b""
    entropy: float | None = None
    allow: tuple[bytes, ...] = ()  # (patterns on the secret)
    allow_match: tuple[bytes, ...] = ()  # (patterns on the whole match)
    stopwords: tuple[str, ...] = ()
    least: int = 0  # the fewest bytes the secret has (not written: it orders the kinds)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "name": self.name,
            "core": self.core.decode("latin-1"),
            "source": self.source.decode("latin-1"),
            "example": self.example,
        }
        if self.head:
            out["head"] = self.head
            out["head_chars"] = self.head_chars.decode("latin-1")
        if self.entropy is not None:
            out["entropy"] = self.entropy
        if self.allow:
            out["allow"] = [p.decode("latin-1") for p in self.allow]
        if self.allow_match:
            out["allow_match"] = [p.decode("latin-1") for p in self.allow_match]
        if self.stopwords:
            out["stopwords"] = list(self.stopwords)
        return out


# -- the whole rule set ----------------------------------------------------------------


@dataclass
class Translation:
    source: dict[str, str]
    kinds: list[Kind]
    left_out: list[tuple[str, str]]  # (rule id, reason)
    global_allow: tuple[bytes, ...]
    global_stopwords: tuple[str, ...]

    def to_json(self) -> bytes:
        doc = {
            "generated": "by python -m streamv1.translator.secrets.gitleaks from gitleaks.toml: "
            "do not edit",
            "source": self.source,
            "global_allow": [p.decode("latin-1") for p in self.global_allow],
            "global_stopwords": list(self.global_stopwords),
            "kinds": [k.to_json() for k in self.kinds],
            "left_out": [{"rule": r, "reason": why} for r, why in self.left_out],
        }
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def _allow_pattern(regex: str) -> bytes:
    """An allowlist regex, translated (no JSON-string limits: it reads a decoded match)."""
    node = parse(regex)
    return plain(node)


def _checks(rule: dict[str, Any]) -> tuple[tuple[bytes, ...], tuple[bytes, ...], tuple[str, ...]]:
    """A rule's allowlists that can apply to a transcript: (on the secret, on the
    match, stopwords). An allowlist of paths (alone, or with AND) never applies."""
    secret: list[bytes] = []
    match: list[bytes] = []
    stop: list[str] = []
    for allow in rule.get("allowlists", []):
        if allow.get("paths") and (
            allow.get("condition") == "AND" or not (allow.get("regexes") or allow.get("stopwords"))
        ):
            continue
        target = allow.get("regexTarget", "secret")
        if target == "line":
            continue  # (only generic-api-key has one; it is left out)
        for regex in allow.get("regexes", []):
            (match if target == "match" else secret).append(_allow_pattern(regex))
        stop += allow.get("stopwords", [])
    return tuple(secret), tuple(match), tuple(stop)


def _example(
    pattern: Pattern, kind: Kind, seed: int, globals_: tuple[tuple[bytes, ...], tuple[str, ...]]
) -> str | None:
    """A made-up match of a pattern (a name, ``=``, the secret; or the secret): one
    its core finds, its pattern matches and its checks pass. None if no try does."""
    # (masked as a line is: redact reads the shipped gitleaks.kinds.json at import)
    from streamv1.translator.secrets import redact

    before, secret, after = pattern.shape
    for attempt in range(_EXAMPLE_TRIES):
        rng = random.Random(seed * 1000 + attempt)
        text = (
            generate(before, rng, least=True)
            + generate(secret, rng)
            + generate(after, rng, least=True)
        )
        try:
            example = text.decode("ascii")
        except UnicodeDecodeError:
            continue
        made = from_json(kind.to_json() | {"example": example}, *globals_)
        if redact.marker(made.name) not in redact.mask(made.probe, [made]):
            continue
        if not re.search(made.core, made.probe):
            continue
        return example
    return None


def _rule_seed(rule_id: str) -> int:
    return int.from_bytes(hashlib.sha256(rule_id.encode()).digest()[:4], "big")


def translate_rule(
    rule: dict[str, Any], globals_: tuple[tuple[bytes, ...], tuple[str, ...]] = ((), ())
) -> list[Kind]:
    """Every alternative of a rule as a kind (:class:`Unsupported` when one does not
    fit)."""
    regex = rule.get("regex")
    if not regex:
        raise Unsupported("no regex (a file name only)")
    name = ALIASES.get(rule["id"], rule["id"].replace("-", "_"))
    allow, allow_match, stopwords = _checks(rule)
    kinds: list[Kind] = []
    seed = _rule_seed(rule["id"])
    for branch in expand(parse(regex)):
        for pattern in translate_branch(branch, rule):
            re.compile(pattern.source)
            kind = Kind(
                rule["id"],
                name,
                pattern.core,
                pattern.source,
                "",
                pattern.head,
                pattern.head_chars,
                rule.get("entropy"),
                allow,
                allow_match,
                stopwords,
                pattern.least,
            )
            example = _example(pattern, kind, seed + len(kinds), globals_)
            if example is None:
                raise Unsupported("no made-up example passes its own pattern and checks")
            kind.example = example
            kinds.append(kind)
    return kinds


def translate(toml: bytes, source: dict[str, str]) -> Translation:
    config = tomllib.loads(toml.decode("utf-8"))
    glob = config.get("allowlist", {})
    global_allow = tuple(_allow_pattern(r) for r in glob.get("regexes", []))
    global_stop = tuple(glob.get("stopwords", []))
    prefix: list[Kind] = []
    named: list[Kind] = []
    left: list[tuple[str, str]] = []
    owner: dict[bytes, str] = {}  # a pattern -> the first rule that has it
    for rule in config["rules"]:
        rid = rule["id"]
        if rid in LEFT_OUT:
            left.append((rid, LEFT_OUT[rid]))
            continue
        if rid in COVERED:
            left.append((rid, f"covered: the hand-written `{COVERED[rid]}` masks it in more forms"))
            continue
        if rule.get("path"):
            left.append(
                (
                    rid,
                    "applies only to files at a path (`"
                    + rule["path"]
                    + "`); a transcript line has none",
                )
            )
            continue
        try:
            kinds = translate_rule(rule, (global_allow, global_stop))
        except Unsupported as e:
            why = REFUSED.get(rid)
            left.append((rid, f"{why} (not translated: {e})" if why else f"not translated: {e}"))
            continue
        first = {owner.get(k.source) for k in kinds}
        if None not in first:
            left.append(
                (
                    rid,
                    "the same pattern as `"
                    + "`, `".join(sorted(first))  # type: ignore[arg-type]
                    + "` (a match is masked as that)",
                )
            )
            continue
        for kind in kinds:
            owner.setdefault(kind.source, rid)
            (named if b"(?P<keep>" in kind.source else prefix).append(kind)
    # A secret's own shape before a name's (a prefix token is masked as itself), and
    # a longer secret before a shorter one (FLWSECK_TEST-… of 12 is the start of one
    # of 32: the shorter, open-ended, would mask only that start).
    prefix.sort(key=lambda k: -k.least)
    named.sort(key=lambda k: -k.least)
    return Translation(source, prefix + named, left, global_allow, global_stop)


# -- docs/security.md ---------------------------------------------------------------


def _cell(text: str, keep: int = 24) -> str:
    """An example, cut short (a docs table shows the shape, not a whole token)."""
    short = text if len(text) <= keep else text[:keep] + "…"
    return "`" + short.replace("|", "\\|").replace("`", "'") + "`"


def render_kinds(t: Translation) -> str:
    """The kept rules, one row per marker."""
    rows: dict[str, tuple[list[str], str]] = {}
    for kind in t.kinds:
        rules, example = rows.setdefault(kind.name, ([], kind.example))
        if kind.rule not in rules:
            rules.append(kind.rule)
    lines = [
        "| kind (the marker) | gitleaks rule | example (made up, cut short) |",
        "|---|---|---|",
    ]
    for name in sorted(rows):
        rules, example = rows[name]
        lines.append(f"| `{name}` | {', '.join(rules)} | {_cell(example)} |")
    return "\n".join(lines) + "\n"


def render_left_out(t: Translation) -> str:
    lines = ["| gitleaks rule | why it is left out |", "|---|---|"]
    lines += [
        "| " + rule + " | " + why.replace("|", "\\|") + " |" for rule, why in sorted(t.left_out)
    ]
    return "\n".join(lines) + "\n"


def _block(name: str) -> re.Pattern[str]:
    begin, end = f"<!-- BEGIN gitleaks:{name} -->\n", f"<!-- END gitleaks:{name} -->"
    return re.compile(f"({re.escape(begin)})(.*?)({re.escape(end)})", re.S)


BLOCKS = {"kinds": render_kinds, "left-out": render_left_out}


def rewrite_docs(text: str, t: Translation) -> str:
    """docs/security.md with its gitleaks tables made from the translation."""
    for name, render in BLOCKS.items():
        table = render(t)

        def fill(m: re.Match[str], table: str = table) -> str:
            return m.group(1) + table + m.group(3)

        text = _block(name).sub(fill, text)
    return text


def doc_blocks(text: str) -> dict[str, str]:
    """The gitleaks tables docs/security.md carries now."""
    return {name: m.group(2) for name in BLOCKS if (m := _block(name).search(text))}


# -- files ------------------------------------------------------------------------------

RULES = "gitleaks.toml"
KINDS = "gitleaks.kinds.json"
SOURCE = "gitleaks.source.json"


def folder() -> Path:
    """Where the rule file, its origin and its translation are: beside this module."""
    return Path(__file__).parent


def load() -> tuple[bytes, dict[str, str]]:
    """The shipped rule file and its origin (``commit``, ``sha256``, …)."""
    source: dict[str, str] = orjson.loads((folder() / SOURCE).read_bytes())
    return (folder() / RULES).read_bytes(), source


def build() -> Translation:
    """The shipped rule file, translated now."""
    return translate(*load())


def main(argv: list[str]) -> int:
    """Write secrets/gitleaks.kinds.json from secrets/gitleaks.toml, and the tables
    of docs/security.md (another path as the argument); ``--check``: only say
    whether both are up to date."""
    check = "--check" in argv
    docs = Path(next((a for a in argv if not a.startswith("--")), "docs/security.md"))
    data, source = load()
    if hashlib.sha256(data).hexdigest() != source.get("sha256"):
        print(
            f"{RULES}: its sha256 is not the one in {SOURCE} (edited by hand? fetch it "
            "with scripts/update-secret-rules)",
            file=sys.stderr,
        )
        return 1
    t = translate(data, source)
    out = t.to_json()
    doc = docs.read_text("utf-8") if docs.exists() else None
    new_doc = rewrite_docs(doc, t) if doc is not None else None
    if doc is not None and set(doc_blocks(doc)) != set(BLOCKS):
        print(
            f"{docs}: no <!-- BEGIN gitleaks:… --> block for "
            f"{', '.join(sorted(set(BLOCKS) - set(doc_blocks(doc))))}",
            file=sys.stderr,
        )
        return 1
    if check:
        stale = [str(folder() / KINDS)] if (folder() / KINDS).read_bytes() != out else []
        stale += [str(docs)] if new_doc != doc else []
        if stale:
            print(
                f"not {RULES} translated: {', '.join(stale)}; run python -m "
                "streamv1.translator.secrets.gitleaks",
                file=sys.stderr,
            )
            return 1
        return 0
    (folder() / KINDS).write_bytes(out)
    if new_doc is not None and new_doc != doc:
        docs.write_text(new_doc, "utf-8")
    rules = {k.rule for k in t.kinds}
    print(
        f"{KINDS}: {len(rules)} rules kept as {len(t.kinds)} patterns, {len(t.left_out)} left out",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
