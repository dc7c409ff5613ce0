"""Planted secrets and their look-alikes, and the fixtures that carry them.

Every secret here is made up, in the exact shape of the real thing. The fixtures
``testdata/claude-session/secrets.jsonl`` and ``testdata/claude-stream/secrets.jsonl``
are the ``bash`` captures with all of them written into the prompt, the thinking,
the assistant's text, the tool's input and the tool's output (content and
``toolUseResult``). Regenerate them with ``.venv/bin/python tests/planted.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

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
}

#: kinds whose marker differs from the SECRETS key
MARKER_KIND = {"github_pat": "github_token"}

#: how each secret is written into a text (some need a context to be one)
def in_context(kind: str, secret: str) -> str:
    if kind == "aws_secret_key":
        return f"aws_secret_access_key = {secret}"
    if kind == "bearer_token":
        return f"Authorization: Bearer {secret}"
    if kind == "url_password":
        return f"DATABASE_URL=postgres://admin:{secret}@db.internal:5432/app"
    return secret


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
]


def payload() -> str:
    lines = [in_context(kind, secret) for kind, secret in SECRETS.items()]
    return "\n".join(["Planted secrets:", *lines, "Look-alikes:", *LOOKALIKES])


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
            if record.get("type") == "assistant" and isinstance(content, list) and any(
                b.get("type") == "text" for b in content
            ):
                # a thinking block before the text: thinking is a place secrets leak to
                content.insert(0, {"type": "thinking", "thinking": "Let me think.",
                                   "signature": "c2lnbmF0dXJl"})
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
