"""Output shapes: what ``--to`` names, one module each in this package.

Every module here whose name does not start with ``_`` defines ``SHAPE``, a
:class:`Shape`. Adding a shape means adding one such module: ``--to``'s choices and
:func:`encoder_for` are made from :func:`shapes`, so nothing else changes.

An encoder turns each framed stream_v1 line into the bytes of its shape. It does
not scrub them: :class:`~streamv1.translator.translate.translation.Translation` passes every
encoded line through the scrubber where it writes it, whatever the shape.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import ClassVar, NamedTuple, Protocol

from streamv1.translator.model.events import JSON


class Encoder(Protocol):
    """One input's encoder. Options come from the running command (its factory's
    :class:`EncoderOptions`), never from a checkpoint: ``state()`` holds only what
    encoding learned from earlier lines."""

    #: The layout of ``state()`` (translator.state's rule: new fields, new number).
    STATE_VERSION: ClassVar[int]

    def encode(self, line: JSON) -> bytes:
        """One line's bytes, ending in a newline; b"" leaves the line out."""
        ...

    def state(self) -> JSON: ...

    def load_state(self, state: JSON) -> None: ...


class Stateless:
    """For an encoder that learns nothing from earlier lines."""

    STATE_VERSION: ClassVar[int] = 1

    def state(self) -> JSON:
        return {}

    def load_state(self, state: JSON) -> None:
        pass


# NamedTuples, not dataclasses: each frozen dataclass costs ~1 ms of start-up.


class EncoderOptions(NamedTuple):
    """The command's options that shape an encoder's output."""

    extra_types: bool = False  # --claude-extra-types


class Shape(NamedTuple):
    name: str  # what --to names
    description: str
    #: A new encoder for one input.
    encoder: Callable[[EncoderOptions], Encoder]


@cache
def shapes() -> dict[str, Shape]:
    """Every shape this release has, by name (``stream_v1``, the default, first)."""
    from streamv1.translator.output import shapes as package
    from streamv1.translator.registry import registered

    found = {shape.name: shape for shape in registered(package, "SHAPE", Shape)}
    default = found.pop(DEFAULT, None)
    return {DEFAULT: default, **found} if default is not None else found


DEFAULT = "stream_v1"


def encoder_for(target: str = DEFAULT, extra_types: bool = False) -> Encoder:
    """A new encoder of the shape ``target`` names (ValueError: no such shape)."""
    shape = shapes().get(target)
    if shape is None:
        raise ValueError(f"no output shape named {target!r} (known: {', '.join(shapes())})")
    return shape.encoder(EncoderOptions(extra_types))
