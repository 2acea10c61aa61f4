"""`check_model`: bind and infer every layer and report every problem, including disagreements with
the dims and types the IR declares."""
from __future__ import annotations

import os

from .binding import bind_model
from .declared import declared_mismatches
from .errors import Problem
from .inference import infer_model, oversized
from .ir.model import Model
from .ir.reader import read_ir
from .shapes import ShapeArg, resolve_shapes


def check_model(model: Model | str | os.PathLike, shapes: ShapeArg | None = None) -> list[Problem]:
    """All problems found: unsupported layers and bad attributes, inference errors, mismatches with the
    IR's declared port dims and types, and values too large for this machine's memory.

    `shapes` re-infers for concrete input shapes (by Parameter or tensor name).
    """
    problems: list[Problem] = []
    if not isinstance(model, Model):
        model = bind_model(read_ir(model), on_problem=problems.append)
    overrides, declared_hold = resolve_shapes(model, shapes)
    infos = infer_model(model, overrides, on_problem=problems.append)
    if declared_hold:
        problems.extend(declared_mismatches(model, infos))
    problems.extend(oversized(model, infos))
    return problems
