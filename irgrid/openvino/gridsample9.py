"""GridSample-9 layers that irgrid's OpenVINO device runs on irgrid's GridSample instead.

OpenVINO's CPU plugin runs GridSample-9 on a JIT kernel; irgrid's GridSample (`irgrid1`, the native
library's op, the same semantics) is faster on some layers and slower on others, and which depends on
the CPU as much as on the layer: on AMD Zen 5 and Zen 4 hosts irgrid's op won from one channel in every
mode (nearest of a few channels within 5%), on an Intel Xeon (Cascade Lake, before irgrid's few-channel
paths) only from 8 channels bilinear, 16 nearest and 4 bicubic (benchmarks/README.md, "irgrid's
GridSample in place of GridSample-9"). So each
f32 GridSample-9 of static shapes is timed both ways on this machine (`_irgrid_faster`) and the faster
kept; with IRGRID_AUTO=rules (irgrid/timing.py), dynamic shapes, or a layer too large to time, a table
by CPU kind and channel count decides (`sampling_from_channels`). A replaced layer gives irgrid's
runtime's bits.

Timing two OpenVINO models call by call in one process is biased: each call finds the other model's
threads in the cores and its data in the caches (on Zen 5, X 1xCx256x256 at one or two channels, the
one timed second looked 1.5-2.9x slower than it runs back to back). In turns of one untimed call and
three timed ones, with the inputs set once as benchmark_app sets them, the ratios came within 0-5% of
each model timed alone (benchmarks/README.md, "irgrid's GridSample in place of GridSample-9").
"""
from __future__ import annotations

import functools

import numpy as np
import openvino as ov
import openvino.opset9 as opset9

from ..timing import auto_mode, race
from .native import library_path

# GridSample-9 layers whose data has at least this many channels (static) run on irgrid's GridSample
# where they are not timed (module docstring), per mode: there irgrid's kernel was faster than the CPU
# plugin's. Per the CPU each table was measured on (benchmarks/replacement_crossover.py;
# benchmarks/README.md, "irgrid's GridSample in place of GridSample-9"):
_SAMPLING_FROM_CHANNELS = {
    # AMD Zen 5 with AVX-512 allowed (2026-11-30): irgrid's op at least as fast from one channel in every
    # mode and padding (bilinear 1.30x and more, with reflection padding 1.38x since its pair reads;
    # bicubic 0.99x and more, with reflection padding 2.9x since its one-channel pixels; nearest 1.04x and
    # more with nearest by points, but 0.95x at three channels on the smooth grid)
    "zen5": {"bilinear": 1, "nearest": 1, "bicubic": 1},
    # AMD Zen 4 with AVX-512 allowed (2026-12-01, with stacked rows), every padding: bilinear 1.19x and more,
    # bicubic 1.46x and more, nearest 1.02x and more but for two and four channels on the smooth grid with
    # zeros padding (0.95-0.99x, parity within the rounds' spread)
    "zen4": {"bilinear": 1, "nearest": 1, "bicubic": 1},
    # any other CPU: an Intel Xeon, Cascade Lake (2026-11-28), before the few-channel paths of 2026-11-30
    # and measured alternating in one process, which made irgrid's op look slower than it runs
    "xeon": {"bilinear": 8, "nearest": 16, "bicubic": 4},
}
# Timing a layer: turns of WARM untimed and CALLS timed calls each, at most ROUNDS of them, none begun
# after SECONDS; not at all past LIMIT_BYTES of data, grid and output (each model holds its own).
WARM = 1
CALLS = 3
ROUNDS = 4
SECONDS = 0.25
LIMIT_BYTES = 64 << 20


@functools.cache
def _sampling_table() -> dict:
    """_SAMPLING_FROM_CHANNELS's table for this CPU: where AVX-512 is allowed (`ONEDNN_MAX_CPU_ISA` caps
    both libraries), Zen 5's on AMD family 0x1A or later and Zen 4's on family 0x19 (whose CPUs with
    AVX-512 are Zen 4: Zen 3 has none); the Xeon's elsewhere (the CPUs not measured included)."""
    from .._kernels import sampling

    family = sampling.amd_family()
    if not sampling.avx512_available() or family < 0x19:
        return _SAMPLING_FROM_CHANNELS["xeon"]
    return _SAMPLING_FROM_CHANNELS["zen5" if family >= 0x1A else "zen4"]


def sampling_from_channels(mode: str, padding: str) -> int:
    """The channels from which the device runs irgrid's GridSample in place of an untimed GridSample-9 of
    this mode and padding on this CPU (a (mode, padding) entry of its table, else the mode's)."""
    table = _sampling_table()
    return table.get((mode, padding), table[mode])


def replace_gridsample9(model: ov.Model, config: dict) -> int:
    """Puts irgrid's GridSample in place of each f32 GridSample-9 of `model` where it is faster on this
    CPU (the module docstring), under the layer's name and tensor names; returns how many. `config`:
    the compile_model configuration the model will run with (its thread count). Needs the native
    library loaded for the process (runner.add_irgrid_extension)."""
    factory = None
    replaced = 0
    for node in model.get_ordered_ops():
        if node.get_type_name() != "GridSample" or node.get_type_info().version_id != "opset9":
            continue
        if any(node.get_input_element_type(i) != ov.Type.f32 for i in range(2)):
            continue
        attrs = node.get_attributes()
        data, grid = (node.get_input_partial_shape(i) for i in range(2))
        if data.rank.is_dynamic or data[1].is_dynamic:
            continue
        faster = None
        if data.is_static and grid.is_static and auto_mode() == "measure" and _measurable(data, grid):
            try:
                faster = _irgrid_faster(tuple(data.to_shape()), tuple(grid.to_shape()), _attributes(attrs),
                                        tuple(sorted(config.items())))
            except RuntimeError:  # OpenVINO could not build or run a timed model (memory): the table
                pass
        if faster is None:
            faster = data[1].get_length() >= sampling_from_channels(attrs["mode"], attrs["padding_mode"])
        if not faster:
            continue
        if factory is None:
            factory = _factory()
        irgrid_node = _irgrid_node(factory, [node.input_value(0), node.input_value(1)], _attributes(attrs))
        irgrid_node.set_friendly_name(node.get_friendly_name())
        old, new = node.output(0), irgrid_node.output(0)
        new.get_tensor().set_names(old.get_names())
        old.replace(new)
        replaced += 1
    return replaced


def _attributes(attrs: dict) -> tuple[tuple[str, str], ...]:
    """GridSample-9's attributes as irgrid's op takes them (and as a cache key)."""
    return (("align_corners", "true" if attrs["align_corners"] else "false"), ("mode", attrs["mode"]),
            ("padding_mode", attrs["padding_mode"]))


def _factory():
    """A NodeFactory that makes the native library's ops (it does not keep the library loaded: runner's
    _keep_loaded does)."""
    from openvino.utils.node_factory import NodeFactory

    factory = NodeFactory("opset9")
    factory.add_extension(str(library_path()))
    return factory


def _irgrid_node(factory, inputs: list, attributes: tuple[tuple[str, str], ...]) -> ov.Node:
    """irgrid's GridSample (irgrid1) on these inputs, as the replacement and the timing both make it."""
    return factory.create("GridSample", inputs, dict(attributes))


def _measurable(data: ov.PartialShape, grid: ov.PartialShape) -> bool:
    """Whether a layer of these static shapes is small enough to time (LIMIT_BYTES) and not empty."""
    shape_x, shape_g = data.to_shape(), grid.to_shape()
    out = shape_x[0] * shape_x[1] * shape_g[1] * shape_g[2]
    return 4 * (int(np.prod(shape_x)) + int(np.prod(shape_g)) + out) <= LIMIT_BYTES and out > 0


@functools.lru_cache(maxsize=64)
def _irgrid_faster(data: tuple[int, ...], grid: tuple[int, ...], attributes: tuple[tuple[str, str], ...],
                   config: tuple) -> bool:
    """Whether irgrid's GridSample runs this layer faster than the CPU plugin's GridSample-9: each as a
    one-layer model compiled with `config`, on random data and a smooth warp (real grids are warps:
    flows, spatial transformers), timed by `race` (module docstring); ties go to the plugin."""
    x, g = (opset9.parameter(list(shape), np.float32) for shape in (data, grid))
    attrs = dict(attributes)
    theirs = opset9.grid_sample(x, g, {"align_corners": attrs["align_corners"] == "true", "mode": attrs["mode"],
                                       "padding_mode": attrs["padding_mode"]})
    ours = _irgrid_node(_factory(), [x.output(0), g.output(0)], attributes)
    core = ov.Core()
    core.add_extension(str(library_path()))
    inputs = [np.random.default_rng(0).standard_normal(data, dtype=np.float32), _warp(grid)]
    calls = []
    for node in (ours, theirs):
        request = core.compile_model(ov.Model([node], [x, g]), "CPU", dict(config)).create_infer_request()
        for index, array in enumerate(inputs):  # set once, sharing the arrays, as benchmark_app does
            request.set_input_tensor(index, ov.Tensor(array, shared_memory=True))
        calls.append(functools.partial(_infer, request))
    mine, plugin = race(calls, inputs, ROUNDS, SECONDS, CALLS, WARM)
    return mine < plugin


def _infer(request: ov.InferRequest, inputs) -> None:
    """One call of a request whose inputs are set (`inputs`: race's, already in it)."""
    request.infer(share_outputs=True)


def _warp(shape: tuple[int, ...]) -> np.ndarray:
    """A grid of `shape` (N, H, W, 2): the identity (align_corners=0) rotated by 0.1 radian, scaled by 0.95."""
    height, width = shape[1:3]
    ys, xs = np.meshgrid((2 * np.arange(height) + 1) / height - 1, (2 * np.arange(width) + 1) / width - 1,
                         indexing="ij")
    cos, sin = 0.95 * np.cos(0.1), 0.95 * np.sin(0.1)
    warp = np.stack([cos * xs - sin * ys, sin * xs + cos * ys], axis=-1)
    return np.ascontiguousarray(np.broadcast_to(warp, shape), dtype=np.float32)
