"""Grids computed from one field fused into GridSample, so no grid tensor is ever written: warps by a
displacement field, and lattices translated per item.

Optical-flow and registration networks warp by a field of displacements in pixels: PWC-Net's
backward warp, VoxelMorph's SpatialTransformer (VecInt runs it 7 times), RAFT-style upsampling:

    grid = base + flow                              base: the output points' own pixel indices
    grid[:, i] = 2 * grid[:, i] / (size_i - 1) - 1  per component, often by slice assignment
    GridSample(x, grid.permute(0, 2, 3, 1)[..., ::-1], align_corners=True)

Every exporter writes this differently: ScatterNDUpdate chains of flattened indices and a Gather for
the channel flip (`ov.convert_model`), Gather + Concat (`torch.onnx.export(dynamo=False)`),
ScatterElementsUpdate chains with the normalisation folded to one multiply-add (the dynamo exporter,
through OpenVINO's frontend). On irgrid's runtime those layers cost 2-3x the sampling itself
(benchmarks/README.md, "Warps by a displacement field, fused").

So the graph is matched by what it computes, not by how it is written. A GridSample's grid is a
displacement warp when the layers that only feed it (`_glue`) are of types that keep values affine
(`_AFFINE_PORTS`: arithmetic with constants, data movement with constant indices) and read one
non-constant tensor, the field (N, m, *out_dims), at the output's own points. Then each grid component
k is, exactly in real arithmetic, g_k = (i_k + gain_k * field[component_k]) * scale_k + shift_k with
i_k the point's index along out dim k (innermost first). The four are fitted from the glue run on a
zero field and on one unit field per channel (`_fit`), then checked on a random field, point by point,
within `TOLERANCE` of each term's magnitude: a glue that flips, shifts or mixes points, or rounds
through f16, fails the check and stays as written. The GridSamples then run the kernel's displaced
source (kernels/core/grid_sample.h, irgrid_displacement): the coordinates of each block of points are
computed from the field as the block is sampled.

RAFT's correlation lookup is the other common form: each item (a pixel's correlation map) is sampled
at a small window of offsets moved by that pixel's coordinates, `coords.view(N, 1, 1, 2) + delta`, then
normalised. Its grid is a lattice translated per item (`Translation`), found the same way
(`_fit_translation`: the lattice from the zero field, the gain from a constant one, the element each
item reads from a field of the elements' own indices, all checked on a random field) and run as the
fused AffineGrid (fusion.py) with a theta per item that a few numpy operations compute from the field
on each call.

Not bitwise the unfused graph: the kernel evaluates the fitted formula, one rounding per operation,
where the model's glue rounds after each of its own, so a coordinate can differ by a few ulps (f32:
about 1e-7 of the normalised range; tests/runtime/test_displacement.py states the tolerances against
the unfused graph and torch on each exporter's IR). Fused only where data, field and grid are all f32
or all f64, the out dims static, r <= 3, and the grid read by GridSamples alone.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..inference import Key
from ..ir import element_types
from ..ir.dims import is_static
from ..ir.model import Layer, Model
from ..ops import grid_sample
from ..ops.common import output_buffer
from ..registry import Attrs, OpSpec, PreparedFn, RunContext, TensorInfo
from ..timing import tunes_kernels
from .execution import LAYER_FAILURES, layer_runner
from .fusion import FUSED_KERNEL, Fusion, FusionPlan, consumers_of, input_key

# Layer types whose output is affine in the listed inputs when every other input is a constant (None:
# in any one of them; "all": in all of them at once, a sum).
_AFFINE_PORTS: dict[str, tuple[int, ...] | str | None] = {
    "Add": "all", "Subtract": "all", "Concat": "all", "Multiply": None, "Divide": (0,), "Negative": (0,),
    "Convert": (0,), "Transpose": (0,), "Reshape": (0,), "Squeeze": (0,), "Unsqueeze": (0,), "Broadcast": (0,),
    "Tile": (0,), "Slice": (0,), "StridedSlice": (0,), "Split": (0,), "VariadicSplit": (0,), "Gather": (0,),
    "GatherND": (0,), "GatherElements": (0,), "ScatterNDUpdate": (0, 2), "ScatterUpdate": (0, 2),
    "ScatterElementsUpdate": (0, 2),
}
_TYPES = ("f32", "f64")
MAX_FIELD_CHANNELS = 4  # a flow has r channels; more is some other computation
TOLERANCE = 64  # units of the type's epsilon times each coordinate's terms' magnitude (module docstring)


@dataclasses.dataclass(frozen=True)
class Displacement:
    """The fitted warp: grid component k = (i_k + gain[k] * field[component[k]]) * scale[k] + shift[k]."""

    component: tuple[int, ...]
    gain: tuple[float, ...]
    scale: tuple[float, ...]
    shift: tuple[float, ...]

    def fits(self, field: np.ndarray, grid: np.ndarray, tolerance: float) -> bool:
        """Whether `grid` (N, *out_dims, r) is this warp of `field` (N, m, *out_dims), in f64, to within
        `tolerance` times each coordinate's terms' magnitude (the scale of their rounding errors)."""
        dims = field.shape[2:]
        r = len(dims)
        for k in range(r):
            axis = r - 1 - k  # the out dim along which i_k counts
            index = np.arange(dims[axis], dtype=np.float64).reshape([-1 if a == axis else 1 for a in range(r)])
            moved = self.gain[k] * field[:, self.component[k]].astype(np.float64)
            expected = (index + moved) * self.scale[k] + self.shift[k]
            bound = tolerance * ((index + np.abs(moved)) * abs(self.scale[k]) + abs(self.shift[k]) + 1)
            if not np.all(np.abs(grid[..., k] - expected) <= bound):
                return False
        return True


def plan_displacement_warps(model: Model, infos: dict[Key, TensorInfo], constants: dict[Key, np.ndarray],
                            returned: set[Key], plan: FusionPlan) -> None:
    """Adds each GridSample whose grid is a displacement warp or a translated lattice (module docstring) to
    `plan`."""
    consumers = consumers_of(model)
    grids = {input_key(model, layer, 1) for layer in model.layers.values() if layer.type == "GridSample"}
    for grid_key in sorted(grids):
        users = consumers[grid_key]
        if (grid_key in constants or grid_key in returned or grid_key[0] in plan.absorbed
                or any(u.type != "GridSample" or i != 1 or u.id in plan.fused for u, i in users)):
            continue
        glue = _glue(model, consumers, constants, returned, grid_key, {u.id for u, _ in users})
        if glue is None:
            continue
        layers, field_key = glue
        fitted = (_fit(model, infos, constants, layers, field_key, grid_key, users)
                  or _fit_translation(model, infos, constants, layers, field_key, grid_key, users))
        if fitted is None:
            continue
        op = _fused_op(fitted) if isinstance(fitted, Displacement) else _translated_op(fitted)
        for user, _ in users:
            stand_in = dataclasses.replace(user, op=op, attrs={**user.attrs, "fitted": fitted})
            plan.fused[user.id] = Fusion(model.layers[grid_key[0]], stand_in, [input_key(model, user, 0), field_key])
        for layer in layers:
            plan.absorbed[layer.id] = [user.id for user, _ in users]


def _glue(model: Model, consumers: dict[Key, list[tuple[Layer, int]]], constants: dict[Key, np.ndarray],
          returned: set[Key], grid_key: Key, users: set[str]) -> tuple[list[Layer], Key] | None:
    """The layers that compute the grid and feed nothing else at run time (a ShapeOf folded to a
    constant reads nothing), in model order, and the one non-constant tensor they read (the field);
    None if they are not all of affine types or read more than one."""
    def folded(layer: Layer) -> bool:
        return all((layer.id, i) in constants for i in range(len(layer.outputs)))

    inside: set[str] = set()
    for layer_id in reversed(model.order):  # readers before the layers they read
        layer = model.layers[layer_id]
        outputs = [(layer_id, i) for i in range(len(layer.outputs))]
        if layer.type not in _AFFINE_PORTS or folded(layer) or any(key in returned for key in outputs):
            continue
        readers = {u.id for key in outputs for u, _ in consumers[key] if not folded(u)}
        if grid_key in outputs:
            if readers == users:
                inside.add(layer_id)
        elif inside and readers and readers <= inside:
            inside.add(layer_id)
    if grid_key[0] not in inside:
        return None
    layers = [model.layers[i] for i in model.order if i in inside]
    leaves = set()
    for layer in layers:
        ports = _AFFINE_PORTS[layer.type]
        variable = [i for i in range(len(layer.inputs)) if input_key(model, layer, i) not in constants]
        if ports is None:
            if len(variable) > 1:
                return None
        elif ports != "all" and not set(variable) <= set(ports):
            return None
        leaves.update(input_key(model, layer, i) for i in variable if input_key(model, layer, i)[0] not in inside)
    if len(leaves) != 1:
        return None
    return layers, leaves.pop()


def _fit(model: Model, infos: dict[Key, TensorInfo], constants: dict[Key, np.ndarray], layers: list[Layer],
         field_key: Key, grid_key: Key, users: list[tuple[Layer, int]]) -> Displacement | None:
    """The displacement the glue computes (module docstring), or None where it computes something else."""
    field, grid = infos[field_key], infos[grid_key]
    data_types = {infos[input_key(model, user, 0)].element_type for user, _ in users}
    if (field.element_type not in _TYPES or data_types != {field.element_type}
            or grid.element_type != field.element_type or not is_static(field.shape) or not is_static(grid.shape)
            or len(grid.shape) not in (3, 4, 5)):
        return None
    rank = len(grid.shape) - 2
    dims, channels = tuple(grid.shape[1:-1]), field.shape[1] if len(field.shape) > 1 else 0
    if (grid.shape[-1] != rank or tuple(field.shape) != (grid.shape[0], channels, *dims)
            or not 1 <= channels <= MAX_FIELD_CHANNELS):
        return None
    dtype = element_types.numpy_dtype(field.element_type)
    amplitude = float(2 ** np.ceil(np.log2(max(dims))))  # a step as large as the grid's range: an exact fit
    probes = [np.zeros(field.shape, dtype)]
    for c in range(channels):
        probes.append(np.zeros(field.shape, dtype))
        probes[-1][:, c] = amplitude
    probes.append((np.random.default_rng(0).uniform(-1, 1, field.shape) * max(dims)).astype(dtype))
    try:
        grids = [_evaluate(model, infos, constants, layers, field_key, grid_key, probe).astype(np.float64)
                 for probe in probes]
    except LAYER_FAILURES:
        return None
    zero = grids[0]
    component, gain, scale, shift = [], [], [], []
    for k in range(rank):
        axis = rank - k  # the grid's axis along which i_k counts
        line = np.moveaxis(zero[..., k], axis, -1).reshape(-1, dims[rank - 1 - k])[0]
        scale_k = (line[-1] - line[0]) / (len(line) - 1) if len(line) > 1 else 1.0
        moved = [bool(np.any(g[..., k] != zero[..., k])) for g in grids[1:channels + 1]]
        if sum(moved) != 1 or scale_k == 0:
            return None
        c = moved.index(True)
        gain_k = (grids[1 + c][..., k] - zero[..., k]).reshape(-1)[0] / (amplitude * scale_k)
        component.append(c)
        gain.append(float(round(gain_k)) if abs(gain_k - round(gain_k)) <= 1e-4 * abs(gain_k) else float(gain_k))
        scale.append(float(scale_k))
        shift.append(float(line[0]))
    displacement = Displacement(tuple(component), tuple(gain), tuple(scale), tuple(shift))
    tolerance = TOLERANCE * np.finfo(dtype).eps  # the zero field and a random one (the unit fields gave the fit)
    if not (displacement.fits(probes[0], zero, tolerance) and displacement.fits(probes[-1], grids[-1], tolerance)):
        return None
    return displacement


def _evaluate(model: Model, infos: dict[Key, TensorInfo], constants: dict[Key, np.ndarray], layers: list[Layer],
              field_key: Key, grid_key: Key, field: np.ndarray) -> np.ndarray:
    """The grid the glue computes from `field`."""
    values: dict[Key, np.ndarray] = {field_key: field}
    for layer in layers:
        keys = [input_key(model, layer, i) for i in range(len(layer.inputs))]
        args = [values[key] if key in values else constants[key] for key in keys]
        types = [infos[(layer.id, i)].element_type for i in range(len(layer.outputs))]
        for index, value in enumerate(layer_runner(layer, types)(args, RunContext(1, [None] * len(types)))):
            values[(layer.id, index)] = value
    return values[grid_key]


def _fused_op(d: Displacement) -> OpSpec:
    def plan(attrs: Attrs, data: TensorInfo, field: TensorInfo, tune: bool = False):
        return grid_sample.sample_plan(data.shape, field.shape, element_types.numpy_dtype(data.element_type),
                                       attrs["mode"], attrs["padding_mode"], attrs["align_corners"],
                                       displacement=(d.component, d.gain, d.scale, d.shift), tune=tune)

    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        data, field = inputs
        sampler = plan(attrs, *(TensorInfo(a.shape, element_types.from_dtype(a.dtype)) for a in inputs))
        return [sampler(data, field, output_buffer(ctx.out, 0, sampler.out_shape, data.dtype), ctx.threads)]

    def prepare(attrs: Attrs, inputs: list[TensorInfo]) -> PreparedFn | None:
        try:
            return plan(attrs, *inputs, tune=tunes_kernels()).run
        except ValueError:
            return None  # `run` reports it per call

    return OpSpec(type="GridSample", versions=("fused",), attrs=(), inputs=(2, 2), infer=None, run=run,
                  prepare=prepare, native=False, kernel=True, entry=FUSED_KERNEL,
                  summary="GridSample at points displaced by a field, fused")


@dataclasses.dataclass(frozen=True, eq=False)
class Translation:
    """A lattice translated per item: grid component k of item b at lattice point x is
    scale[k] * x[axis[k]] + offset[k] + gain[k] * field.flat[index[k][b]], x AffineGrid's lattice
    coordinates (`align_corners`) listed innermost first; `axis` may permute them (RAFT's window is
    meshgrid(d, d, indexing="ij"): its x counts along the outer dim). That is the fused AffineGrid with
    theta[b][k] = scale[k] at column axis[k] and translation offset + gain * field (`theta`)."""

    dims: tuple[int, ...]  # the lattice, outermost first
    align_corners: bool
    axis: tuple[int, ...]  # per component, the lattice coordinate (innermost first) it counts along
    scale: tuple[float, ...]
    offset: tuple[float, ...]
    gain: tuple[float, ...]
    index: np.ndarray  # (r, items): per component, the field element each item reads

    def theta(self, field: np.ndarray) -> np.ndarray:
        flat, t, r = field.reshape(-1), field.dtype.type, len(self.dims)
        theta = np.zeros((self.index.shape[1], r, r + 1), field.dtype)
        for k in range(r):
            theta[:, k, self.axis[k]] = t(self.scale[k])
            theta[:, k, r] = flat[self.index[k]] * t(self.gain[k]) + t(self.offset[k])
        return theta


def _lattice(length: int, align_corners: bool) -> np.ndarray:
    """AffineGrid's base coordinates along an axis of `length` points (affine.h), in f64."""
    if align_corners:
        return np.linspace(-1, 1, length) if length > 1 else np.zeros(1)
    return (2 * np.arange(length) + 1) / length - 1


def _fit_translation(model: Model, infos: dict[Key, TensorInfo], constants: dict[Key, np.ndarray],
                     layers: list[Layer], field_key: Key, grid_key: Key, users: list[tuple[Layer, int]]
                     ) -> Translation | None:
    """The translated lattice the glue computes (RAFT's correlation lookup: `coords.view(N, 1, 1, 2) +
    delta`, normalised), or None. Fitted like a warp: the lattice from the zero field, the gain from a
    constant one, the element each item reads from a field holding each element's own index, then
    checked on a random field."""
    field, grid = infos[field_key], infos[grid_key]
    data = [infos[input_key(model, user, 0)] for user, _ in users]
    if (field.element_type not in _TYPES or grid.element_type != field.element_type
            or any(d.element_type != field.element_type or d.shape is None or d.shape[:1] != grid.shape[:1]
                   for d in data)
            or not is_static(field.shape) or not is_static(grid.shape) or len(grid.shape) not in (4, 5)
            or grid.shape[-1] != len(grid.shape) - 2):
        return None
    rank, items, dims = len(grid.shape) - 2, grid.shape[0], tuple(grid.shape[1:-1])
    dtype = element_types.numpy_dtype(field.element_type)
    size = int(np.prod(field.shape))
    if not 1 <= size < 2 ** np.finfo(dtype).nmant or items < 1:  # element indices exact in the field's type
        return None
    amplitude = float(2 ** np.ceil(np.log2(max(size, 2))))
    noise = np.random.default_rng(0).uniform(-1, 1, field.shape) * max(dims)
    probes = [np.zeros(field.shape, dtype), np.full(field.shape, amplitude, dtype),
              np.arange(size, dtype=dtype).reshape(field.shape), noise.astype(dtype)]
    try:
        zero, constant, indices, moved = [_evaluate(model, infos, constants, layers, field_key, grid_key, probe)
                                          .astype(np.float64) for probe in probes]
    except LAYER_FAILURES:
        return None
    if not np.all(zero == zero[:1]):
        return None
    tolerance = TOLERANCE * np.finfo(dtype).eps
    counts = []  # per component, the lattice's axis (outermost first) along which it changes
    for k in range(rank):
        changes = [a for a in range(rank) if np.any(np.diff(zero[0, ..., k], axis=a) != 0)]
        if len(changes) > 1:
            return None
        counts.append(changes[0] if changes else rank - 1 - k)
    for align_corners in (True, False):
        scale, offset, gain, index = [], [], [], []
        for k in range(rank):
            axis = counts[k]
            x = _lattice(dims[axis], align_corners)
            line = np.moveaxis(zero[0, ..., k], axis, -1).reshape(-1, dims[axis])[0]
            scale.append(float((line[-1] - line[0]) / (x[-1] - x[0])) if len(x) > 1 else 1.0)
            offset.append(float(line[0] - scale[-1] * x[0]))
            gain.append(float((constant[..., k] - zero[..., k]).reshape(-1)[0] / amplitude))
            if gain[-1] == 0:
                return None
            read = np.rint((indices[:, ..., k] - zero[:, ..., k]).reshape(items, -1)[:, 0] / gain[-1])
            if not np.all((read >= 0) & (read < size)):
                return None
            index.append(read.astype(np.int64))
        fitted = Translation(dims, align_corners, tuple(rank - 1 - a for a in counts), tuple(scale), tuple(offset),
                             tuple(gain), np.stack(index))
        if all(_translation_fits(fitted, probe, value, tolerance) for probe, value in
               ((probes[0], zero), (probes[2], indices), (probes[3], moved))):
            return fitted
    return None


def _translation_fits(t: Translation, field: np.ndarray, grid: np.ndarray, tolerance: float) -> bool:
    """Whether `grid` is `t` of `field`, in f64, to within `tolerance` times each coordinate's terms'
    magnitude."""
    rank, flat = len(t.dims), field.reshape(-1).astype(np.float64)
    for k in range(rank):
        axis = rank - 1 - t.axis[k]
        x = _lattice(t.dims[axis], t.align_corners).reshape([-1 if a == axis else 1 for a in range(rank)])
        moved = (t.gain[k] * flat[t.index[k]]).reshape(-1, *[1] * rank)
        expected = t.scale[k] * x + t.offset[k] + moved
        bound = tolerance * (np.abs(t.scale[k] * x) + abs(t.offset[k]) + np.abs(moved) + 1)
        if not np.all(np.abs(grid[..., k] - expected) <= bound):
            return False
    return True


def _translated_op(t: Translation) -> OpSpec:
    def plan(attrs: Attrs, data: TensorInfo, tune: bool = False):
        theta_shape = (data.shape[0], len(t.dims), len(t.dims) + 1)
        return grid_sample.sample_plan(data.shape, theta_shape, element_types.numpy_dtype(data.element_type),
                                       attrs["mode"], attrs["padding_mode"], attrs["align_corners"], t.dims,
                                       t.align_corners, tune=tune)

    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        data, field = inputs
        sampler = plan(attrs, TensorInfo(data.shape, element_types.from_dtype(data.dtype)))
        return [sampler(data, t.theta(field), output_buffer(ctx.out, 0, sampler.out_shape, data.dtype), ctx.threads)]

    def prepare(attrs: Attrs, inputs: list[TensorInfo]) -> PreparedFn | None:
        try:
            sampler = plan(attrs, inputs[0], tune=tunes_kernels())
        except ValueError:
            return None  # `run` reports it per call
        return lambda arrays, ctx: sampler.run([arrays[0], t.theta(arrays[1])], ctx)

    return OpSpec(type="GridSample", versions=("fused",), attrs=(), inputs=(2, 2), infer=None, run=run,
                  prepare=prepare, native=False, kernel=True, entry=FUSED_KERNEL,
                  summary="GridSample at a lattice translated per item, fused")
