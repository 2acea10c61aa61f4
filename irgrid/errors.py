"""The irgrid exception hierarchy.

Every error that concerns a layer carries its type, name and id (and the port, where one applies),
so a message read from a CLI line or a log points straight at the XML element at fault.
"""
from __future__ import annotations


class IRGridError(Exception):
    """Base of every error irgrid raises on purpose."""

    def __init__(self, message: str, *, layer: object = None, port: int | None = None) -> None:
        self.layer = layer
        self.port = port
        self.reason = message
        where = describe(layer, port)
        super().__init__(f"{where}: {message}" if where else message)


def describe(layer: object = None, port: int | None = None) -> str:
    """'GridSample layer "gs" (id 3), port 1': the prefix every layer error starts with."""
    if layer is None:
        return "" if port is None else f"port {port}"
    text = f'{layer.type} layer "{layer.name}" (id {layer.id})'
    return text if port is None else f"{text}, port {port}"


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



class ConfigError(IRGridError, ValueError):
    """A setting irgrid cannot use (a thread count, an environment variable).

    Also a ValueError, so code written when set_num_threads raised ValueError still catches it.
    """


class NotBuiltError(IRGridError, ImportError):
    """The compiled kernels are missing: an un-built source folder was imported instead of an install.

    Also an ImportError (it is one), and not a ValueError, so layer runners do not report it as a layer's
    failure.
    """
