"""gitleaks' rule set as secret kinds (translator/secrets/gitleaks.py, translator/secrets/).

The shipped translation is the shipped rule file translated now, and the rule file
is gitleaks' own (its digest); every rule is kept or left out with a reason, and
docs/security.md's tables are the translation's; each kept pattern compiles, starts
with a literal, reads no open run twice, and masks its example (both engines);
each rule said to be covered is masked by the hand-written kind, and each said to
be refused is refused.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tomllib
from typing import Any

import orjson
import pytest
from conftest import ROOT

from streamv1.translator.secrets import gitleaks, gitleaks_patterns, gitleaks_regex, redact
from streamv1.translator.secrets.scan import Scanner, hyperscan
from streamv1.translator.secrets.secret_kind import SecretKind

ENGINES = ["re"] + (["hyperscan"] if hyperscan is not None else [])
DATA, SOURCE = gitleaks.load()
RULES: dict[str, dict[str, Any]] = {r["id"]: r for r in tomllib.loads(DATA.decode())["rules"]}
SHIPPED = orjson.loads((gitleaks.folder() / gitleaks.KINDS).read_bytes())
KEPT = {k["rule"] for k in SHIPPED["kinds"]}
LEFT = dict((x["rule"], x["reason"]) for x in SHIPPED["left_out"])


def test_the_rule_file_is_gitleaks_own_with_its_licence() -> None:
    assert hashlib.sha256(DATA).hexdigest() == SOURCE["sha256"]
    assert re.fullmatch(r"[0-9a-f]{40}", SOURCE["commit"])
    assert SOURCE["repository"] == "https://github.com/gitleaks/gitleaks"
    licence = (gitleaks.folder() / "LICENSE").read_bytes()
    assert hashlib.sha256(licence).hexdigest() == SOURCE["license_sha256"]
    assert licence.startswith(b"MIT License")


def test_the_shipped_translation_and_the_docs_are_the_rule_file_translated() -> None:
    """Neither gitleaks.kinds.json nor docs/security.md's tables are edited by hand:
    ``python -m streamv1.translator.secrets.gitleaks --check`` makes them anew and compares."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "streamv1.translator.secrets.gitleaks",
            "--check",
            str(ROOT / "docs" / "security.md"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    t = gitleaks.build()
    assert t.to_json() == (gitleaks.folder() / gitleaks.KINDS).read_bytes()
    doc = (ROOT / "docs" / "security.md").read_text("utf-8")
    assert gitleaks.doc_blocks(doc) == {name: render(t) for name, render in gitleaks.BLOCKS.items()}


def test_every_rule_is_kept_or_left_out_with_a_reason() -> None:
    assert KEPT.isdisjoint(LEFT)
    assert KEPT | set(LEFT) == set(RULES)
    assert all(len(why) > 20 for why in LEFT.values())
    assert len(KEPT) > 3 * len(LEFT)  # (a rule set taken, not sampled)


def test_rules_left_out_by_choice_translate_and_refused_ones_do_not() -> None:
    """LEFT_OUT is a choice (the rule translates); REFUSED says why the translation is
    right to refuse a rule, so each must be refused."""
    for rid in gitleaks.LEFT_OUT:
        assert gitleaks.translate_rule(RULES[rid]), rid
    for rid in gitleaks.REFUSED:
        with pytest.raises(gitleaks_regex.Unsupported):
            gitleaks.translate_rule(RULES[rid])
        assert LEFT[rid].startswith(gitleaks.REFUSED[rid])


@pytest.mark.parametrize("rid", sorted(gitleaks.COVERED))
def test_a_covered_rule_is_masked_by_the_hand_written_kind(rid: str) -> None:
    """A made-up secret of each alternative, several of each: the hand-written kind
    masks it (all of it but a public prefix of up to 8 bytes, as ``xoxe.``)."""
    name = gitleaks.COVERED[rid]
    ours = [k for k in redact.KINDS if k.name == name and k.rule is None]
    assert ours, name
    for seed in range(5):
        for secret in gitleaks_patterns.made_up(RULES[rid], seed):
            out = orjson.loads(redact.mask(orjson.dumps({"t": secret}) + b"\n", ours))["t"]
            marker = f"[REDACTED:{name}]"
            assert marker in out, (rid, secret)
            assert len(out.replace(marker, "")) <= 8, (rid, secret, out)


def test_aliases_and_covered_rules_name_kinds_that_exist() -> None:
    ours = {k.name for k in redact.KINDS if k.rule is None}
    assert set(gitleaks.COVERED.values()) <= ours
    assert set(gitleaks.ALIASES.values()) <= ours | {"age_secret_key", "sendgrid_api_key"}
    assert set(gitleaks.ALIASES) <= set(RULES) and set(gitleaks.COVERED) <= set(RULES)


def test_markers_are_rule_ids_or_the_hand_written_name() -> None:
    for kind in redact.GITLEAKS:
        assert kind.rule is not None
        assert kind.name == gitleaks.ALIASES.get(kind.rule, kind.rule.replace("-", "_"))
        assert re.fullmatch(r"[0-9a-z_]+", kind.name)


_OPEN = re.compile(rb"\\.|\[(?:\\.|[^\]])*\]|\{\d+(?:,\d*)?\}\+?|[*+?]\+?|.", re.S)


def _open_repeats(source: bytes) -> list[bytes]:
    """The open repeats of a pattern (``*``, ``+``, ``{n,}``) not made possessive."""
    out = []
    for m in _OPEN.finditer(source):
        token = m.group()
        if token in (b"*", b"+") or (token.startswith(b"{") and token.endswith(b",}")):
            out.append(token)
    return out


@pytest.mark.parametrize("kind", redact.GITLEAKS, ids=lambda k: f"{k.rule}:{k.example[:12]}")
def test_each_pattern_fits_the_design(kind: SecretKind) -> None:
    """It compiles; it starts with a literal (re skips to candidates at memchr speed);
    an open repeat is possessive (a run is read once: linear time); its core finds
    its example in both engines and the kind masks it, the line still JSON."""
    pattern = kind.exact
    assert kind.cut in ("each", "sub", "split")
    assert re.match(rb"\(\?P<(secret|keep)>(?:[A-Za-z0-9_]|\\x[0-9a-f]{2}){2}", kind.source)
    assert not _open_repeats(kind.source), kind.source
    assert pattern.search(kind.probe)
    for engine in ENGINES:
        assert Scanner([kind.core], engine=engine).hits(b" " * 64 + kind.probe) == {0}
    out = redact.mask(kind.probe, [kind])
    assert redact.marker(kind.name) in out
    assert orjson.loads(out)


def test_the_possessive_check_would_see_an_open_repeat() -> None:
    assert _open_repeats(rb"ab[a-z]{3,}c") == [b"{3,}"]
    assert _open_repeats(rb"ab[a-z+*]{3,}+c\+x*(?:y{2,5}z)+") == [b"*", b"+"]


def test_a_flood_of_every_prefix_is_masked_right_in_both_engines() -> None:
    """Each kind's literal start, 2 KB of it, all in one line, then a secret: the
    line stays JSON, the secret after the floods is masked, the engines agree (the
    time it takes is the bench's: bench/redact.py)."""
    from streamv1.translator.output.scrub import Scrubber

    starts = sorted({k.example[:8] for k in redact.GITLEAKS})
    text = " ".join(s * (2000 // len(s)) for s in starts) + " glft-" + "Zq8vR2mK7xT4pL9wN3bH"
    line = orjson.dumps({"type": "assistant", "text": text}) + b"\n"
    outputs = {Scrubber(engine=engine)(line) for engine in ENGINES}
    assert len(outputs) == 1
    (out,) = outputs
    assert orjson.loads(out)["text"].endswith(" [REDACTED:gitlab_feed_token]")


@pytest.mark.parametrize(
    "text",
    [
        "TWITTER_API_KEY=xxxxxxxxxxxxxxxxxxxxxxxxx",  # one character repeated
        "twitter_api_key: ${TWITTER_API_KEY_FROM_VAULT}",  # a reference
        "vault token s.abcdefghijklmnopqrstuvwx",  # its allowlist: letters only
        "AKIAIOSFODNN7EXAMPLE is AWS's documented example",  # (hand-written: masked)
    ],
)
def test_allowlists_and_entropy_keep_placeholders(text: str) -> None:
    """gitleaks' allowlists (global and the rule's) and entropy floors are tested on
    each match: a placeholder is no secret."""
    line = orjson.dumps({"text": text}) + b"\n"
    out = redact.mask(line, list(redact.GITLEAKS))
    assert out == line


def test_a_low_entropy_match_is_kept_and_a_random_one_masked() -> None:
    kind = next(k for k in redact.GITLEAKS if k.rule == "dynatrace-api-token")
    low = "dt0c01." + "a" * 12 + "b" * 12 + "." + "ab" * 32  # entropy 1 (floor 4)
    for text, masked in ((low, False), (kind.example, True)):
        out = redact.mask(orjson.dumps({"text": text}) + b"\n", [kind])
        assert (b"[REDACTED:" in out) is masked, text


def test_past_checked_matches_a_line_is_a_flood_and_all_of_it_is_masked() -> None:
    """Up to redact.CHECKED matches of a kind a line are tested in Python (a
    placeholder stays); a line with more is a flood, masked whole in C (the safe
    side: what it costs stays a C cut's, bench/redact.py)."""
    kinds = [k for k in redact.GITLEAKS if k.rule == "twitter-api-key"]
    piece = "twitter=" + "x" * 25 + " "
    for n, masked in ((redact.CHECKED, 0), (redact.CHECKED + 1, redact.CHECKED + 1)):
        line = orjson.dumps({"text": piece * n}) + b"\n"
        out = redact.mask(line, kinds)
        assert out.count(b"[REDACTED:twitter_api_key]") == masked
        assert orjson.loads(out)


def test_a_tool_glued_to_a_word_is_no_mysql_command() -> None:
    """``mysql -p…`` counts where a word starts (a line of ``-umysql -umysql …`` is
    not read again at every ``mysql``, bench/redact.py); the command is masked."""
    from streamv1.translator.output.scrub import Scrubber

    scrub = Scrubber()
    for text, masked in (
        ("mysql -u root -pFAKEpa55 app", True),
        ("/usr/bin/mysql -u root -pFAKEpa55 app", True),
        ("automysql -u root -pFAKEpa55 app", False),
    ):
        out = orjson.loads(scrub(orjson.dumps({"text": text}) + b"\n"))["text"]
        assert ("[REDACTED:password]" in out) is masked, text
