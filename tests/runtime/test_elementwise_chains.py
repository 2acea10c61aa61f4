"""Chains of element-wise layers run as one pass (irgrid/runtime/elementwise_chains.py, the kernel
kernels/core/elementwise.h).

Oracles: the unfused plan (`fuse=False`: each layer its own numpy call), bit for bit, at 1 and 2 threads;
OpenVINO's CPU plugin on the same IR within 1e-6 relative (it may fuse its own eltwise chains
differently; f32 only: it computes f64 in f32); torch on PWC-Net's warp from every export route (1e-5,
as the other GridSample blocks)."""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

import irgrid
from irgrid._kernels import elementwise
from oracles import compile_exported, named, rng, save_ov


def _const(value, dtype):
    return ops.constant(np.asarray(value, dtype))


def _mask_chain(dtype, shape):
    """PWC-Net's occlusion mask: out = x * where(m' > 0, 1, m'), m' = where(m < 0.9999, 0, m)."""
    x, m = ops.parameter(shape, dtype, name="x"), ops.parameter(shape, dtype, name="m")
    zeroed = ops.select(ops.less(m, _const([[[[0.9999]]]], dtype)), _const(0, dtype), m)
    ones = ops.select(ops.greater(zeroed, _const(0, dtype)), _const([[[[1]]]], dtype), zeroed)
    return ov.Model([ops.result(named(ops.multiply(x, ones), "y"))], [x, m], "mask")


def _arithmetic_chain(dtype, shape):
    """Every arithmetic operation, inputs broadcast along leading, inner and middle dims."""
    x = ops.parameter(shape, dtype, name="x")
    y = ops.parameter(shape[1:2] + [1] + shape[3:], dtype, name="y")  # (C, 1, W)
    z = ops.parameter(shape[-1:], dtype, name="z")  # (W,)
    total = ops.maximum(ops.add(x, y), x)
    ratio = ops.divide(ops.subtract(total, z), _const(3, dtype))
    return ov.Model([ops.result(named(ops.minimum(ops.multiply(ratio, ratio), y), "y"))], [x, y, z], "arith")


def _logic_chain(dtype, shape):
    """Comparisons and logical layers choosing between two tensors."""
    x, y = ops.parameter(shape, dtype, name="x"), ops.parameter(shape, dtype, name="y")
    inside = ops.logical_and(ops.greater_equal(x, _const(-0.5, dtype)), ops.less_equal(x, _const(0.5, dtype)))
    odd = ops.logical_xor(ops.equal(x, y), ops.not_equal(y, _const(0, dtype)))
    either = ops.logical_or(ops.logical_not(inside), odd)
    return ov.Model([ops.result(named(ops.select(either, x, ops.negative(y)), "y"))], [x, y], "logic")


CHAINS = {"mask": (_mask_chain, 5), "arithmetic": (_arithmetic_chain, 6), "logic": (_logic_chain, 9)}


def _inputs(model: ov.Model, dtype) -> list[np.ndarray]:
    arrays = []
    for k, parameter in enumerate(model.get_parameters()):
        a = rng(k).uniform(-1.5, 1.5, tuple(parameter.get_shape())).astype(dtype)
        flat = a.reshape(-1)
        flat[:6] = [np.nan, -0.0, np.inf, -np.inf, 0.9999, 1.0][: flat.size]  # IEEE's corners, the threshold
        arrays.append(a)
    return arrays


def _rows(compiled) -> list[dict]:
    return compiled.describe(structured=True)["layers"]


@pytest.mark.parametrize("shape", [[2, 3, 128, 256], [1, 3, 5, 7]], ids=["parallel", "small"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_a_chain_runs_as_one_step_with_the_layers_bits(tmp_path, ov_run, chain, dtype, shape):
    build, layers = CHAINS[chain]
    model = build(dtype, shape)
    path = save_ov(model, tmp_path)
    unfused = irgrid.compile_model(path, fuse=False)
    rows = _rows(irgrid.compile_model(path))
    runs = [row for row in rows if row.get("kernel") == "elementwise.Chain"]
    assert [row["status"] for row in runs].count("step") == 1, runs
    assert len(runs) == layers  # the chain's step and every layer fused into it
    inputs = _inputs(model, dtype)
    want = next(iter(unfused(inputs).values()))
    for threads in (1, 2):
        got = next(iter(irgrid.compile_model(path, threads=threads)(inputs).values()))
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), threads
    if dtype == np.float32:
        np.testing.assert_allclose(got, ov_run(str(path), inputs)[0], rtol=1e-6, atol=0)


def _branches(case: str) -> ov.Model:
    """Less -> Select -> Multiply, where the middle value also leaves: as a model output (`returned`), to
    a layer that is not element-wise (`transpose`); or a Select between booleans (`booleans`), which
    the kernel does not take; or in f16 (`f16`), which it does not compute in."""
    dtype = np.float16 if case == "f16" else np.float32
    x = ops.parameter([2, 3, 4, 5], dtype, name="x")
    cond = ops.less(x, _const(0.5, dtype))
    if case == "booleans":
        middle = ops.select(cond, cond, ops.greater(x, _const(0, dtype)))
        return ov.Model([ops.result(named(ops.logical_not(middle), "y"))], [x], "branches")
    middle = ops.select(cond, _const(0, dtype), x)
    results = [ops.result(named(ops.multiply(middle, x), "y"))]
    if case == "returned":
        results.append(ops.result(named(middle, "middle")))
    if case == "transpose":
        results.append(ops.result(named(ops.transpose(middle, _const([0, 1, 3, 2], np.int64)), "t")))
    return ov.Model(results, [x], "branches")


@pytest.mark.parametrize("case", ["returned", "transpose", "booleans", "f16"])
def test_what_does_not_join_a_chain_runs_as_written(tmp_path, ov_run, case):
    path = save_ov(_branches(case), tmp_path)
    compiled, unfused = irgrid.compile_model(path), irgrid.compile_model(path, fuse=False)
    rows = {row["type"]: row for row in _rows(compiled)}
    if case in ("returned", "transpose"):  # Less joins the Select it alone feeds; Multiply stays apart
        assert rows["Select"]["kernel"] == "elementwise.Chain" and rows["Less"]["status"] == "fused"
        assert rows["Multiply"]["status"] == "step" and rows["Multiply"]["kernel"] == "numpy"
    else:
        assert not any(row.get("kernel") == "elementwise.Chain" for row in rows.values())
    x = rng(1).uniform(-1, 1, (2, 3, 4, 5)).astype(np.float16 if case == "f16" else np.float32)
    # OpenVINO's CPU plugin refuses a Select between booleans (it carries them as u8): numpy is the oracle
    wants = ([np.logical_not(np.where(x < 0.5, x < 0.5, x > 0))] if case == "booleans"
             else ov_run(str(path), [x]))
    for got, plain, want in zip(compiled([x]).values(), unfused([x]).values(), wants):
        assert got.tobytes() == plain.tobytes()
        np.testing.assert_allclose(got, want, rtol=1e-3 if case == "f16" else 0, atol=0)


@pytest.mark.parametrize("route", ["cm", "ts", "dyn"])
def test_pwc_nets_mask_is_one_chain_on_every_export_route(route, glue_export):
    """The occlusion mask of PWC-Net's warp (benchmarks/glue_blocks.py) from each export route runs as one
    chain (on the dynamo route its two mask assignments join it as fills); the block's output is torch's
    within 1e-5."""
    torch = pytest.importorskip("torch")
    module, inputs, xml = glue_export("pwc", route)
    compiled = compile_exported(xml, inputs)
    rows = _rows(compiled)
    chain = [row for row in rows if row.get("kernel") == "elementwise.Chain"]
    assert [row["status"] for row in chain].count("step") == 1
    assert {"Less", "Greater", "Multiply"} <= {row["type"] for row in chain}
    assert not any(row["status"] == "step" and row["type"] in ("Less", "Greater", "Select", "ScatterNDUpdate")
                   for row in rows)
    (got,) = compiled([t.numpy() for t in inputs]).values()
    with torch.no_grad():
        np.testing.assert_allclose(got, module(*inputs).numpy(), rtol=0, atol=1e-5)


def test_the_kernel_reads_strided_and_broadcast_inputs_as_numpy(tmp_path):
    """The kernel on its own: inputs that are transposed views (read with a stride along the row),
    broadcast along the row, and rows shorter than a block; against numpy's per-layer calls, bitwise."""
    ops_ = elementwise.OPERATIONS
    x = rng(2).standard_normal((6, 40, 3)).astype(np.float64)
    y = rng(3).standard_normal((3, 40, 6)).astype(np.float64).transpose(2, 1, 0)  # strided along the row
    z = rng(4).standard_normal((40, 1)).astype(np.float64)  # broadcast along the row
    chain = elementwise.Chain(np.float64, [False, False, False],
                              [(ops_["Multiply"], 3, 0, 1, 0), (ops_["Less"], 4, 3, 2, 0),
                               (ops_["Select"], 0, 4, 2, 3)], 5)
    product = np.multiply(x, y)
    want = np.where(np.less(product, z), z, product)
    for threads in (1, 2):
        out = np.empty(x.shape, np.float64)
        chain.run([x, y, z], out, threads)
        assert out.tobytes() == want.tobytes()


@pytest.mark.parametrize("program", ["reads itself", "undefined register", "wrong type"])
def test_the_kernel_refuses_an_ill_formed_program(program):
    ops_ = elementwise.OPERATIONS
    steps = {"reads itself": [(ops_["Add"], 2, 0, 1, 0), (ops_["Add"], 2, 2, 1, 0), (ops_["Add"], 0, 2, 0, 0)],
             "undefined register": [(ops_["Add"], 2, 0, 3, 0), (ops_["Add"], 0, 2, 1, 0)],
             "wrong type": [(ops_["LogicalAnd"], 2, 0, 1, 0), (ops_["Add"], 0, 2, 1, 0)]}[program]
    with pytest.raises(ValueError, match="element-wise chain"):
        elementwise.Chain(np.float32, [False, False], steps, 4)


@pytest.mark.parametrize("elements", ["large", "small"])
def test_a_large_layer_alone_runs_on_the_kernel(tmp_path, ov_run, elements):
    """A single Add runs as a chain of one from ALONE_ELEMENTS outputs on (where the threads pay), else as
    numpy's call; the same bits either way."""
    from irgrid.runtime.elementwise_chains import ALONE_ELEMENTS

    shape = [1, 2, ALONE_ELEMENTS // 2 // 64 + 1, 64] if elements == "large" else [1, 2, 8, 64]
    x, y = ops.parameter(shape, np.float32, name="x"), ops.parameter(shape[-1:], np.float32, name="y")
    path = save_ov(ov.Model([ops.result(named(ops.add(x, y), "z"))], [x, y], "add"), tmp_path)
    (row,) = [row for row in _rows(irgrid.compile_model(path)) if row["type"] == "Add"]
    assert row["kernel"] == ("elementwise.Chain" if elements == "large" else "numpy")
    inputs = [rng(5).standard_normal(shape).astype(np.float32), rng(6).standard_normal(shape[-1:]).astype(np.float32)]
    got = irgrid.compile_model(path, threads=2)(inputs)["z"]
    assert got.tobytes() == np.add(*inputs).tobytes()
    assert got.tobytes() == ov_run(str(path), inputs)[0].tobytes()
