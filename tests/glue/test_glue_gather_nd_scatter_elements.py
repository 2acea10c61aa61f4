"""GatherND-5/-8 and ScatterElementsUpdate-3/-12 against OpenVINO's CPU plugin on saved IRs.

Results are compared exactly, except float sum/prod/mean (rtol 1e-6; f32 has so far matched bit for bit,
as both add in the order of the updates along the axis) and f64 data, which the CPU plugin computes in
f32 (f64 values are f32 values here, so moving them is exact; sums, products and means compare with
rtol 1e-6, atol 1e-6). Shapes must be the ones OpenVINO declares, dynamic dims included.
"""
from __future__ import annotations

import re

import numpy as np
import openvino as ov
import openvino.opset3 as o3
import openvino.opset5 as o5
import openvino.opset8 as o8
import openvino.opset12 as o12
import pytest

import irgrid
from irgrid.builder import IRBuilder
from irgrid.errors import InputError, ShapeError
from irgrid.inference import infer_model
from irgrid.registry import TensorInfo, find
from oracles import assert_same, named, ov_reference, rng, run_both, save_ov


def _values(shape, dtype, seed: int, scale: float = 10.0) -> np.ndarray:
    """Random data of `dtype`; f64 values are f32 values (the CPU plugin carries f64 as f32)."""
    r = rng(seed)
    if dtype == np.bool_:
        return r.integers(0, 2, size=shape).astype(np.bool_)
    if np.dtype(dtype).kind == "i":
        return r.integers(-int(scale), int(scale) + 1, size=shape).astype(dtype)
    return (r.normal(size=shape) * scale).astype(np.float32).astype(dtype)


def _indices(shape, size: int, dtype, seed: int) -> np.ndarray:
    """Indices into an axis of `size`, negative ones included."""
    return rng(seed).integers(-size, size, size=shape).astype(dtype)


def _shape(partial: ov.PartialShape):
    return None if partial.rank.is_dynamic else tuple(d.get_length() if d.is_static else None for d in partial)


def _assert_shapes_as_openvino(path, ov_core, types=("GatherND", "ScatterElementsUpdate")) -> None:
    """irgrid's inference gives each layer of `types` the output dims OpenVINO gives it (and declares in
    the IR), and check_model finds nothing wrong."""
    declared = {op.get_friendly_name(): _shape(op.get_output_partial_shape(0))
                for op in ov_core.read_model(str(path)).get_ops()}
    model = irgrid.read_model(path)
    infos = infer_model(model)
    layers = [layer for layer in model.layers.values() if layer.type in types]
    assert layers
    for layer in layers:
        inferred = infos[(layer.id, 0)].shape
        assert inferred == declared[layer.name], (layer.name, inferred, declared[layer.name])
        if inferred is not None:
            assert layer.outputs[0].shape == inferred  # the dims written in the IR
    assert irgrid.check_model(path) == []


# ---------------------------------------------------------------------------------------------
# GatherND
# ---------------------------------------------------------------------------------------------

GATHER_ND = [  # data shape, indices shape (last dim: tuple length), batch_dims
    ((5,), (3, 1), 0),
    ((4, 5), (2,), 0),  # one tuple of every index: a 0-d output
    ((3, 4, 5), (1,), 0),
    ((4, 5), (2, 2), 0),
    ((4, 5), (3, 1), 0),
    ((3, 4, 5, 6, 2), (2, 2, 3), 0),
    ((2, 3, 4), (2, 1), 1),
    ((2, 3, 4, 5), (2, 3, 4, 1), 1),
    ((2, 3, 4), (2, 3, 1), 2),
    ((2, 3, 4, 5), (2, 3, 2, 1), 2),
    ((2, 3, 4, 5, 6), (2, 3, 4, 2), 2),
    ((2, 3, 4, 5, 3), (2, 3, 2, 2, 3), 2),
]


@pytest.mark.parametrize("version", [5, 8])
@pytest.mark.parametrize("data_shape,indices_shape,batch_dims", GATHER_ND)
def test_gather_nd(data_shape, indices_shape, batch_dims, version, tmp_path, ov_run):
    """Ranks 1-5, batch_dims 0-2, negative indices; GatherND-5 flattens batch dims (batch_dims 2: one dim)."""
    data = _values(data_shape, np.float32, 1)
    k = indices_shape[-1]
    tuples = [_indices(indices_shape[:-1], data_shape[batch_dims + j], np.int64, 10 + j) for j in range(k)]
    indices = np.stack(tuples, axis=-1).astype(np.int32)
    x = o12.parameter(list(data_shape), np.float32, name="x")
    y = named((o5 if version == 5 else o8).gather_nd(x, o12.constant(indices), batch_dims), "y")
    expected, got = run_both(ov.Model([o12.result(y)], [x], "gnd"), [data], tmp_path, ov_run)
    assert_same(expected, got)
    if version == 5 and batch_dims == 2:
        assert got[0].shape[0] == data_shape[0] * data_shape[1]


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_gather_nd_types(dtype, index_type, tmp_path, ov_run):
    """Element and index types, with indices given at run time."""
    data = _values((2, 4, 3, 2), dtype, 2)
    indices = np.stack([_indices((2, 5), 4, index_type, 3), _indices((2, 5), 3, index_type, 4)], axis=-1)
    x = o12.parameter(list(data.shape), dtype, name="x")
    i = o12.parameter(list(indices.shape), index_type, name="i")
    y = named(o8.gather_nd(x, i, 1), "y")
    expected, got = run_both(ov.Model([o12.result(y)], [x, i], "gnd"), [data, indices], tmp_path, ov_run)
    assert got[0].dtype == dtype and got[0].shape == (2, 5, 2)
    assert_same(expected, got)


@pytest.mark.parametrize("version", [5, 8])
def test_gather_nd_dynamic_dims(version, tmp_path, ov_run, ov_core):
    """Dynamic batch and index dims: inference gives OpenVINO's dims (the flattened batch of GatherND-5
    unknown), and an unknown tuple length an unknown rank; every run agrees with OpenVINO (whose CPU
    plugin refuses an output of unknown rank: its copy of the IR is reshaped to each run's inputs)."""
    mod = o5 if version == 5 else o8
    x = o12.parameter(ov.PartialShape([-1, 3, -1, 4]), np.float32, name="x")
    i = o12.parameter(ov.PartialShape([-1, -1, -1, 1]), np.int32, name="i")
    j = o12.parameter(ov.PartialShape([-1, -1]), np.int64, name="j")
    outs = [named(mod.gather_nd(x, i, 2), "y"), named(mod.gather_nd(x, j, 0), "z")]
    model = ov.Model([o12.result(o) for o in outs], [x, i, j], "dyn")
    path = save_ov(model, tmp_path)
    _assert_shapes_as_openvino(path, ov_core)
    compiled = irgrid.compile_model(path)
    for seed, (n, rows, tuple_length) in enumerate([(5, 2, 1), (2, 3, 3)]):
        data = _values((2, 3, n, 4), np.float32, seed)
        i_value = _indices((2, 3, rows, 1), n, np.int32, seed + 1)
        j_value = np.stack([_indices((rows,), d, np.int64, seed + k) for k, d in
                            enumerate((2, 3, n)[:tuple_length])], axis=-1)
        feeds = {"x": data, "i": i_value, "j": j_value}
        static = ov_core.read_model(str(path))  # the CPU plugin refuses outputs of unknown rank
        static.reshape({name: list(value.shape) for name, value in feeds.items()})
        expected = ov_run(static, list(feeds.values()))
        got = compiled(feeds)
        assert_same(expected, list(got.values()))


# ---------------------------------------------------------------------------------------------
# ScatterElementsUpdate
# ---------------------------------------------------------------------------------------------

REDUCTIONS = ["none", "sum", "prod", "min", "max", "mean"]


def _scatter_model(data, indices, updates, axis, reduction=None, use_init_val=True, indices_given=False):
    """ScatterElementsUpdate (-3 when reduction is None), data and updates as Parameters; the indices a
    Parameter when `indices_given`, else a constant. Returns (model, inputs)."""
    x = o12.parameter(list(data.shape), data.dtype, name="x")
    u = o12.parameter(list(updates.shape), updates.dtype, name="u")
    i = o12.parameter(list(indices.shape), indices.dtype, name="i") if indices_given else o12.constant(indices)
    axis_node = o12.constant(np.int64(axis))
    if reduction is None:
        node = o3.scatter_elements_update(x, i, u, axis_node)
    else:
        node = o12.scatter_elements_update(x, i, u, axis_node, reduction, use_init_val)
    params, inputs = ([x, i, u], [data, indices, updates]) if indices_given else ([x, u], [data, updates])
    return ov.Model([o12.result(named(node, "y"))], params, "seu"), inputs


def _compare(expected, got, dtype, reduction) -> None:
    assert got[0].dtype == dtype
    if np.dtype(dtype).kind in "biu" or reduction in ("none", "min", "max"):
        assert_same(expected, got)
    else:
        assert got[0].shape == expected[0].shape
        atol = 1e-6 if dtype == np.float64 else 0
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-6, atol=atol)


@pytest.mark.parametrize("use_init_val", [True, False], ids=["init", "no-init"])
@pytest.mark.parametrize("dtype,reduction", [(t, r) for t in (np.float32, np.float64, np.int32, np.bool_)
                                             for r in REDUCTIONS if not (t == np.bool_ and r == "mean")])
def test_scatter_reductions(dtype, reduction, use_init_val, tmp_path, ov_run, ov_core):
    """Every reduction both ways of use_init_val: axis -2, negative indices, more indices along the axis
    than data has (so positions repeat), positions nothing writes to. (OpenVINO refuses mean of boolean
    data: test_bad_layers.)"""
    data = _values((3, 4, 5), dtype, 5)
    indices = _indices((3, 6, 4), 4, np.int64, 6)
    indices[:, :, 0] = np.where(indices[:, :, 0] < 0, -3, 1)  # column 0 writes only row 1
    scale = (3 if np.dtype(dtype).kind == "i" else 1.5) if reduction == "prod" else 10  # products stay small
    updates = _values(indices.shape, dtype, 7, scale)
    model, inputs = _scatter_model(data, indices, updates, -2, reduction, use_init_val)
    expected, got = run_both(model, inputs, tmp_path, ov_run)
    if reduction == "mean" and dtype == np.int32:  # rounded down by the spec and reference, not the plugin
        expected = ov_reference(ov_core, lambda d, i, u, a: o12.scatter_elements_update(
            d, i, u, a, "mean", use_init_val), [data, indices, updates, np.int64(-2)])
    _compare(expected, got, dtype, reduction)


@pytest.mark.parametrize("use_init_val", [True, False], ids=["init", "no-init"])
@pytest.mark.parametrize("reduction", ["min", "max", "sum"])
def test_scatter_nan_and_signed_zero(reduction, use_init_val, tmp_path, ov_run):
    """NaN and -0.0 through min/max as the CPU plugin reduces them: a NaN update is skipped, a NaN held
    stays, and of +0 and -0 the first stays (signs compared too)."""
    data = np.array([np.nan, 1, 2, np.nan, 0, -0.0, 5, 0], np.float32)
    indices = np.array([0, 1, 1, 2, 2, 3, 4, 5, 4, 7, 7, 7], np.int32)
    updates = np.array([1, np.nan, 3, 5, np.nan, np.nan, -0.0, 0.0, 0.0, -0.0, 0.0, np.nan], np.float32)
    model, inputs = _scatter_model(data, indices, updates, 0, reduction, use_init_val)
    expected, got = run_both(model, inputs, tmp_path, ov_run)
    np.testing.assert_array_equal(got[0], expected[0])  # NaNs in the same places
    np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(expected[0]))


SCATTER_RANKS = [  # data shape, indices shape, axis
    ((6,), (4,), 0),
    ((6,), (9,), -1),
    ((3, 4), (2, 4), 0),
    ((3, 4), (3, 7), 1),
    ((2, 3, 4), (2, 5, 4), -2),
    ((2, 3, 4, 5), (1, 3, 2, 5), 2),
    ((2, 3, 4, 5), (2, 2, 4, 3), -1),
    ((2, 3, 4, 3, 2), (2, 3, 4, 3, 4), 4),
    ((2, 3, 4, 3, 2), (1, 2, 8, 3, 2), -3),
]


@pytest.mark.parametrize("version", [3, 12])
@pytest.mark.parametrize("data_shape,indices_shape,axis", SCATTER_RANKS)
def test_scatter_ranks_and_repeats(data_shape, indices_shape, axis, version, tmp_path, ov_run):
    """Ranks 1-5, negative axes and indices; repeated positions without a reduction: the last along
    the axis wins (the specs leave it undefined; the CPU plugin writes them in that order). Indices
    given at run time, i32 for -3, i64 for -12."""
    index_type = np.int32 if version == 3 else np.int64
    data = _values(data_shape, np.float32, 8)
    indices = _indices(indices_shape, data_shape[axis], index_type, 9)
    updates = _values(indices_shape, np.float32, 10)
    model, inputs = _scatter_model(data, indices, updates, axis, None if version == 3 else "none",
                                   indices_given=True)
    expected, got = run_both(model, inputs, tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("index,indices_shape,axis", [(1, (2, 1, 4, 5), 1), (-1, (2, 3, 4, 1), -1),
                                                      (0, (1, 3, 2, 5), 0)], ids=["x[:,1]", "x[...,-1]", "corner"])
def test_scatter_slice_assignment(index, indices_shape, axis, tmp_path, ov_run):
    """Constant indices naming one position along the axis (`x[:, 1] = u`, as torch's dynamo exporter
    writes slice assignment) run as one assignment to a strided view (the prepared path): the CPU
    plugin's values, bit for bit."""
    data = _values((2, 3, 4, 5), np.float32, 14)
    indices = np.full(indices_shape, index, np.int64)
    updates = _values(indices_shape, np.float32, 15)
    model, inputs = _scatter_model(data, indices, updates, axis, "none")
    expected, got = run_both(model, inputs, tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("reduction", ["none", "sum"])
@pytest.mark.parametrize("shape,extent", [((40,), 1000), ((3, 7), 40), ((5, 200), 3)],
                         ids=["1-d", "short-lines", "long-lines"])
def test_scatter_many_repeats(shape, extent, reduction, tmp_path, ov_run):
    """Few positions, many updates each, along the last axis: each line's updates land in its order
    (the run sorts many short lines, and steps along a short axis over long lines)."""
    data = _values(shape, np.float32, 11)
    indices = _indices(shape[:-1] + (extent,), shape[-1], np.int64, 12)
    updates = _values(indices.shape, np.float32, 13)
    model, inputs = _scatter_model(data, indices, updates, -1, reduction)
    expected, got = run_both(model, inputs, tmp_path, ov_run)
    _compare(expected, got, np.float32, reduction)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_scatter_mean_rounding(dtype, tmp_path, ov_run, ov_core):
    """Integer means round down, as the -12 spec and OpenVINO's reference implementation say (-7 / 2 is
    -4; its CPU plugin gives -3); float means as the plugin. Integer sums wrap before the division."""
    data = np.array([0, 0, 0, 0, 5, -5, 7, -7, 2**31 - 1]).astype(dtype)
    indices = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8], np.int64)
    updates = np.array([1, 2, -1, -2, 3, 4, -3, -4, 2, -2, 0, 0, 1], dtype)
    for use_init_val in (True, False):
        model, inputs = _scatter_model(data, indices, updates, 0, "mean", use_init_val)
        expected, got = run_both(model, inputs, tmp_path, ov_run)
        if dtype == np.int32:
            expected = ov_reference(ov_core, lambda d, i, u, a: o12.scatter_elements_update(
                d, i, u, a, "mean", use_init_val), [data, indices, updates, np.int64(0)])
        _compare(expected, got, dtype, "mean")
        if dtype == np.int32 and use_init_val:
            assert got[0].tolist() == [1, -1, 2, -3, 3, -4, 3, -4, -2**30]  # 2**31 - 1 + 1 wraps, / 2
        elif dtype == np.int32:
            assert got[0][:4].tolist() == [1, -2, 3, -4]  # 1.5, -1.5, 3.5, -3.5


def test_scatter_dynamic_dims(tmp_path, ov_run, ov_core):
    """Dynamic data, indices and updates dims, and an axis given at run time: inference gives OpenVINO's
    dims, and every run agrees with OpenVINO."""
    x = o12.parameter(ov.PartialShape([-1, 4, -1]), np.float32, name="x")
    i = o12.parameter(ov.PartialShape([-1, -1, -1]), np.int32, name="i")
    u = o12.parameter(ov.PartialShape([2, -1, -1]), np.float32, name="u")
    a = o12.parameter([], np.int64, name="a")
    y = named(o12.scatter_elements_update(x, i, u, a, "sum", False), "y")
    z = named(o3.scatter_elements_update(x, i, u, o12.constant(np.int32(-2))), "z")
    path = save_ov(ov.Model([o12.result(y), o12.result(z)], [x, i, u, a], "dyn"), tmp_path)
    _assert_shapes_as_openvino(path, ov_core)
    compiled = irgrid.compile_model(path)
    for seed, (n, shape, axis) in enumerate([(3, (2, 6, 3), 1), (5, (2, 4, 3), -1)]):
        data = _values((2, 4, n), np.float32, seed)
        indices = _indices(shape, 4, np.int32, seed + 1)  # in range for y's axis and z's (-2, of size 4)
        updates = _values(shape, np.float32, seed + 2)
        feeds = [data, indices, updates, np.array(axis, np.int64)]
        expected = ov_run(str(path), feeds)
        got = list(compiled(dict(zip("xiua", feeds))).values())
        _compare(expected[:1], got[:1], np.float32, "sum")
        assert_same(expected[1:], got[1:])


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

def _bad_model(tmp_path, type_, version, attrs, values):
    """One layer named "bad" of (type, version) on `values`: a Const for each array, a Parameter for each
    (name, shape, type); its output declared (not inferred), as in an IR OpenVINO would not write."""
    b = IRBuilder("bad")
    ins = [b.const(v) if isinstance(v, np.ndarray) else b.parameter(*v) for v in values]
    (y,) = b.layer(type_, version, ins, attrs, name="bad", outputs=[((2,), ins[0].element_type)])
    b.result(y)
    return b.save(tmp_path / "bad.xml")


F = ((2, 3, 4), "f32")
BAD = [  # type, version, attrs, inputs (Parameter (shape, type) or Const array), port at fault, message
    ("GatherND", "opset8", {}, [((3, 4), "f32"), ((2, 3), "i64")], 1, "exceed the rank of data"),
    ("GatherND", "opset5", {"batch_dims": 1}, [F, ((3, 1), "i32")], 1, "batch dim 0 differs"),
    ("GatherND", "opset8", {"batch_dims": 2}, [((2, 3), "f32"), ((2, 3, 1), "i32")], 0, "below the rank of data"),
    ("GatherND", "opset8", {"batch_dims": 1}, [F, ((2,), "i32")], 1, "below the rank of indices"),
    ("GatherND", "opset8", {}, [F, ((), "i32")], 1, "rank 1 or more"),
    ("GatherND", "opset8", {}, [F, ((2, 1), "f32")], 1, "integer"),
    ("ScatterElementsUpdate", "opset12", {}, [F, ((2, 3), "i32"), ((2, 3), "f32"), np.int64(0)], 1,
     "rank of data"),
    ("ScatterElementsUpdate", "opset12", {}, [F, ((2, 3, 4), "i32"), ((2, 3, 3), "f32"), np.int64(0)], 2,
     "dim 2 of updates differs"),
    ("ScatterElementsUpdate", "opset3", {}, [F, ((2, 3, 4), "i32"), ((2, 3, 4), "f32"), np.int64(3)], 3,
     "out of range for rank 3"),
    ("ScatterElementsUpdate", "opset12", {}, [F, ((2, 3, 4), "i32"), ((2, 3, 4), "f16"), np.int64(0)], 2,
     "updates are f16"),
    ("ScatterElementsUpdate", "opset12", {"reduction": "mean"},
     [((2, 3), "boolean"), ((2, 3), "i32"), ((2, 3), "boolean"), np.int64(0)], 0, "mean is not defined"),
    ("ScatterElementsUpdate", "opset12", {}, [F, ((2, 3, 4), "i32"), ((2, 3, 4), "f32"), np.zeros(2, np.int64)],
     3, "scalar"),
]


@pytest.mark.parametrize("type_,version,attrs,inputs,port,message", BAD,
                         ids=[f"{case[0]}-{case[1]}-{case[-1]}" for case in BAD])
def test_bad_layers(type_, version, attrs, inputs, port, message, tmp_path):
    """Ranks, shapes, types and attributes OpenVINO's validation refuses: check_model reports the layer
    and the port at fault, and compile_model refuses the model naming them."""
    values = [v if isinstance(v, np.ndarray) else np.asarray(v) if isinstance(v, np.integer) else (f"p{k}", *v)
              for k, v in enumerate(inputs)]
    path = _bad_model(tmp_path, type_, version, attrs, values)
    (problem,) = [p for p in irgrid.check_model(path) if p.layer.name == "bad" and message in p.message]
    port_id = problem.layer.inputs[port].id
    assert problem.port == port_id, str(problem)
    with pytest.raises(ShapeError, match=rf'{type_} layer "bad" \(id \d+\), port {port_id}: .*{message}'):
        irgrid.compile_model(path)


@pytest.mark.parametrize("old,new", [('batch_dims="1"', 'batch_dims="-1"'), ('reduction="sum"', 'reduction="sub"')],
                         ids=["batch_dims", "reduction"])
def test_bad_attributes(old, new, tmp_path):
    """An attribute outside its values (edited into an IR OpenVINO wrote): check_model reports the layer,
    and compile_model refuses the model naming it."""
    x = o12.parameter([2, 3, 4], np.float32, name="x")
    g = o8.gather_nd(x, o12.constant(np.zeros((2, 1), np.int32)), 1, name="gnd")
    ones = o12.constant(np.ones((1, 3, 4), np.float32))
    s = o12.scatter_elements_update(x, o12.constant(np.zeros((1, 3, 4), np.int64)), ones, o12.constant(np.int64(0)),
                                    "sum", name="seu")
    path = save_ov(ov.Model([o12.result(named(g, "g")), o12.result(named(s, "s"))], [x], "attrs"), tmp_path)
    assert path.read_text().count(old) == 1
    path.write_text(path.read_text().replace(old, new))
    (problem,) = irgrid.check_model(path)
    name = "gnd" if "batch_dims" in old else "seu"
    assert problem.layer.name == name and old.split("=")[0] in problem.message
    with pytest.raises(irgrid.LayerAttributeError, match=rf'layer "{name}" \(id \d+\)'):
        irgrid.compile_model(path)


def test_scatter_indices_past_data_off_the_axis(tmp_path, ov_run):
    """Indices longer than data along an axis other than `axis`: OpenVINO accepts the model and its CPU
    plugin writes to the wrong positions; irgrid refuses it, naming the layer."""
    data = np.zeros((3, 4), np.float32)
    indices = np.array([[0, 1, 2, 0, 1]] * 3)
    updates = np.ones((3, 5), np.float32)
    model, inputs = _scatter_model(data, indices, updates, 0)
    path = save_ov(model, tmp_path)
    (wrong,) = ov_run(str(path), inputs)
    assert wrong[2, 0] == 1  # column 0 writes only row 0, but index 1 at column 4 lands on (2, 0)
    (problem,) = irgrid.check_model(path)
    assert problem.layer.type == "ScatterElementsUpdate" and "dim 1 of indices" in problem.message
    assert problem.port == problem.layer.inputs[1].id
    with pytest.raises(ShapeError, match=r'ScatterElementsUpdate layer ".*" \(id \d+\), port \d+: dim 1 of indices'):
        irgrid.compile_model(path)


def test_out_of_range_indices_at_run_time(tmp_path, ov_run):
    """An index outside [-s, s-1] given at run time is an InputError naming the layer and its indices
    port. OpenVINO's CPU plugin raises for ScatterElementsUpdate indices of s and above; below -s it
    writes outside the tensor, and GatherND reads outside it, so those are not run there."""
    x = o12.parameter([2, 3, 4], np.float32, name="x")
    i = o12.parameter([2, 2], np.int32, name="i")
    g = o8.gather_nd(x, i, 1, name="gnd")
    j = o12.parameter([2, 3, 4], np.int64, name="j")
    s = o12.scatter_elements_update(x, j, x, o12.constant(np.int64(1)), "sum", True, name="seu")
    path = save_ov(ov.Model([o12.result(named(g, "g")), o12.result(named(s, "s"))], [x, i, j], "oob"), tmp_path)
    compiled = irgrid.compile_model(path)
    data = _values((2, 3, 4), np.float32, 14)
    good_i = np.array([[2, -4], [0, 3]], np.int32)
    good_j = _indices((2, 3, 4), 3, np.int64, 15)
    got = compiled({"x": data, "i": good_i, "j": good_j})
    assert_same(ov_run(str(path), [data, good_i, good_j]), list(got.values()))
    layers = irgrid.read_model(path).layers.values()
    ids = {layer.name: (layer.id, layer.inputs[1].id) for layer in layers if layer.name in ("gnd", "seu")}
    for bad_i, at in (([[3, 0], [0, 0]], "index 3 at indices[0, 0] is out of range for dim 1"),
                      ([[0, 0], [0, -5]], "index -5 at indices[1, 1] is out of range for dim 2")):
        with pytest.raises(InputError, match=rf'GatherND layer "gnd" \(id {ids["gnd"][0]}\), port {ids["gnd"][1]}: '
                                             + re.escape(at)):
            compiled({"x": data, "i": np.array(bad_i, np.int32), "j": good_j})
    for value in (3, -4):
        bad_j = good_j.copy()
        bad_j[1, 2, 3] = value
        with pytest.raises(InputError, match=rf'ScatterElementsUpdate layer "seu" \(id {ids["seu"][0]}\), port '
                                             rf'{ids["seu"][1]}: index {value} at indices\[1, 2, 3\] is out of range '
                                             rf'for axis 1 of size 3'):
            compiled({"x": data, "i": good_i, "j": bad_j})
        if value == 3:
            with pytest.raises(RuntimeError, match="non-existing output tensor element"):
                ov_run(str(path), [data, good_i, bad_j])


def test_constant_out_of_range_index_is_reported_by_check(tmp_path):
    """With every input constant the layer runs while checking: check_model reports the bad index at the
    layer's indices port, and compile_model refuses the model."""
    b = IRBuilder("folded")
    data = b.const(np.arange(12, dtype=np.float32).reshape(3, 4))
    (y,) = b.layer("GatherND", "opset8", [data, b.const(np.array([[1, 4]], np.int64))], {}, name="gnd")
    b.result(y)
    path = b.save(tmp_path / "m.xml")
    (problem,) = irgrid.check_model(path)
    assert problem.layer.name == "gnd" and problem.port == problem.layer.inputs[1].id
    assert "index 4 at indices[0, 1] is out of range for dim 1" in problem.message
    with pytest.raises(irgrid.IRGridError, match=r'GatherND layer "gnd" \(id \d+\), port \d+: index 4'):
        irgrid.compile_model(path)


def test_unknown_axis_defers_the_check_to_run_time():
    """With the axis unknown, inference cannot tell which dim of indices may exceed data's: it accepts,
    and the run checks once the axis is known."""
    spec = find("ScatterElementsUpdate", "opset12")
    attrs = spec.parse_attrs({})
    infos = [TensorInfo((3, 4), "f32"), TensorInfo((3, 5), "i32"), TensorInfo((3, 5), "f32"), TensorInfo((), "i64")]
    (out,) = spec.infer(attrs, infos)
    assert out.shape == (3, 4) and out.element_type == "f32"
    from irgrid.registry import RunContext

    with pytest.raises(ShapeError, match="dim 1 of indices") as info:
        spec.run(attrs, [np.zeros((3, 4), np.float32), np.zeros((3, 5), np.int32), np.zeros((3, 5), np.float32),
                         np.int64(0)], RunContext(1))
    assert info.value.input == 1


@pytest.mark.parametrize("reduction, onnx_reduction", [("none", "none"), ("sum", "add"), ("prod", "mul"),
                                                      ("min", "min"), ("max", "max")])
def test_scatter_f64_against_onnx_reference(reduction, onnx_reduction, tmp_path):
    """f64 stays f64 (OpenVINO computes it in f32): onnx.reference's ScatterElements, which applies
    updates in order as OpenVINO does, to 1e-12 relative; axis 1, negative indices, repeats."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    data = rng(3).normal(size=(3, 4, 2)) * 10
    indices = np.array([[[1, 0], [-1, 3], [1, 1]], [[0, 0], [2, -4], [0, 2]], [[3, 3], [3, 3], [-1, 1]]])
    updates = rng(4).normal(size=indices.shape) * 10
    node = helper.make_node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=1,
                            reduction=onnx_reduction)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, None) for n, t in
                                            (("data", TensorProto.DOUBLE), ("indices", TensorProto.INT64),
                                             ("updates", TensorProto.DOUBLE))],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    positive = np.where(indices < 0, indices + 4, indices)  # onnx.reference indexes with them as given
    (expected,) = ReferenceEvaluator(onnx_model).run(None, {"data": data, "indices": positive, "updates": updates})
    model, inputs = _scatter_model(data, indices, updates, 1, reduction)
    path = save_ov(model, tmp_path)
    got = irgrid.compile_model(path)(dict(zip(["x", "u"], inputs)))["y"]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
