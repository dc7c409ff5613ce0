"""``--to stream_v1``, the default: the catalog's lines as they are."""

from __future__ import annotations

from streamv1.translator.output.encode import encode
from streamv1.translator.output.shapes import EncoderOptions, Shape, Stateless


class StreamV1Encoder(Stateless):
    # The function itself, not a method calling it: one call a line less.
    encode = staticmethod(encode)


def _make(options: EncoderOptions) -> StreamV1Encoder:
    return StreamV1Encoder()


SHAPE = Shape("stream_v1", "stream_v1 lines as they are", _make)
