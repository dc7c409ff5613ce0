"""Secrets never reach an output; text that merely looks like one is left alone.

The fixtures (tests/planted.py) carry a planted secret of every kind in the prompt,
the thinking, the assistant's text, the tool's input and the tool's output; the
kinds x forms table (planted.cases) goes through ``convert`` in both shapes.
"""

from __future__ import annotations

import base64
import json
import re
import string
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planted import (
    ISSUE_23_22,
    LOOKALIKES,
    MARKER_KIND,
    NOT_SECRETS,
    PLANTS,
    SECRETS,
    Case,
    cases,
    in_context,
    structural_cases,
)

from streamv1.translator.output.scrub import Scrubber
from streamv1.translator.secrets import redact
from streamv1.translator.secrets.scan import hyperscan

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = [
    ROOT / "testdata" / "claude-session" / "secrets.jsonl",
    ROOT / "testdata" / "claude-stream" / "secrets.jsonl",
]
ENGINES = ["re"] + (["hyperscan"] if hyperscan is not None else [])


def fragments(secret: str) -> list[str]:
    """What must not survive of a secret: the whole, and each line of a key block."""
    return [secret, *(part for part in secret.split("\n")[1:-1] if part)]


def assert_clean(out: bytes) -> None:
    text = out.decode()
    for kind, secret in SECRETS.items():
        for part in fragments(secret):
            encoded = orjson.dumps(part).decode()[1:-1]
            assert encoded not in text, f"{kind} survived: {part[:20]}..."
    for look in LOOKALIKES:
        assert orjson.dumps(look).decode()[1:-1] in text, f"look-alike changed: {look}"


def test_every_kind_is_planted() -> None:
    """The fixtures carry every hand-written kind; the kinds x forms table carries
    every kind, gitleaks' too (tests/planted.py)."""
    ours = {k.name for k in redact.KINDS if k.rule is None}
    assert len(ours) >= 38
    assert ours <= {MARKER_KIND.get(k, k) for k in SECRETS} <= set(redact.NAMES)
    assert {c.kind for c in cases()} == set(redact.NAMES)
    assert len({p.kind for p in PLANTS}) > 60  # (the audit of #23 item 22 planted 60)


@pytest.mark.parametrize("name", redact.NAMES)
def test_each_kind_masks_its_own_example(name: str) -> None:
    """Every pattern of a kind: its example's probe hits its core, and the kind's
    patterns together mask it (the examples are the scan database's self-test)."""
    kinds = [k for k in redact.KINDS if k.name == name]
    for kind in kinds:
        assert kind.cut in ("sub", "split", "each")
        assert re.search(kind.core, kind.probe), kind.core  # its own core finds it
        out = redact.mask(kind.probe, kinds)
        assert redact.marker(name) in out, kind.example
        orjson.loads(out)


def _scrub_text(scrub: Scrubber, text: str) -> str:
    out = scrub(orjson.dumps({"type": "assistant", "text": text}) + b"\n")
    text_out: str = orjson.loads(out)["text"]
    return text_out


@pytest.mark.parametrize("engine", ENGINES)
def test_every_kind_in_every_form(engine: str) -> None:
    """The kinds x forms table, in process: exactly the secret becomes its marker."""
    scrub = Scrubber(engine=engine)
    wrong = [(c.label, got) for c in cases() if (got := _scrub_text(scrub, c.text)) != c.expected]
    assert not wrong, f"{len(wrong)} of {len(cases())} cases: {wrong[:5]}"


def _case_line(seq: int, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "assistant",
        "session_id": "planted",
        "seq": seq,
        "ts": "2026-01-01T00:00:01.000Z",
        "message": {"id": f"m{seq}", "role": "assistant", "content": content},
    }


def _table_input(text_cases: list[Case], tool_cases: list[tuple[str, str, str, str]]) -> bytes:
    """One stream_v1 run: an assistant line per text case, then one per tool input."""
    lines: list[dict[str, Any]] = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": "planted",
            "seq": 0,
            "ts": "2026-01-01T00:00:00.000Z",
            "cwd": "/planted",
            "tools": ["Bash"],
            "mcp_servers": [],
            "agent": {
                "name": "planted",
                "provider": "planted",
                "model": "planted",
                "role": "primary",
            },
        }
    ]
    for case in text_cases:
        lines.append(_case_line(len(lines), [{"type": "text", "text": case.text}]))
    for _, _, name, value in tool_cases:
        lines.append(
            _case_line(
                len(lines),
                [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{len(lines)}",
                        "name": "Bash",
                        "input": {"command": "deploy", "env": {name: value}},
                    }
                ],
            )
        )
    lines.append(
        {
            "type": "result",
            "subtype": "success",
            "session_id": "planted",
            "seq": len(lines),
            "ts": "2026-01-01T00:00:02.000Z",
            "is_error": False,
            "duration_ms": 1,
            "num_turns": 1,
            "result": "done",
        }
    )
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


@pytest.mark.parametrize("to", ["stream_v1", "claude"])
def test_every_kind_in_every_form_through_convert(
    streamv1_bin: str, tmp_path: Path, to: str
) -> None:
    """The kinds x forms table through ``streamv1 convert``, in both shapes: every
    secret is gone, its marker (of its kind) stands where it stood, and nothing else
    of the text changed; values in the line's own JSON (a tool's input) too."""
    text_cases = cases()
    tool_cases = structural_cases()
    source = tmp_path / "planted.jsonl"
    source.write_bytes(_table_input(text_cases, tool_cases))
    proc = subprocess.run(
        [streamv1_bin, "convert", "--source", "stream_v1", "--to", to, str(source)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out = [orjson.loads(line) for line in proc.stdout.splitlines()]
    blocks = [line["message"]["content"][0] for line in out if line["type"] == "assistant"]
    assert len(blocks) == len(text_cases) + len(tool_cases)
    wrong = [
        (case.label, block.get("text"))
        for case, block in zip(text_cases, blocks[: len(text_cases)], strict=True)
        if block.get("text") != case.expected
    ]
    for (label, kind, name, _), block in zip(tool_cases, blocks[len(text_cases) :], strict=True):
        if block["input"]["env"] != {name: f"[REDACTED:{kind}]"}:
            wrong.append((label, block["input"]))
    assert not wrong, f"{len(wrong)} cases: {wrong[:5]}"
    for plant in PLANTS:
        assert orjson.dumps(plant.value)[1:-1] not in proc.stdout, plant.kind


def test_where_a_secret_may_start() -> None:
    """The boundary rule (docs/security.md): a prefix kind after any of = / . + - _
    : @ or a quote, a space, an escape; not after a letter or a digit. JWTs and
    Discord tokens only where a run of their characters starts."""
    scrub = Scrubber()
    ghp = SECRETS["github_token"]
    for before in "=/.+-_:@ '\"\n\t(":
        assert _scrub_text(scrub, f"x{before}{ghp}") == f"x{before}[REDACTED:github_token]"
    for before in "aZ0":
        assert _scrub_text(scrub, f"x{before}{ghp}") == f"x{before}{ghp}"
    jwt = SECRETS["jwt"]
    for before in '=/. "':
        assert _scrub_text(scrub, f"x{before}{jwt}") == f"x{before}[REDACTED:jwt]"
    for before in "a_-":
        assert _scrub_text(scrub, f"x{before}{jwt}") == f"x{before}{jwt}"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_secret_becomes_its_marker(engine: str, kind: str) -> None:
    scrub = Scrubber(engine=engine)
    text = f"before\n{in_context(kind, SECRETS[kind])}\nafter"
    out = orjson.loads(scrub(orjson.dumps({"text": text}) + b"\n"))["text"]
    marker = f"[REDACTED:{MARKER_KIND.get(kind, kind)}]"
    assert marker in out
    assert all(part not in out for part in fragments(SECRETS[kind]))
    assert out.startswith("before\n") and out.endswith("\nafter")


@pytest.mark.parametrize("engine", ENGINES)
def test_look_alikes_are_left_alone(engine: str) -> None:
    scrub = Scrubber(engine=engine)
    for look in LOOKALIKES + NOT_SECRETS:
        line = orjson.dumps({"text": look}) + b"\n"
        assert scrub(line) == line, look[:80]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", ISSUE_23_22, ids=lambda c: c.label)
def test_the_kinds_issue_23_item_22_found_passing_are_masked(engine: str, case: Case) -> None:
    """Seven kinds of public, well-known formats that passed through (#23 item 22)."""
    assert _scrub_text(Scrubber(engine=engine), case.text) == case.expected


def test_prose_code_ids_and_image_data_pass_through_convert(
    streamv1_bin: str, tmp_path: Path
) -> None:
    """Ordinary lines (prose, code, UUIDs, git ids, base64 image data) come out of
    ``convert`` as they went in, in a tool's output too."""
    text_cases = [
        Case(f"not a secret {i}", "none", text, "\x00") for i, text in enumerate(NOT_SECRETS)
    ]
    source = tmp_path / "plain.jsonl"
    source.write_bytes(_table_input(text_cases, []))
    proc = subprocess.run(
        [streamv1_bin, "convert", "--source", "stream_v1", str(source)],
        capture_output=True,
        check=True,
    )
    assert b"[REDACTED:" not in proc.stdout
    texts = [
        line["message"]["content"][0]["text"]
        for line in map(orjson.loads, proc.stdout.splitlines())
        if line["type"] == "assistant"
    ]
    assert texts == NOT_SECRETS


def test_a_cut_off_private_key_is_masked_to_the_end_of_its_string() -> None:
    cut = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
    out = orjson.loads(Scrubber()(orjson.dumps({"a": cut, "b": "kept"}) + b"\n"))
    assert out == {"a": "[REDACTED:private_key]", "b": "kept"}


def test_secrets_in_keys_and_deep_values_are_masked() -> None:
    line = {
        "extension": {
            "env": {"GITHUB_TOKEN": SECRETS["github_token"]},
            SECRETS["aws_access_key"]: [1, {"deep": [SECRETS["jwt"]]}],
        }
    }
    out = Scrubber()(orjson.dumps(line) + b"\n")
    assert_clean(out + orjson.dumps(LOOKALIKES))  # (look-alikes are not in this line)
    assert orjson.loads(out)["extension"]["env"]["GITHUB_TOKEN"] == "[REDACTED:github_token]"


def test_the_fixtures_carry_every_secret_in_every_place() -> None:
    marker = SECRETS["aws_access_key"]
    for fixture in FIXTURES:
        records = [orjson.loads(line) for line in fixture.read_bytes().splitlines()]
        blocks = [
            b
            for r in records
            if isinstance(r.get("message"), dict) and isinstance(r["message"].get("content"), list)
            for b in r["message"]["content"]
        ]
        places = {b["type"] for b in blocks if marker in orjson.dumps(b).decode()}
        assert {"text", "thinking", "tool_use", "tool_result"} <= places, (fixture, places)


@pytest.mark.parametrize("to", ["stream_v1", "claude"])
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.parent.name)
def test_no_secret_survives_convert(streamv1_bin: str, fixture: Path, to: str) -> None:
    proc = subprocess.run(
        [streamv1_bin, "convert", "--to", to, str(fixture)], capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert_clean(proc.stdout)
    assert proc.stdout.count(b"[REDACTED:") >= 5 * len(SECRETS)  # five places at least
    for line in proc.stdout.splitlines():
        orjson.loads(line)


def test_no_redact_keeps_them(streamv1_bin: str) -> None:
    proc = subprocess.run(
        [streamv1_bin, "convert", "--no-redact", str(FIXTURES[0])],
        capture_output=True,
        check=True,
    )
    assert orjson.dumps(SECRETS["aws_access_key"]).decode()[1:-1].encode() in proc.stdout
    assert b"[REDACTED:" not in proc.stdout


def _tail_once(tmp_path: Path, to: str) -> bytes:
    """The durable fixture through an in-process tail daemon, one round."""
    from streamv1.translator.output.shapes import encoder_for
    from streamv1.translator.tail.daemon import TailDaemon
    from streamv1.translator.tail.output import OutputSink

    watched = tmp_path / "projects" / "p"
    watched.mkdir(parents=True)
    (watched / "0f0e0d0c-0b0a-0908-0706-050403020100.jsonl").write_bytes(FIXTURES[0].read_bytes())
    out = tmp_path / "out.jsonl"
    daemon = TailDaemon(
        [tmp_path / "projects"],
        OutputSink(out),
        tmp_path / "state.json",
        idle_close=0,
        encoder=lambda: encoder_for(to),
    )
    daemon.start()
    daemon.stop()
    return out.read_bytes()


@pytest.mark.parametrize("to", ["stream_v1", "claude"])
def test_no_secret_survives_tail(tmp_path: Path, to: str) -> None:
    data = _tail_once(tmp_path, to)
    assert b'"type":"assistant"' in data and b'"origin":"transcript"' in data
    assert data.count(b"[REDACTED:") >= 5 * len(SECRETS)
    assert_clean(data)


def test_no_secret_reaches_a_subscriber(streamv1_bin: str, tmp_path: Path) -> None:
    """A live stream and a transcript, both full of secrets, through a real daemon
    to its output file and to a subscriber."""
    import sys
    import time

    projects = tmp_path / "projects" / "p"
    projects.mkdir(parents=True)
    sock = tmp_path / "s.sock"
    out = tmp_path / "out.jsonl"
    daemon = _tail_listening(streamv1_bin, tmp_path, out, sock)
    try:
        sub_out = tmp_path / "sub.jsonl"
        sub = subprocess.Popen(
            [streamv1_bin, "subscribe", "--socket", str(sock)], stdout=sub_out.open("wb")
        )
        time.sleep(0.5)
        # another session's transcript (the stream's own would be suppressed)
        durable = (
            FIXTURES[0]
            .read_bytes()
            .replace(
                b"5eccd76e-a2bd-46d3-9ac7-285807858239", b"0f0e0d0c-0b0a-0908-0706-050403020100"
            )
        )
        (projects / "0f0e0d0c-0b0a-0908-0706-050403020100.jsonl").write_bytes(durable)
        relay = subprocess.run(
            [
                streamv1_bin,
                "relay",
                "--socket",
                str(sock),
                "--",
                sys.executable,
                "-c",
                "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())",
                str(FIXTURES[1]),
            ],
            capture_output=True,
            check=True,
            timeout=30,
        )
        assert relay.stdout == FIXTURES[1].read_bytes()  # the pass-through is the run's own
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            data = out.read_bytes() if out.exists() else b""
            if data.count(b'"type":"result"') >= 2 and sub_out.read_bytes() == data:
                break
            time.sleep(0.1)
    finally:
        daemon.send_signal(15)
        daemon.wait(30)
    sub.wait(15)
    data = out.read_bytes()
    assert b'"origin":"stream"' in data and b'"origin":"transcript"' in data
    assert sub_out.read_bytes() == data
    assert data.count(b"[REDACTED:") >= 10 * len(SECRETS)
    assert_clean(data)


_PEM_LINES = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "MIIEpAIBAAKCAQEA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6QFAKEFAKEFAKEFAKE",
    "q7R8s9T0u1V2w3X4y5Z6a7B8c9D0e1F2g3H4i5J6k7L8m9N0FAKEFAKE/+FAKEfa",
    "FAKEfake0123==",
    "-----END RSA PRIVATE KEY-----",
]


@pytest.mark.parametrize("to", ["stream_v1", "claude"])
@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
def test_a_key_whose_lines_are_damaged_lines_is_masked(
    streamv1_bin: str, tmp_path: Path, to: str, crlf: bool
) -> None:
    """A PEM block written raw into a transcript: each of its lines is a damaged
    line, reported with its fragment; no fragment carries a line of the key."""
    records = FIXTURES[0].parent.joinpath("print_mode_bash.jsonl").read_bytes().splitlines()
    end = b"\r\n" if crlf else b"\n"
    pem = [line.encode() + end for line in _PEM_LINES]
    source = tmp_path / "pem.jsonl"
    source.write_bytes(records[0] + b"\n" + b"".join(pem) + b"\n".join(records[1:]) + b"\n")
    proc = subprocess.run(
        [streamv1_bin, "convert", "--lenient", "--to", to, str(source)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    for line in _PEM_LINES[1:-1]:
        assert line.encode() not in proc.stdout and line.encode() not in proc.stderr
    assert proc.stdout.count(b"[REDACTED:private_key]") == 4  # the header and three lines
    for line in proc.stdout.splitlines():
        orjson.loads(line)


#: what the patterns are tried at, again and again (bench/redact.py times them)
_ADVERSARIAL = [
    "sk-",
    "eyJ",
    "-eyJ",
    ".eyJ",
    "AKIA",
    "ghp_",
    "://a:",
    "a://b:c@d ",
    "-----BEGIN ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "password=",
    "password= ",
    '"password":"',
    '\\"password\\": \\"',
    "DB_PASSWORD=",
    "token=",
    "api_key: ",
    "-u a:",
    "mysql ",
    "mysql -p",
    "mysql -u",
    "Bearer ",
    "Authorization: Basic ",
    "AccountKey=",
    "&sig=",
    "0Q~",
    "1:AA",
    "hf_",
    "Private-Lines: 1\n",
    "@",
]


@pytest.mark.parametrize("piece", _ADVERSARIAL)
def test_adversarial_lines_are_masked_right(piece: str) -> None:
    """Megabytes of a prefix are the bench's (bench/redact.py: time, <= 3x
    --no-redact); here a few tens of kilobytes, for the answer: the line stays JSON,
    a secret after the flood is still masked, both engines and a buffer of lines
    agree."""
    flood = piece * (20_000 // len(piece))
    text = f"{flood} {SECRETS['github_token']} {flood}"
    line = orjson.dumps({"type": "assistant", "text": text}) + b"\n"
    outputs = set()
    for engine in ENGINES:
        scrub = Scrubber(engine=engine)
        out = scrub(line)
        assert scrub(line + line) == out + out
        outputs.add(out)
        masked = orjson.loads(out)["text"]
        if piece.startswith("-----BEGIN RSA"):  # a cut-off key block: to the string's end
            assert masked.startswith("[REDACTED:private_key]")
        else:
            assert "[REDACTED:github_token]" in masked
        assert SECRETS["github_token"].encode() not in out
    assert len(outputs) == 1


def test_the_docs_list_every_kind() -> None:
    """docs/security.md names every kind (gitleaks' in a table made from them: see
    tests/test_gitleaks.py), docs/mapping.md every hand-written one (with its
    example)."""
    ours = [k.name for k in redact.KINDS if k.rule is None]
    for doc, names in (("security.md", redact.NAMES), ("mapping.md", ours)):
        text = (ROOT / "docs" / doc).read_text()
        missing = [name for name in names if f"`{name}`" not in text]
        assert not missing, (doc, missing)


def test_every_kind_in_every_form_through_tail_and_a_subscriber(
    streamv1_bin: str, tmp_path: Path
) -> None:
    """The kinds x forms table as a file the daemon follows: its output file and a
    subscriber get every case masked exactly as ``convert`` masks it."""
    import time

    text_cases = cases()
    tool_cases = structural_cases()
    projects = tmp_path / "projects" / "p"
    projects.mkdir(parents=True)
    sock, out, sub_out = tmp_path / "s.sock", tmp_path / "out.jsonl", tmp_path / "sub.jsonl"
    daemon = _tail_listening(streamv1_bin, tmp_path, out, sock)
    try:
        sub = subprocess.Popen(
            [streamv1_bin, "subscribe", "--socket", str(sock)], stdout=sub_out.open("wb")
        )
        time.sleep(0.5)
        table = _table_input(text_cases, tool_cases)
        (projects / "planted.jsonl").write_bytes(table)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (
            not sub_out.exists() or sub_out.read_bytes().count(b"\n") < table.count(b"\n")
        ):
            time.sleep(0.1)
        sub.terminate()
        sub.wait(10)
    finally:
        daemon.terminate()
        daemon.wait(20)
    for data in (out.read_bytes(), sub_out.read_bytes()):
        lines = [orjson.loads(x) for x in data.splitlines()]
        blocks = [x["message"]["content"][0] for x in lines if x["type"] == "assistant"]
        assert len(blocks) == len(text_cases) + len(tool_cases)
        wrong = [
            case.label
            for case, block in zip(text_cases, blocks, strict=False)
            if block.get("text") != case.expected
        ]
        assert not wrong, wrong[:5]
        for plant in PLANTS:
            assert orjson.dumps(plant.value)[1:-1] not in data, plant.kind


def _tail_listening(
    streamv1_bin: str, tmp_path: Path, out: Path, sock: Path
) -> subprocess.Popen[bytes]:
    """A real daemon on ``tmp_path/projects``, once its socket is there (15 s at most)."""
    import time

    daemon = subprocess.Popen(
        [
            streamv1_bin,
            "tail",
            str(tmp_path / "projects"),
            "--output",
            str(out),
            "--state",
            str(tmp_path / "state.json"),
            "--ingest-socket",
            str(sock),
            "--idle-close",
            "0",
            "--commit-every",
            "0.05",
            "--log-format",
            "json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 15
    while not sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return daemon


# -- issue #38 item 5: five kinds' every legal form, generated ---------------------------------
#
# Each strategy makes valid tokens of a vendor's documented format (not one example
# string), each context puts one where a user's text would hold it; a near-miss
# (one character short, the wrong alphabet, a name without its value) must pass.

_B62 = string.ascii_letters + string.digits
_B64URL = _B62 + "-_"
_BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"  # age's bech32 alphabet, upper case


def _chars(alphabet: str, n: int, most: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=n, max_size=n if most is None else most)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


_SENDGRID = st.builds(lambda a, b: f"SG.{a}.{b}", _chars(_B64URL, 22), _chars(_B64URL, 43))
# X25519, the post-quantum hybrid (age 1.3's -pq), a plugin's identity
_AGE = st.builds(
    lambda hrp, data: f"{hrp}1{data}",
    st.sampled_from(
        ["AGE-SECRET-KEY-", "AGE-SECRET-KEY-PQ-", "AGE-PLUGIN-YUBIKEY-", "AGE-PLUGIN-SE-"]
    ),
    _chars(_BECH32, 58),
)
_NPM = st.builds(lambda body: f"npm_{body}", _chars(_B62, 36))
_CLAIM = st.one_of(st.integers(0, 2**40), st.text(_B62, max_size=12), st.booleans())
# header.payload. or header.payload: "alg": "none", any claims (a key that starts
# with a digit makes the payload eyI…), compact or spaced JSON
_UNSIGNED_JWT = st.builds(
    lambda typ, claims, spaced, dot: (
        ".".join(
            _b64url(json.dumps(part, separators=(", ", ": ") if spaced else (",", ":")).encode())
            for part in ({"alg": "none", **({"typ": "JWT"} if typ else {})}, claims)
        )
        + dot
    ),
    st.booleans(),
    st.dictionaries(st.text(_B62 + "_", max_size=8), _CLAIM, min_size=1, max_size=4),
    st.booleans(),
    st.sampled_from([".", ""]),
)
_ALONE = {
    "sendgrid_api_key": _SENDGRID,
    "age_secret_key": _AGE,
    "npm_token": _NPM,
    "jwt": _UNSIGNED_JWT,
}
#: where a token stands: alone, in JSON, env assignments, URLs, quoted, at a line's
#: start or end, ending a sentence, in a table
_WHERE = [
    "{}",
    "VALUE={}",
    'VALUE="{}"',
    "export VALUE='{}'",
    '{{"value": "{}"}}',
    '{{"value":"{}"}}',
    '{{\\"value\\": \\"{}\\"}}',
    "https://api.example.com/v1?key={}&page=2",
    "https://api.example.com/v1/{}/items",
    "{}\nnext line",
    "first line\n{}",
    "one\n{}\nthree",
    "here it is: {}.",
    "{}, then more",
    "({})",
    "`{}`",
    "| value | {} |",
    "value: {}",
    "a\t{}\tb",
    "<value>{}</value>",
    "--value={}",
]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), where=st.sampled_from(_WHERE), kind=st.sampled_from(sorted(_ALONE)))
def test_every_legal_token_of_five_kinds_is_masked_wherever_it_stands(
    data: st.DataObject, where: str, kind: str
) -> None:
    token = data.draw(_ALONE[kind])
    want = {where.format(f"[REDACTED:{kind}]")}
    if kind == "jwt" and not token.endswith(".") and "{}." in where:
        # An unsigned JWT's own last character is a dot: one that ends a sentence
        # right after ``header.payload`` cannot be told from it, and masking it too
        # is the safe reading.
        want.add(where.replace("{}.", "{}").format(f"[REDACTED:{kind}]"))
    for engine in ENGINES:
        got = _scrub_text(Scrubber(engine=engine), where.format(token))
        assert got in want, (engine, token)


_AWS_SECRET = _chars(string.ascii_letters + string.digits + "/+", 40)
_AWS_TOKEN = st.builds(
    lambda head, body, pad: head + body + pad,
    st.sampled_from(["IQoJb3JpZ2lu", "FwoGZXIvYXdz", "FQoGZXIvYXdz", "AQoDYXdz"]),
    _chars(_B62 + "/+", 100, 400),
    st.sampled_from(["", "=", "=="]),
)
#: ``aws sts assume-role`` (get-session-token, get-federation-token) as a user may
#: paste it: JSON (the default), --output yaml / text / table, the Query API's XML
#: (--debug), JSON quoted again in a string, the env exports of its credentials
_STS_FORMS = [
    '{{\n    "Credentials": {{\n        "AccessKeyId": "{ak}",\n'
    '        "SecretAccessKey": "{sk}",\n        "SessionToken": "{st}",\n'
    '        "Expiration": "2026-12-05T03:00:00+00:00"\n    }}\n}}',
    '{{"Credentials":{{"AccessKeyId":"{ak}","SecretAccessKey":"{sk}","SessionToken":"{st}"}}}}',
    "Credentials:\n  AccessKeyId: {ak}\n  Expiration: '2026-12-05T03:00:00+00:00'\n"
    "  SecretAccessKey: {sk}\n  SessionToken: {st}\n",
    "CREDENTIALS\t{ak}\t2026-12-05T03:00:00+00:00\t{sk}\t{st}\n",
    "||  AccessKeyId    |  {ak}  ||\n||  SecretAccessKey|  {sk}  ||\n"
    "||  SessionToken   |  {st}  ||",
    "<Credentials><AccessKeyId>{ak}</AccessKeyId><SecretAccessKey>{sk}</SecretAccessKey>"
    "<SessionToken>{st}</SessionToken></Credentials>",
    '{{\\"SecretAccessKey\\": \\"{sk}\\", \\"SessionToken\\": \\"{st}\\"}}',
    '"{{\\\\\\"SecretAccessKey\\\\\\": \\\\\\"{sk}\\\\\\", '
    '\\\\\\"SessionToken\\\\\\": \\\\\\"{st}\\\\\\"}}"',
    "export AWS_SECRET_ACCESS_KEY={sk}\nexport AWS_SESSION_TOKEN={st}",
]


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(
    secret=_AWS_SECRET,
    token=_AWS_TOKEN,
    key_id=_chars(string.ascii_uppercase + string.digits, 16).map(lambda s: "ASIA" + s),
    form=st.sampled_from(_STS_FORMS),
)
def test_sts_credentials_lose_their_secret_and_token_in_every_output_form(
    secret: str, token: str, key_id: str, form: str
) -> None:
    text = form.format(ak=key_id, sk=secret, st=token)
    for engine in ENGINES:
        got = _scrub_text(Scrubber(engine=engine), text)
        assert secret not in got and token[8:] not in got, (engine, got)
        assert "[REDACTED:aws_secret_key]" in got and "[REDACTED:aws_session_token]" in got


#: what looks like one of the five and is not: it must come out as it went in
NEAR_MISSES = [
    "SG.FAKEfake0123456789abcd.FAKEfake0123456789abcdefghijklmnopqrstuvwx",  # 42
    "SG.FAKEfake0123456789abc.FAKEfake0123456789abcdefghijklmnopqrstuvwxy",  # 21
    "MSG.FAKEfake0123456789abcd.FAKEfake0123456789abcdefghijklmnopqrstuvwxy",
    "log.info(SG.name); SG.config.load()",
    "AGE-SECRET-KEY-1... (your identity, from age-keygen)",
    "AGE-SECRET-KEY-1QQFAKEFAKE",  # too short for any identity
    "AGE-SECRET-KEY-1BIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOBIOB",  # not bech32
    "npm_config_cache=/tmp/npm and npm_package_version=1.2.3",
    "npm_FAKEfake0123456789abcdefghijklmnopq",  # 35
    "npm_FAKEfake0123456789abcdefghijklmnopqrs",  # 37
    "eyJhbGciOiJub25lIn0 is a header alone",
    "eyJhbGciOiJub25lIn0. and nothing after it",
    "<SecretAccessKey>string</SecretAccessKey> <SessionToken>string</SessionToken>",
    "|  SecretAccessKey |  string  |\n|  SessionToken |  string  |",
    "CREDENTIALS\tAccessKeyId\tExpiration\tSecretAccessKey\tSessionToken",
    '{"SecretAccessKey": "<your secret>", "SessionToken": "$AWS_SESSION_TOKEN"}',
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_of_the_five_kinds_pass(engine: str, text: str) -> None:
    assert _scrub_text(Scrubber(engine=engine), text) == text


# -- #39: secrets in the forms people type: ``--password V``, ``config set KEY V`` --
#
# An option whose name ends in a secret's name, in the space form, with any prefix
# (``--db-``, ``--mysql_``), one dash or two, in an argv list; a CLI's config key set
# by name; the value quoted or not (single, double, JSON-escaped double quotes), at
# the end of a line or followed by more options, in a Bash tool_use's own JSON or in
# a tool's output text. The value is masked as the ``=`` form's is: quoted always,
# unquoted with a digit or a symbol.

#: an option's name (its end, kebab or snake) -> the marker
_OPTION_NAMES = {
    "password": "password",
    "passwd": "password",
    "passphrase": "password",
    "pass": "password",
    "pwd": "password",
    "token": "token",
    "auth-token": "token",
    "access_token": "token",
    "refresh-token": "token",
    "api-key": "api_key",
    "apikey": "api_key",
    "api_key": "api_key",
    "api-secret": "api_key",
    "access-key": "api_key",
    "secret": "secret_key",
    "client-secret": "secret_key",
    "client_secret": "secret_key",
    "secret-key": "secret_key",
    "private-key": "secret_key",
    "auth": "http_auth",
}
_OPTION_PREFIXES = ["", "db-", "mysql-", "mysql_", "app-", "x-"]
#: values: a letter first (never a stand-in's), then a digit somewhere
_VALUE = st.builds(
    lambda head, body, digit: head + body + digit,
    st.sampled_from(["F", "k", "Q", "z"]),
    _chars(_B62 + "!#%^*+=?~._", 7, 30),
    st.sampled_from(string.digits),
)
#: how a value stands after its option: (option, value) -> text
_SPACED_FORMS = [
    lambda o, v: f"{o} {v}",
    lambda o, v: f"{o}  {v} --verbose",
    lambda o, v: f"{o} '{v}' -x 1",
    lambda o, v: f'{o} "{v}"',
    lambda o, v: f'{{"command": "deploy {o} \\"{v}\\" --yes"}}',  # JSON in a string
    lambda o, v: f'["deploy", "{o}", "{v}", "--yes"]',  # an argv list
    lambda o, v: f"args = ['{o}', '{v}']",
    lambda o, v: f"$ deploy {o} {v}\nDeployed.",
]


def _in_bash_and_output(text: str) -> list[bytes]:
    """A command where a transcript holds one: a Bash tool_use's input, the tool's
    output text."""
    return [
        orjson.dumps({"type": "tool_use", "name": "Bash", "input": {"command": text}}) + b"\n",
        orjson.dumps({"type": "tool_result", "content": text}) + b"\n",
    ]


def _all_engines(line: bytes) -> bytes:
    outs = {engine: Scrubber(engine=engine)(line) for engine in ENGINES}
    assert len(set(outs.values())) == 1, outs  # both engines agree
    return outs[ENGINES[0]]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(_OPTION_NAMES)),
    prefix=st.sampled_from(_OPTION_PREFIXES),
    dashes=st.sampled_from(["--", "-"]),
    value=_VALUE,
    form=st.sampled_from(_SPACED_FORMS),
)
def test_a_secret_after_a_secret_named_option_is_masked_in_the_space_form(
    name: str, prefix: str, dashes: str, value: str, form: Any
) -> None:
    option = dashes + prefix + name
    text = form(option, value)
    marker = f"[REDACTED:{_OPTION_NAMES[name]}]".encode()
    for line in _in_bash_and_output(text):
        out = _all_engines(line)
        assert orjson.dumps(value)[1:-1] not in out, (text, out)
        assert marker in out and option.encode() in out, (text, out)


#: ``config set KEY V`` as CLIs spell it: (command, key, marker)
_CONFIG_SETS = [
    ("aws configure set", "aws_secret_access_key", "aws_secret_key"),
    ("aws configure set", "default.aws_secret_access_key", "aws_secret_key"),
    ("aws --profile dev configure set", "aws_session_token", "aws_session_token"),
    ("npm config set", "//registry.npmjs.org/:_authToken", "token"),
    ("npm config set", "//npm.pkg.github.com/:_auth", "http_auth"),
    ("pnpm config set --location=project", "//r.example.com/:_authToken", "token"),
    ("yarn config set", "npmAuthToken", "token"),
    ("git config --global", "github.token", "token"),
    ("git config set", "hub.oauthtoken", "token"),
    ("kubectl config set", "users.admin.token", "token"),
    ("kubectl config set", "users.admin.client-key-data", "private_key"),
]
_AWS_SECRET_VALUE = _chars(string.ascii_letters + string.digits + "/+", 39).map(lambda s: "F" + s)
_SESSION_VALUE = _chars(_B62 + "/+", 40, 80).map(lambda s: "F" + s + "1")
_KEY_DATA = _chars(_B62 + "+/", 40, 80).map(lambda s: "LS0t" + s + "==")


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), which=st.sampled_from(_CONFIG_SETS), after=st.sampled_from(["", " --x"]))
def test_a_secret_set_as_a_cli_config_key_is_masked(
    data: st.DataObject, which: tuple[str, str, str], after: str
) -> None:
    command, key, kind = which
    value = data.draw(
        {"aws_secret_key": _AWS_SECRET_VALUE, "aws_session_token": _SESSION_VALUE}.get(
            kind, _KEY_DATA if kind == "private_key" else _VALUE
        )
    )
    quote = data.draw(st.sampled_from(["", "'", '"']))
    text = f"{command} {key} {quote}{value}{quote}{after}"
    for line in _in_bash_and_output(text):
        out = _all_engines(line)
        assert orjson.dumps(value)[1:-1] not in out, (text, out)
        assert f"[REDACTED:{kind}]".encode() in out and key.encode() in out, (text, out)


#: a short flag that is a password for its command alone
_SHORT_FLAGS = [
    ("docker login -u deploy -p {} registry.example.com", "password"),
    ("docker login -p={} -u deploy", "password"),
    ("docker login -p{}", "password"),
    ("podman login quay.io -u me -p '{}'", "password"),
    ('helm registry login r.example.com --username me -p "{}"', "password"),
    ("az login -u me@example.com -p {}", "password"),
    ("sshpass -p {} ssh host uptime", "password"),
    ("redis-cli -h cache -a {} ping", "password"),
    ("gh secret set DEPLOY_KEY --body {}", "secret_key"),
    ("gh secret set DEPLOY_KEY -b'{}'", "secret_key"),
]


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(form=st.sampled_from(_SHORT_FLAGS), value=_VALUE)
def test_a_password_after_a_known_commands_short_flag_is_masked(
    form: tuple[str, str], value: str
) -> None:
    text, kind = form[0].format(value), form[1]
    for line in _in_bash_and_output(text):
        out = _all_engines(line)
        assert orjson.dumps(value)[1:-1] not in out and f"[REDACTED:{kind}]".encode() in out


#: an option that names a secret and is not one: a file, a flag, a variable's name
_NOT_A_VALUE_SUFFIXES = ["-file", "-stdin", "-env", "-path", "_file", "-id", "-name", "s"]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(_OPTION_NAMES)),
    suffix=st.sampled_from(_NOT_A_VALUE_SUFFIXES),
    value=_VALUE,
    form=st.sampled_from(_SPACED_FORMS),
)
def test_an_option_that_only_names_a_secret_keeps_what_follows(
    name: str, suffix: str, value: str, form: Any
) -> None:
    text = form(f"--{name}{suffix}", value)
    for line in _in_bash_and_output(text):
        assert _all_engines(line) == line, text


#: near-misses of the space form: each must come out as it went in
SPACED_NEAR_MISSES = [
    "app --token-file /etc/tok2 --password-stdin --api-key-env MY_KEY1",
    "app --no-password x1y2z3w4 --skip-auth 1234abcd",
    "ansible-playbook --ask-pass site2.yml --ask-vault-pass inv3.yml",
    "gh auth login --with-token < token2.txt",
    "python train.py --max-token 4096 --num-tokens 100000000 --tokenizer gpt2",
    "ssh --private-key ~/.ssh/id_ed25519 --private-key /keys/k2.pem --api-key ./key2.txt",
    'deploy --password $DB_PASSWORD --token ${TOKEN} --api-key "$(cat key2)"',
    "deploy --password <your-password> --token '<token2>'",
    "deploy --password --verbose --token -x",
    "the config token is stored in ~/.config",
    "aws configure set region us-east-1 && aws configure get aws_secret_access_key",
    "npm config get //registry.npmjs.org/:_authToken",
    "mkdir -p /tmp/x && docker run -p 8080:80 img && gh auth login -p https",
    "docker login -u me --password-stdin registry.io && docker login -p $DOCKER_PASSWORD",
    "gh secret set FOO < secret2.txt && gh secret set BAR --body-file f2.txt",
    "--auth basic --auth oauth2 --auth-type digest --no-auth",
    "--- a/file2 --- b/file2 -- --password",
]


@pytest.mark.parametrize("text", SPACED_NEAR_MISSES)
def test_near_misses_of_the_space_form_pass(text: str) -> None:
    for line in _in_bash_and_output(text):
        assert _all_engines(line) == line


def test_validate_prints_a_bad_lines_secret_masked(streamv1_bin: str, tmp_path: Path) -> None:
    """``validate`` quotes a bad line's values (and the file's name) on stdout, a CI
    log: masked as every output line is, even where it cuts a long value short."""
    secrets = {
        "github_token": "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0nlyAbCdEf",
        "anthropic_api_key": SECRETS["anthropic_api_key"],
        "aws_access_key": "AKIAZ7QW3RTYUIOP4ASD",
        "password": "FAKEpa55w0rd",
    }
    lines = [
        {"type": "system", "subtype": "init", "seq": 0, "session_id": "s1",
         "ts": "2026-01-01T00:00:00Z", "cwd": "/x", "tools": []},
        # a ts past the 80 characters a message shows: masked before it is cut
        {"type": "assistant", "seq": "psql --password FAKEpa55w0rd", "session_id": "s1",
         "ts": "x" * 60 + " " + secrets["github_token"]},
        {"type": "result", "seq": secrets["aws_access_key"],
         "session_id": secrets["anthropic_api_key"], "is_error": False,
         secrets["github_token"]: 1},
    ]  # fmt: skip
    bad = tmp_path / f"run-{secrets['github_token']}.jsonl"
    bad.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    (tmp_path / "broken.jsonl").write_bytes(b"{not json " + secrets["password"].encode() + b"\n")
    proc = subprocess.run(
        [streamv1_bin, "validate", str(bad), str(tmp_path / "broken.jsonl"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    shown = proc.stdout + proc.stderr
    for kind, secret in secrets.items():
        assert secret[4:16] not in shown, (kind, shown)
    for kind in ("github_token", "anthropic_api_key", "aws_access_key", "password"):
        assert f"[REDACTED:{kind}]" in proc.stdout, (kind, proc.stdout)
    assert "ts 'xxxx" in proc.stdout and "--password [REDACTED:password]'," in proc.stdout
