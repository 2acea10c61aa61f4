"""check_model (all problems, located), `shapes=` re-inference, compile_model + infer (inputs by name,
InputError, output order and names, independent results), the threads knob and show_config."""
from __future__ import annotations

import os

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from lxml import etree

import irgrid
from irgrid import InputError, LayerAttributeError, ShapeError
from irgrid.builder import IRBuilder
from oracles import prior_grid_network, save_ov


def _chain_model() -> ov.Model:
    """data[1,3,4,4] -> add(+w[1,3,1,1]) -> add2(+0.5) -> res, tensor names 'data' and 'out'."""
    data = ops.parameter([1, 3, 4, 4], np.float32, name="data")
    w = ops.constant(np.arange(3, dtype=np.float32).reshape(1, 3, 1, 1), name="w")
    add = ops.add(data, w, name="add")
    add2 = ops.add(add, ops.constant(np.float32(0.5), name="b"), name="add2")
    add2.output(0).get_tensor().set_names({"out"})
    return ov.Model([ops.result(add2, name="res")], [data], "chain")


def _edit(path, fn, name="edited"):
    root = etree.fromstring(path.read_bytes())
    fn(root)
    dst = path.with_name(f"{name}.xml")
    dst.write_bytes(etree.tostring(root))
    dst.with_suffix(".bin").write_bytes(path.with_suffix(".bin").read_bytes())
    return dst


def _out_port(root, layer_name):
    return root.find(f".//layer[@name='{layer_name}']/output/port")


# ---------------------------------------------------------------------------------------------
# check_model
# ---------------------------------------------------------------------------------------------


def test_check_reports_all_problems_with_locations(tmp_path):
    path = save_ov(_chain_model(), tmp_path)
    assert irgrid.check_model(path) == []

    def fn(root):
        _out_port(root, "add").findall("dim")[3].text = "5"   # declared [1,3,4,5], inferred [1,3,4,4]
        _out_port(root, "add2").findall("dim")[1].text = "7"  # declared [1,7,4,4]

    bad = _edit(path, fn)
    problems = irgrid.check_model(bad)
    assert len(problems) == 2
    by_name = {p.layer.name: p for p in problems}
    assert set(by_name) == {"add", "add2"}
    assert by_name["add"].port == 2 and by_name["add2"].port == 2
    text_add, text_add2 = str(by_name["add"]), str(by_name["add2"])
    assert 'Add layer "add" (id 2), port 2' in text_add and "[1,3,4,4]" in text_add and "[1,3,4,5]" in text_add
    assert 'Add layer "add2" (id 4), port 2' in text_add2 and "[1,7,4,4]" in text_add2
    # to_dict carries the same location, for --json.
    d = by_name["add"].to_dict()
    assert (d["layer_id"], d["layer_name"], d["layer_type"], d["port"]) == ("2", "add", "Add", 2)
    # compile_model refuses the same model, naming the first problem and counting the rest.
    with pytest.raises(ShapeError) as info:
        irgrid.compile_model(bad)
    assert "1 more problem" in str(info.value)


@pytest.mark.parametrize("case", ["grid_sample_empty_image", "deformable_no_filters", "deformable_empty_kernel"])
def test_check_refuses_the_zero_dims_compile_refuses(case, tmp_path):
    """OpenVINO's shape inference passes these; irgrid's refuses them, in check as in compile, in the
    operator's terms (the kernels used to find them first, in numpy's terms)."""
    import openvino.opset8 as o8
    import openvino.opset9 as o9

    if case == "grid_sample_empty_image":
        data, grid = ops.parameter([1, 2, 0, 5], np.float32), ops.parameter([1, 3, 4, 2], np.float32)
        node, params, what = o9.grid_sample(data, grid, {}), [data, grid], "data's spatial dims must be positive"
    else:
        filters = [0, 4, 3, 3] if case == "deformable_no_filters" else [3, 4, 0, 3]
        x, w = ops.parameter([1, 4, 6, 7], np.float32), ops.parameter(filters, np.float32)
        offsets = ops.parameter([1, 2 * int(np.prod(filters[2:])), -1, -1], np.float32)
        node = o8.deformable_convolution(x, offsets, w, [1, 1], [0, 0], [0, 0], [1, 1])
        params, what = [x, offsets, w], "filters' output channels and kernel dims must be positive"
    path = save_ov(ov.Model([ops.result(node)], params), tmp_path)
    (problem,) = irgrid.check_model(path)
    assert what in str(problem) and problem.layer.type in ("GridSample", "DeformableConvolution"), str(problem)
    with pytest.raises(ShapeError, match=what):
        irgrid.compile_model(path)


def test_check_reports_inference_error_and_mismatch_in_independent_branches(tmp_path):
    """One branch fails inference (prior grid h > feature map), another declares a wrong dim: both."""
    b, _, _, image = prior_grid_network("two", np.zeros((2, 4), np.float32), (1, 2, 4, 6), (1, 3, 40, 60))
    (shape,) = b.layer("ShapeOf", "opset3", [image], {"output_type": "i64"}, name="shape")
    b.result(shape, "shape_out")
    path = b.save(tmp_path / "two.xml")
    assert irgrid.check_model(path) == []

    def fn(root):
        root.find(".//layer[@name='pg']/data").set("h", "9")
        _out_port(root, "shape").find("dim").text = "3"

    problems = irgrid.check_model(_edit(path, fn))
    assert len(problems) == 2
    kinds = {p.layer.name: p.kind for p in problems}
    assert kinds == {"pg": "layerattribute", "shape": "shape"}
    assert any("h=9" in str(p) for p in problems)
    shape_problem = next(p for p in problems if p.layer.name == "shape")
    assert shape_problem.port == 1 and "[4]" in str(shape_problem)


def test_check_reports_wrong_declared_element_type(tmp_path):
    path = save_ov(_chain_model(), tmp_path)
    problems = irgrid.check_model(_edit(path, lambda r: _out_port(r, "add").set("precision", "FP16")))
    assert len(problems) == 1
    assert problems[0].layer.name == "add" and problems[0].port == 2
    assert "f32" in problems[0].message and "f16" in problems[0].message


def _dynamic_model() -> ov.Model:
    x = ops.parameter(ov.PartialShape([-1, 3, -1, -1]), np.float32, name="x")
    x.output(0).get_tensor().set_names({"x", "x_tensor"})
    y = ops.multiply(x, ops.constant(np.array([1.0, 2.0, 3.0], np.float32).reshape(3, 1, 1)))
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([ops.result(y)], [x], "dyn")


def test_shapes_reinference(tmp_path, ov_core):
    path = save_ov(_dynamic_model(), tmp_path)
    model = irgrid.read_model(path)
    assert irgrid.check_model(model) == []
    assert irgrid.check_model(model, shapes={"x": (2, 3, 5, 7)}) == []
    assert irgrid.check_model(model, shapes={"x_tensor": (1, 3, 1, 1)}) == []
    # 4 channels contradict the declared 3 and the [3,1,1] constant: a broadcasting problem.
    problems = irgrid.check_model(model, shapes={"x": (1, 4, 2, 2)})
    assert len(problems) == 1 and problems[0].layer.type == "Multiply"
    with pytest.raises(InputError):
        irgrid.check_model(model, shapes={"nope": (1, 3, 2, 2)})
    # compile with concrete shapes: the result matches OpenVINO reshaped the same way.
    compiled = irgrid.compile_model(model, shapes={"x": (2, 3, 5, 7)})
    data = np.random.default_rng(0).normal(size=(2, 3, 5, 7)).astype(np.float32)
    ov_model = ov_core.read_model(str(path))
    ov_model.reshape([2, 3, 5, 7])
    ov_compiled = ov_core.compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    expected = ov_compiled([data])[ov_compiled.outputs[0]]
    np.testing.assert_array_equal(compiled({"x": data})["y"], expected)
    # ... and the shape is now fixed: another spatial size is an InputError.
    with pytest.raises(InputError):
        compiled({"x": np.zeros((2, 3, 5, 8), np.float32)})


def test_shapes_reshape_a_static_model(tmp_path, ov_core):
    path = save_ov(_chain_model(), tmp_path)
    # The declared dims describe the old shape: not compared, so no problems.
    assert irgrid.check_model(path, shapes={"data": (2, 3, 8, 6)}) == []
    compiled = irgrid.compile_model(path, shapes={"data": (2, 3, 8, 6)})
    data = np.random.default_rng(1).normal(size=(2, 3, 8, 6)).astype(np.float32)
    ov_model = ov_core.read_model(str(path))
    ov_model.reshape([2, 3, 8, 6])
    ov_compiled = ov_core.compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    # OpenVINO folds (x + w) + 0.5 into x + (w + 0.5): 1 ulp apart at most (rtol 2.4e-7).
    np.testing.assert_allclose(compiled({"data": data})["out"], ov_compiled([data])[ov_compiled.outputs[0]],
                               rtol=2.4e-7, atol=0)
    np.testing.assert_array_equal(compiled({"data": data})["out"],
                                  data + np.arange(3, dtype=np.float32).reshape(1, 3, 1, 1) + np.float32(0.5))


def test_shapes_reinference_reaches_a_kernel_layer(tmp_path):
    b, _, _, _ = prior_grid_network("dyn_pg", np.array([[-4, -2, 4, 2]], np.float32), (1, 8, None, None),
                                    (1, 3, None, None), flatten=False)
    path = b.save(tmp_path / "dyn_pg.xml")
    assert irgrid.check_model(path, shapes={"feat": (1, 8, 3, 5), "image": (1, 3, 30, 50)}) == []
    compiled = irgrid.compile_model(path, shapes={"feat": (1, 8, 3, 5), "image": (1, 3, 30, 50)})
    out = compiled({"feat": np.zeros((1, 8, 3, 5), np.float32), "image": np.zeros((1, 3, 30, 50), np.float32)})
    grid_out = out["pg"]
    assert grid_out.shape == (3, 5, 1, 4)
    # Spec formula: step = 10 both ways; cell (h=2, w=4) centre (45, 25).
    np.testing.assert_array_equal(grid_out[2, 4, 0], [-4 + 45, -2 + 25, 4 + 45, 2 + 25])


# ---------------------------------------------------------------------------------------------
# compile_model + infer: inputs
# ---------------------------------------------------------------------------------------------


def _two_input_model() -> ov.Model:
    a = ops.parameter([2, 3], np.float32, name="a_param")
    a.output(0).get_tensor().set_names({"a_tensor", "a_alias"})
    b = ops.parameter([3], np.float32, name="b_param")
    b.output(0).get_tensor().set_names({"b_tensor"})
    y = ops.subtract(a, b)
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([ops.result(y)], [a, b], "two")


@pytest.fixture
def two_inputs(tmp_path, ov_run):
    path = save_ov(_two_input_model(), tmp_path)
    rng = np.random.default_rng(2)
    a = rng.normal(size=(2, 3)).astype(np.float32)
    b = rng.normal(size=(3,)).astype(np.float32)
    (expected,) = ov_run(str(path), [a, b])
    return irgrid.compile_model(path), a, b, expected


@pytest.mark.parametrize("a_name,b_name", [("a_param", "b_param"), ("a_tensor", "b_tensor"),
                                           ("a_alias", "b_param"), ("a_param", "b_tensor")])
def test_inputs_by_parameter_or_tensor_name(two_inputs, a_name, b_name):
    compiled, a, b, expected = two_inputs
    np.testing.assert_array_equal(compiled({a_name: a, b_name: b})["y"], expected)


def test_inputs_as_sequence_in_parameter_order(two_inputs):
    compiled, a, b, expected = two_inputs
    np.testing.assert_array_equal(compiled([a, b])["y"], expected)
    np.testing.assert_array_equal(compiled.infer((a, b))["y"], expected)


@pytest.mark.parametrize("case", ["dtype_f64", "dtype_i32", "big_endian", "rank_low", "rank_high", "static_dim",
                                  "missing", "unknown_name", "sequence_length", "same_input_twice", "ragged",
                                  "none", "generator"])
def test_bad_inputs_raise_input_error(two_inputs, case):
    compiled, a, b, _ = two_inputs
    feeds = {
        "dtype_f64": {"a_param": a.astype(np.float64), "b_param": b},
        "big_endian": {"a_param": a.astype(">f4"), "b_param": b},
        "ragged": {"a_param": [[1.0, 2.0], [3.0]], "b_param": b},
        "none": None,
        "generator": (x for x in (a, b)),
        "dtype_i32": {"a_param": a, "b_param": b.astype(np.int32)},
        "rank_low": {"a_param": a[0], "b_param": b},
        "rank_high": {"a_param": a[None], "b_param": b},
        "static_dim": {"a_param": np.zeros((2, 4), np.float32), "b_param": b},
        "missing": {"a_param": a},
        "unknown_name": {"a_param": a, "b_param": b, "c": b},
        "sequence_length": [a],
        "same_input_twice": {"a_param": a, "a_tensor": a, "b_param": b},
    }[case]
    with pytest.raises(InputError) as info:
        compiled(feeds)
    msg = str(info.value)
    culprit = {"dtype_f64": "a_param", "dtype_i32": "b_param", "rank_low": "a_param", "rank_high": "a_param",
               "static_dim": "a_param", "missing": "b_param", "unknown_name": "'c'",
               "sequence_length": "2 inputs", "same_input_twice": "a_", "big_endian": "a_param",
               "ragged": "a_param", "none": "NoneType", "generator": "generator"}[case]
    assert culprit in msg, msg


@pytest.mark.parametrize("shapes", [{"a_param": "2,4"}, {"a_param": None}, {"a_param": (float("nan"), 4)},
                                    {"a_param": (1.5, 4)}, [2, 4]])
def test_bad_shapes_argument_is_an_input_error(tmp_path, shapes):
    path = save_ov(_two_input_model(), tmp_path)
    for call in (lambda: irgrid.compile_model(path, shapes=shapes), lambda: irgrid.check_model(path, shapes=shapes)):
        with pytest.raises(InputError, match="shape"):
            call()


def test_same_input_given_twice_message_is_truthful(two_inputs):
    """Feeding one Parameter under two of its names is an error, but the message must not claim that
    a real input name does not exist."""
    compiled, a, b, _ = two_inputs
    with pytest.raises(InputError) as info:
        compiled({"a_param": a, "a_tensor": a, "b_param": b})
    assert "no input named 'a_tensor'" not in str(info.value), str(info.value)


# ---------------------------------------------------------------------------------------------
# Outputs: order and names
# ---------------------------------------------------------------------------------------------


def test_outputs_ordered_and_named_by_feeding_tensor(tmp_path, ov_core):
    x = ops.parameter([2, 3], np.float32, name="x")
    s = ops.add(x, ops.constant(np.float32(1.0)), name="s_node")
    s.output(0).get_tensor().set_names({"sum"})
    m = ops.multiply(x, ops.constant(np.float32(3.0)), name="m_node")
    m.output(0).get_tensor().set_names({"prod"})
    d = ops.subtract(x, ops.constant(np.float32(2.0)), name="d_node")
    d.output(0).get_tensor().set_names({"diff"})
    results = [ops.result(m, name="r_first"), ops.result(d, name="r_second"), ops.result(s, name="r_third")]
    path = save_ov(ov.Model(results, [x], "outs"), tmp_path)
    data = np.random.default_rng(3).normal(size=(2, 3)).astype(np.float32)
    ov_compiled = ov_core.compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    ov_out = ov_compiled([data])
    expected = [(o.get_any_name(), np.asarray(ov_out[o])) for o in ov_compiled.outputs]
    assert [name for name, _ in expected] == ["prod", "diff", "sum"]
    got = irgrid.compile_model(path)({"x": data})
    assert list(got) == ["prod", "diff", "sum"]
    for (name, value), (got_name, got_value) in zip(expected, got.items()):
        assert name == got_name
        np.testing.assert_array_equal(got_value, value)


def test_output_without_tensor_name_uses_result_name(tmp_path):
    b = IRBuilder("noname")
    x = b.parameter("x", (2,))
    (y,) = b.layer("Add", "opset1", [x, b.const(np.array([1, 2], np.float32))], {"auto_broadcast": "numpy"})
    b.result(y, "the_result")
    path = b.save(tmp_path / "noname.xml")
    root = etree.fromstring(path.read_bytes())
    for port in root.iter("port"):
        port.attrib.pop("names", None)
    path.write_bytes(etree.tostring(root))
    got = irgrid.compile_model(path)({"x": np.array([10, 20], np.float32)})
    assert list(got) == ["the_result"]
    np.testing.assert_array_equal(got["the_result"], [11, 22])


def test_two_results_of_one_tensor_are_both_returned(tmp_path, ov_core):
    """Two Results fed by the same tensor: OpenVINO has two outputs; irgrid must not drop one."""
    x = ops.parameter([3], np.float32, name="x")
    y = ops.multiply(x, ops.constant(np.float32(2.0)))
    y.output(0).get_tensor().set_names({"y"})
    z = ops.add(x, ops.constant(np.float32(1.0)))
    z.output(0).get_tensor().set_names({"z"})
    path = save_ov(ov.Model([ops.result(y, name="r1"), ops.result(z, name="r2"), ops.result(y, name="r3")],
                            [x], "dup"), tmp_path)
    data = np.array([1.0, 2.0, 3.0], np.float32)
    ov_compiled = ov_core.compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    assert len(ov_compiled.outputs) == 3
    compiled = irgrid.compile_model(path)
    got = compiled({"x": data})
    assert len(got) == 3, f"irgrid returned {list(got)} for 3 Results"


# ---------------------------------------------------------------------------------------------
# Independent results across calls
# ---------------------------------------------------------------------------------------------


def _prior_grid_path(tmp_path):
    b, _, feat, _ = prior_grid_network("pg", (2, 4), (1, 4, 3, 5), (1, 3, 30, 50), h=2)
    (shape,) = b.layer("ShapeOf", "opset3", [feat], {"output_type": "i32"}, name="fshape")
    b.result(shape, "shape_out")
    return b.save(tmp_path / "pg.xml")


def test_calls_return_independent_arrays_kernel(tmp_path, ov_run):
    path = _prior_grid_path(tmp_path)
    compiled = irgrid.compile_model(path)
    feat, image = np.zeros((1, 4, 3, 5), np.float32), np.zeros((1, 3, 30, 50), np.float32)
    p1 = np.array([[-1, -1, 1, 1], [-5, -2, 5, 2]], np.float32)
    p2 = p1 * 10
    first = compiled({"priors": p1, "feat": feat, "image": image})
    snapshot = {k: v.copy() for k, v in first.items()}
    second = compiled({"priors": p2, "feat": feat, "image": image})
    # The kernel output (a preallocated buffer) of call 1 is untouched by call 2.
    np.testing.assert_array_equal(first["pg"], snapshot["pg"])
    assert not np.may_share_memory(first["pg"], second["pg"])
    written = 2 * 5 * 2
    np.testing.assert_array_equal(first["pg"][:written], ov_run(str(path), [p1, feat, image])[0][:written])
    # Writing into a returned array does not change the next call.
    second["pg"][:] = -99
    third = compiled({"priors": p2, "feat": feat, "image": image})
    np.testing.assert_array_equal(third["pg"][:written], ov_run(str(path), [p2, feat, image])[0][:written])


def test_calls_return_independent_arrays_folded_constant(tmp_path):
    """ShapeOf of a static input folds to a constant at compile time: writing into the returned array
    must not change what later calls return."""
    path = _prior_grid_path(tmp_path)
    compiled = irgrid.compile_model(path)
    inputs = {"priors": np.ones((2, 4), np.float32), "feat": np.zeros((1, 4, 3, 5), np.float32),
              "image": np.zeros((1, 3, 30, 50), np.float32)}
    first = compiled(inputs)
    np.testing.assert_array_equal(first["fshape"], [1, 4, 3, 5])
    first["fshape"][:] = -99  # the caller owns what it got back
    second = compiled(inputs)
    np.testing.assert_array_equal(second["fshape"], [1, 4, 3, 5])
    assert not np.may_share_memory(first["fshape"], second["fshape"])


def test_calls_return_independent_arrays_reused_input_buffer(tmp_path):
    """The common loop: one input buffer refilled before each call. A result of call 1 must not
    change when the buffer is refilled for call 2 (outputs may not alias the caller's inputs)."""
    x = ops.parameter([2, 6], np.float32, name="x")
    y = ops.reshape(x, ops.constant(np.array([3, 4], np.int64)), False)
    y.output(0).get_tensor().set_names({"y"})
    t = ops.transpose(x, ops.constant(np.array([1, 0], np.int64)))
    t.output(0).get_tensor().set_names({"t"})
    path = save_ov(ov.Model([ops.result(y), ops.result(t)], [x], "views"), tmp_path)
    compiled = irgrid.compile_model(path)
    buffer = np.arange(12, dtype=np.float32).reshape(2, 6)
    first = compiled({"x": buffer})
    expected_first = {"y": np.arange(12, dtype=np.float32).reshape(3, 4),
                      "t": np.arange(12, dtype=np.float32).reshape(2, 6).T}
    buffer[:] = -1.0  # refill for the next call
    second = compiled({"x": buffer})
    np.testing.assert_array_equal(second["y"], np.full((3, 4), -1.0, np.float32))
    for name, value in expected_first.items():
        np.testing.assert_array_equal(first[name], value, err_msg=f"output {name!r} of call 1 changed")


# ---------------------------------------------------------------------------------------------
# Threads knob and show_config
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def restore_threads():
    yield
    irgrid.set_num_threads(None)


def test_set_num_threads(restore_threads, monkeypatch):
    monkeypatch.delenv("IRGRID_NUM_THREADS", raising=False)
    irgrid.set_num_threads(None)
    default = irgrid.get_num_threads()
    assert default == len(os.sched_getaffinity(0))
    irgrid.set_num_threads(3)
    assert irgrid.get_num_threads() == 3
    irgrid.set_num_threads(1)
    assert irgrid.get_num_threads() == 1
    irgrid.set_num_threads(None)
    assert irgrid.get_num_threads() == default
    for bad in (0, -2, 1.5, "2"):
        with pytest.raises(ValueError):
            irgrid.set_num_threads(bad)


def test_irgrid_num_threads_env(restore_threads, monkeypatch):
    irgrid.set_num_threads(None)
    monkeypatch.setenv("IRGRID_NUM_THREADS", "5")
    assert irgrid.get_num_threads() == 5
    # set_num_threads wins over the environment
    irgrid.set_num_threads(2)
    assert irgrid.get_num_threads() == 2
    irgrid.set_num_threads(None)
    assert irgrid.get_num_threads() == 5


def test_compile_threads_argument(tmp_path):
    path = _prior_grid_path(tmp_path)
    for bad in (0, -1, 2.0):
        with pytest.raises(ValueError):
            irgrid.compile_model(path, threads=bad)
    inputs = {"priors": np.ones((2, 4), np.float32), "feat": np.zeros((1, 4, 3, 5), np.float32),
              "image": np.zeros((1, 3, 30, 50), np.float32)}
    one = irgrid.compile_model(path, threads=1)
    assert one.threads == 1
    np.testing.assert_array_equal(one(inputs)["pg"], irgrid.compile_model(path, threads=2)(inputs)["pg"])


def test_show_config(restore_threads, capsys, monkeypatch):
    monkeypatch.delenv("IRGRID_NUM_THREADS", raising=False)
    irgrid.set_num_threads(3)
    irgrid.show_config()
    out = capsys.readouterr().out
    lines = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in out.splitlines() if ":" in line}
    assert lines["irgrid"] == irgrid.__version__
    assert lines["openmp"] in ("True", "False")
    assert lines["threads"] == "3"
    assert lines["available_cores"] == str(len(os.sched_getaffinity(0)))
    irgrid.set_num_threads(None)
    monkeypatch.setenv("IRGRID_NUM_THREADS", "4")
    irgrid.show_config()
    out = capsys.readouterr().out
    assert any(line.split(":")[0].strip() == "threads" and line.split(":")[1].strip() == "4"
               for line in out.splitlines())


def test_compile_errors_are_irgrid_errors(tmp_path):
    """h larger than the feature map, found at compile time: a LayerAttributeError (no crash)."""
    path = _prior_grid_path(tmp_path)
    text = path.read_text().replace('h="2"', 'h="4"')
    path.write_text(text)
    with pytest.raises(LayerAttributeError):
        irgrid.compile_model(path)


def test_dynamic_rank_model_with_shapes(tmp_path, ov_core):
    """A dynamic-rank Parameter (shape "..."): OpenVINO writes its ports with no <dim> at all, exactly as
    it writes a scalar. Giving `shapes` must not turn those dimless ports into "declared rank 0"
    problems. (OpenVINO's CPU plugin refuses dynamic-rank Parameters, so the oracle is numpy: x + 1.)"""
    x = ops.parameter(ov.PartialShape.dynamic(), np.float32, name="x")
    y = ops.add(x, ops.constant(np.float32(1.0)))
    y.output(0).get_tensor().set_names({"y"})
    path = save_ov(ov.Model([ops.result(y)], [x], "dynrank"), tmp_path)
    assert 'shape="..."' in path.read_text()
    assert irgrid.check_model(path) == []
    data = np.random.default_rng(4).normal(size=(2, 3)).astype(np.float32)
    expected = data + np.float32(1.0)
    # OpenVINO reads the same file as dynamic rank.
    assert ov_core.read_model(str(path)).input(0).get_partial_shape().rank.is_dynamic
    np.testing.assert_array_equal(irgrid.compile_model(path)({"x": data})["y"], expected)
    assert irgrid.check_model(path, shapes={"x": (2, 3)}) == []
    np.testing.assert_array_equal(irgrid.compile_model(path, shapes={"x": (2, 3)})({"x": data})["y"], expected)


def test_integer_division_by_zero_in_constants_is_a_shape_error(tmp_path):
    """Folding constants at check/compile time reports a failing glue layer, naming it."""
    b = IRBuilder()
    a = b.const(np.array([6, 7], np.int32))
    z = b.const(np.array([0, 1], np.int32))
    (q,) = b.layer("Divide", "opset1", [a, z], outputs=[((2,), "i32")], name="div")
    b.result(q)
    path = b.save(tmp_path / "m.xml")
    problems = irgrid.check_model(path)
    assert len(problems) == 1 and problems[0].layer.name == "div" and "division by zero" in problems[0].message
    with pytest.raises(irgrid.ShapeError, match=r'Divide layer "div"'):
        irgrid.compile_model(path)


def test_results_fed_by_one_tensor_are_separate_arrays(tmp_path):
    """Two Results on one tensor come back as two arrays (they were one object under two names, so
    writing into one changed the other), each OpenVINO's GridSample-9 output."""
    builder = IRBuilder("two_results")
    data, grid = builder.parameter("data", (1, 2, 4, 4)), builder.parameter("grid", (1, 3, 3, 2))
    (sampled,) = builder.layer("GridSample", "opset9", [data, grid],
                               {"mode": "bilinear", "padding_mode": "zeros", "align_corners": False})
    builder.result(sampled, "first")
    builder.result(sampled, "second")
    path = tmp_path / "model.xml"
    builder.save(path)
    rng = np.random.default_rng(0)
    feeds = {"data": rng.standard_normal((1, 2, 4, 4)).astype(np.float32),
             "grid": rng.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32)}
    expected = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(
        [feeds["data"], feeds["grid"]])[0]
    first, second = irgrid.compile_model(path)(feeds).values()
    assert first is not second and not np.shares_memory(first, second)
    np.testing.assert_allclose(first, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(first, second)
