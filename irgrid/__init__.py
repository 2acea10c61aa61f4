"""irgrid: read, check and run OpenVINO IR models that use grid operators.

    import irgrid
    model = irgrid.read_model("model.xml")
    problems = irgrid.check_model(model)
    compiled = irgrid.compile_model(model)
    outputs = compiled({"data": x, "grid": g})
"""
import os

# libgomp's default wait policy spins for milliseconds after every parallel region, which slows
# OpenVINO's own threads beside it (docs/openvino.md); PASSIVE alone makes waking the worker costly
# for back-to-back calls, so it spins briefly first (GOMP_SPINCOUNT; benchmarks/README.md, "Waking the
# OpenMP worker"). Both must be set before libgomp loads, i.e. before the first kernel import; a
# user's own wait policy is kept as it is (PASSIVE without the spin if so chosen).
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.environ.setdefault("GOMP_SPINCOUNT", "1000")

from . import _unbuilt  # noqa: E402

_unbuilt.install()

from . import ops  # noqa: E402,F401  (registers every operator)
from .binding import read_model  # noqa: E402
from .checker import check_model  # noqa: E402
from .config import show_config  # noqa: E402
from .errors import (  # noqa: E402
    ConfigError, InputError, IRGridError, LayerAttributeError, NotBuiltError, OpenVINOError, ParseError,
    ShapeError, UnsupportedLayerError, WeightsError)
from .runtime.compiled import CompiledModel, compile_model  # noqa: E402
from .threads import get_num_threads, set_num_threads  # noqa: E402
from ._version import __version__  # noqa: E402

__all__ = [
    "read_model", "check_model", "compile_model", "CompiledModel", "set_num_threads", "get_num_threads",
    "show_config", "IRGridError", "ConfigError", "ParseError", "WeightsError", "UnsupportedLayerError",
    "LayerAttributeError", "ShapeError", "InputError", "NotBuiltError", "OpenVINOError", "__version__",
]
