"""Output shapes (translator.output.shapes): a new shape is one module, and whatever it
encodes leaves scrubbed, since the scrub is where lines are written, not in the shape.

A toy shape module is written into a temp folder that joins the shapes package's
path: ``--to`` lists it and every writer (convert, the tail daemon) uses it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from planted import SECRETS

from streamv1.translator.model.events import JSON
from streamv1.translator.output import shapes
from streamv1.translator.output.shapes import encoder_for
from streamv1.translator.translate.translation import Totals, Translation

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "testdata" / "claude-session" / "secrets.jsonl"
AWS = SECRETS["aws_access_key"]

# Everything a shape is: one module. It does nothing about secrets or ANSI escapes.
TOY = """
from streamv1.translator.output.encode import encode
from streamv1.translator.output.shapes import Shape, Stateless


class ToyEncoder(Stateless):
    def encode(self, line):
        return encode({"toy": line.get("type"), "line": line})


SHAPE = Shape("toy", "each line wrapped in a toy", lambda options: ToyEncoder())
"""


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[str]:
    folder = tmp_path / "more_shapes"
    folder.mkdir()
    (folder / "toy.py").write_text(TOY)
    path = shapes.__path__
    path.append(str(folder))
    shapes.shapes.cache_clear()
    try:
        yield "toy"
    finally:
        path.remove(str(folder))
        sys.modules.pop("streamv1.translator.output.shapes.toy", None)
        shapes.shapes.cache_clear()


def test_the_table_has_the_shapes_default_first() -> None:
    assert list(shapes.shapes())[:1] == ["stream_v1"]
    assert {"stream_v1", "claude"} <= set(shapes.shapes())
    with pytest.raises(ValueError, match="no output shape named 'nope'"):
        encoder_for("nope")


def _convert(args: list[str], out: Path) -> bytes:
    """``streamv1 convert`` in this process (where the toy module is on the path)."""
    from streamv1.translator.cli.app import main

    result = CliRunner().invoke(main, ["--log-level", "error", "convert", "-o", str(out), *args])
    assert result.exit_code == 0, (result.output, result.exception)
    return out.read_bytes()


def test_a_toy_shape_is_one_module_listed_and_used(toy: str, tmp_path: Path) -> None:
    from streamv1.translator.cli.app import main

    assert toy in shapes.shapes()
    help_text = CliRunner().invoke(main, ["convert", "--help"]).output
    assert "toy" in help_text  # --to's choices come from the table

    out = _convert(["--to", toy, str(FIXTURE)], tmp_path / "out.jsonl")
    lines = [orjson.loads(line) for line in out.splitlines()]
    assert lines and all(set(line) == {"toy", "line"} for line in lines)
    assert [line["toy"] for line in lines] == [line["line"]["type"] for line in lines]
    # The toy shape never scrubs: the secret is masked where lines are written.
    assert AWS.encode() not in out
    assert b"[REDACTED:aws_access_key]" in out
    # --no-redact still reaches it.
    assert AWS.encode() in _convert(
        ["--to", toy, "--no-redact", str(FIXTURE)], tmp_path / "kept.jsonl"
    )


def test_a_toy_shape_through_the_tail_daemon_is_scrubbed(toy: str, tmp_path: Path) -> None:
    from streamv1.translator.tail.daemon import TailDaemon
    from streamv1.translator.tail.output import OutputSink

    watched = tmp_path / "projects" / "p"
    watched.mkdir(parents=True)
    (watched / "0f0e0d0c-0b0a-0908-0706-050403020100.jsonl").write_bytes(FIXTURE.read_bytes())
    out = tmp_path / "out.jsonl"
    daemon = TailDaemon(
        [tmp_path / "projects"],
        OutputSink(out),
        tmp_path / "state.json",
        idle_close=0,
        encoder=lambda: encoder_for(toy),
    )
    daemon.start()
    daemon.stop()
    data = out.read_bytes()
    assert data and all(b'"toy":' in line for line in data.splitlines())
    assert AWS.encode() not in data
    assert b"[REDACTED:aws_access_key]" in data


class _Raw:
    """An encoder that writes a secret and a colour code whatever the line."""

    STATE_VERSION = 1

    def encode(self, line: JSON) -> bytes:
        return orjson.dumps({"key": AWS, "red": "\x1b[31mred\x1b[0m"}) + b"\n"

    def state(self) -> JSON:
        return {}

    def load_state(self, state: JSON) -> None:
        pass


def test_every_line_a_translation_writes_is_scrubbed() -> None:
    written: list[bytes] = []
    translation = Translation("-", written.append, Totals(), encoder=_Raw())
    translation._write_lines([{"type": "user"}, {"type": "user"}])
    translation._write_lines([{"type": "user"}])
    assert len(written) == 2
    for data in written:
        assert AWS.encode() not in data and b"\\u001b" not in data
        assert data.count(b"[REDACTED:aws_access_key]") == data.count(b"\n")
    raw: list[bytes] = []
    Translation("-", raw.append, Totals(), encoder=_Raw(), redact=False)._write_lines([{}])
    assert AWS.encode() in raw[0] and b"\\u001b" not in raw[0]  # ANSI goes either way


def test_a_checkpoint_names_no_encoder_class() -> None:
    """The encoder's part of a checkpoint is its version and plain state, never its
    class or module: a checkpoint written when the encoders lived in
    translator.legacy restores into the shapes' classes as it is."""
    written: list[bytes] = []
    old = {"version": 1, "state": {"model": "claude-opus-4"}}
    translation = Translation("-", written.append, Totals(), encoder=encoder_for("claude"))
    snap = translation.snapshot()
    assert snap["encoder"] == {"version": 1, "state": {"model": None}}
    snap["encoder"] = old
    again = Translation("-", written.append, Totals(), encoder=encoder_for("claude"))
    again.restore(snap)
    assert again.encoder.state() == old["state"]
