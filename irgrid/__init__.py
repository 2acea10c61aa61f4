"""irgrid: read, check and run OpenVINO IR models that use grid operators.

    import irgrid
    model = irgrid.read_model("model.xml")
    problems = irgrid.check_model(model)
    compiled = irgrid.compile_model(model)
    outputs = compiled({"data": x, "grid": g})
"""
import os

# libgomp's default wait policy spins after every parallel region; beside OpenVINO's own threads
# (an OpenVINO extension op, a benchmark in the same process) that spinning measured a 20x slowdown
# (docs/openvino.md). What PASSIVE costs irgrid alone is waking the sleeping thread at each parallel region:
# up to 3x on a 40 us call when every call opened one, so the kernels skip the parallel region when
# the work fits in one chunk; since then benchmarks/bench.py measures PASSIVE/ACTIVE at 0.94-1.02 on
# 2 cores, from a 20 us call to a 7 ms one. It must be set before libgomp loads, i.e. before the
# first kernel import; a user's own choice is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

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

__version__ = "0.1.0"

__all__ = [
    "read_model", "check_model", "compile_model", "CompiledModel", "set_num_threads", "get_num_threads",
    "show_config", "IRGridError", "ConfigError", "ParseError", "WeightsError", "UnsupportedLayerError",
    "LayerAttributeError", "ShapeError", "InputError", "NotBuiltError", "OpenVINOError", "__version__",
]
