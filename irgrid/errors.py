"""The irgrid exception hierarchy, and `Problem`, the located record `irgrid check` reports.

Every error that concerns a layer carries its type, name and id (and the port, where one applies),
so a message read from a CLI line or a log points straight at the XML element at fault. Operators
know nothing of IR layers: they raise with `input=` (the index of the input at fault), and the graph
pass that called them locates the error at its layer and that input's port (`IRGridError.located`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class IRGridError(Exception):
    """Base of every error irgrid raises on purpose."""

    def __init__(self, message: str, *, layer: Any = None, port: int | None = None,
                 input: int | None = None) -> None:
        self.layer = layer
        self.port = port
        self.input = input
        self.reason = message
        where = describe(layer, port)
        super().__init__(f"{where}: {message}" if where else message)

    def located(self, layer: Any) -> "IRGridError":
        """This error at `layer` (the input index, if any, becomes that input's IR port id)."""
        if self.layer is not None:
            return self
        port = self.port
        if self.input is not None and self.input < len(layer.inputs):
            port = layer.inputs[self.input].id
        return type(self)(self.reason, layer=layer, port=port)


def describe(layer: Any = None, port: int | None = None) -> str:
    """'GridSample layer "gs" (id 3), port 1': the prefix every layer error starts with."""
    if layer is None:
        return "" if port is None else f"port {port}"
    text = f'{printable(layer.type)} layer "{printable(layer.name)}" (id {layer.id})'
    return text if port is None else f"{text}, port {port}"


def printable(text: Any) -> str:
    """`text` with its control characters escaped (a newline as \\n), so that a name from the XML can
    neither split an error into several lines nor forge one."""
    text = str(text)
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def error_line(exc: BaseException) -> str:
    """As the CLI prints an error: the type and the first line of its message."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0] if message else ''}".rstrip(": ")


class ParseError(IRGridError):
    """The .xml is malformed, unsafe or structurally inconsistent (edges, ids, dims)."""


class WeightsError(IRGridError):
    """The .bin is missing, too short, or a Const's offset/size/shape does not fit it."""


class UnsupportedLayerError(IRGridError):
    """No registered operator for a layer's (type, version)."""


class LayerAttributeError(IRGridError):
    """A layer attribute is missing, malformed or outside its allowed values."""


class ShapeError(IRGridError):
    """Inputs whose ranks, dims or element types the operator cannot accept."""


class InputError(IRGridError):
    """Arrays given to a compiled model do not match its Parameters."""


@dataclass
class Problem:
    """One thing wrong with a model, located at a layer and (where it applies) a port."""

    layer: Any
    port: int | None
    message: str
    kind: str = "shape"

    @classmethod
    def from_error(cls, exc: IRGridError, layer: Any) -> "Problem":
        exc = exc.located(layer)
        return cls(exc.layer, exc.port, exc.reason, type(exc).__name__.removesuffix("Error").lower())

    def __str__(self) -> str:
        return str(IRGridError(self.message, layer=self.layer, port=self.port))

    def to_dict(self) -> dict:
        return {"layer_id": self.layer.id, "layer_name": self.layer.name, "layer_type": self.layer.type,
                "port": self.port, "kind": self.kind, "message": self.message}


class OpenVINOError(IRGridError):
    """OpenVINO refused or failed a model irgrid handed it (the `openvino` and `auto` devices)."""


class ConfigError(IRGridError, ValueError):
    """A setting irgrid cannot use (a thread count, an environment variable).

    Also a ValueError, so code written when set_num_threads raised ValueError still catches it.
    """


class NotBuiltError(IRGridError, ImportError):
    """The compiled kernels are missing: an un-built source folder was imported instead of an install.

    Also an ImportError (it is one), and not a ValueError, so layer runners do not report it as a layer's
    failure.
    """
