"""Write the fuzz targets' seeds under tests/fuzz/seeds/ (committed; rerun after adding an operator):

- layers/<Type>-<version>.xml/.bin: one minimal IR per (type, version) irgrid's registry supports, found by
  a seeded search over small input shapes, element types, constant inputs and attribute values: the first
  combination the operator's shape inference and run accept, and irgrid's runtime compiles and runs;
- saved/*.xml/.bin: small models written by `ov.save_model` (OpenVINO's own IR writer), and ONNX
  models converted by `irgrid convert` (onnx_*.xml);
- arrays/*.npy, *.npz: input files as numpy writes them (dtypes, ranks, orders, compression).

The bundled samples (samples/*/model.xml) are seeds too, read where they are.

    python tests/fuzz/make_seeds.py
"""
from __future__ import annotations

import random
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import ROOT, SEEDS  # noqa: E402

import irgrid  # noqa: E402
from irgrid.builder import IRBuilder  # noqa: E402
from irgrid.errors import IRGridError  # noqa: E402
from irgrid.ir import element_types  # noqa: E402
from irgrid.registry import RunContext, TensorInfo, all_specs  # noqa: E402

SOURCES = {"Parameter", "Const", "Constant", "Result"}
TYPES = ["f32", "f32", "f32", "i64", "i32", "boolean", "f16", "u8"]


def _attr_text(attr, rng: random.Random) -> str:
    if attr.choices:
        return rng.choice(list(attr.choices))
    return {"bool": lambda: rng.choice(["true", "false"]), "int": lambda: str(rng.choice([0, 1, 2, 1, -1])),
            "float": lambda: str(rng.choice([0.5, 1.0, 2.0, 0.0])),
            "ints": lambda: ",".join(str(rng.choice([1, 1, 2, 0])) for _ in range(rng.choice([1, 2, 2, 3]))),
            "floats": lambda: ",".join(str(rng.choice([1.0, 2.0, 0.5])) for _ in range(rng.choice([1, 2]))),
            "element_type": lambda: rng.choice(["f32", "i64", "i32", "f16"]),
            "str": lambda: "", "shape": lambda: "?"}[attr.kind]()


def _array(element_type: str, shape: tuple[int, ...], rng: np.random.Generator, index: int) -> np.ndarray:
    dtype = element_types.numpy_dtype(element_type)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        high = 2 if index else 5
        return rng.integers(0, high, shape).astype(dtype)
    return rng.uniform(-1.5, 1.5, shape).astype(dtype)


def _candidate(spec, version: str, rng: random.Random, nprng: np.random.Generator, attempt: int):
    """One seeded guess: (attrs text, input arrays) the operator accepts, or None."""
    attrs_text = {}
    for attr in spec.attrs:
        if attr.required or (attempt > 20 and rng.random() < 0.5):
            attrs_text[attr.name] = _attr_text(attr, rng)
    try:
        attrs = spec.parse_attrs(attrs_text)
    except IRGridError:
        return None
    low, high = spec.inputs
    count = rng.randint(low, min(high, low + 2))
    rank = rng.choice([1, 2, 3, 4, 4, 5])
    arrays = []
    for index in range(count):
        if index == 0:
            shape = tuple(rng.choice([1, 2, 3, 4]) for _ in range(rank))
            element_type = "f32" if attempt < 30 or rng.random() < 0.6 else rng.choice(TYPES)
        else:
            same = rng.random() < 0.5
            shape = arrays[0].shape if same else tuple(rng.choice([1, 2, 3, 4]) for _ in range(rng.choice([0, 1, 1, 2, rank])))
            element_type = rng.choice(TYPES if same else ["i64", "i32", "i64", "f32"])
        arrays.append(_array(element_type, shape, nprng, index))
    infos = [TensorInfo(a.shape, element_types.from_dtype(a.dtype), a if i else None) for i, a in enumerate(arrays)]
    try:
        outs = spec.infer(attrs, infos)
        if any(o.shape is None or None in o.shape or 0 in o.shape for o in outs):
            return None
        results = spec.run(attrs, arrays, RunContext(1))
        if any(np.asarray(r).size > 4096 for r in results):
            return None
    except (IRGridError, ValueError, TypeError, IndexError):
        return None
    return attrs_text, arrays


def _build(spec, version: str, attrs_text, arrays, path: Path) -> bool:
    b = IRBuilder(f"{spec.type}-{version}")
    inputs = [b.parameter("x", arrays[0].shape, element_types.from_dtype(arrays[0].dtype))]
    inputs += [b.const(a, f"c{i}") for i, a in enumerate(arrays[1:], 1)]
    try:
        outs = b.layer(spec.type, version, inputs, attrs_text, name="op")
    except IRGridError:
        return False
    for index, out in enumerate(outs):
        b.result(out, f"out{index}")
    b.save(path)
    try:
        compiled = irgrid.compile_model(path, threads=1)
        compiled({"x": arrays[0]})
    except IRGridError:
        return False
    return True


def _f32(*shape):
    return np.linspace(-1.2, 1.3, int(np.prod(shape)), dtype=np.float32).reshape(shape)


def _by_hand(b: IRBuilder, key: str) -> dict[str, np.ndarray] | None:
    """The layers whose inputs must agree with each other beyond what the search finds: built on `b`,
    returning the feeds (None: not one of them)."""
    x = b.parameter("x", (1, 2, 4, 4))
    feeds = {"x": _f32(1, 2, 4, 4)}
    if key == "AffineGrid-irgrid1":
        theta = b.parameter("theta", (1, 2, 3))
        (out,) = b.layer("AffineGrid", "irgrid1", [theta, b.const(np.array([1, 2, 3, 4], np.int64))],
                         {"align_corners": True}, name="op")
        (out,) = b.layer("GridSample", "irgrid1", [x, out], {"mode": "linear"})
        feeds["theta"] = np.array([[[1.0, 0.1, 0.0], [-0.1, 0.9, 0.2]]], np.float32)
    elif key in ("DeformableConvolution-opset1", "DeformableConvolution-opset8"):
        offsets = b.parameter("offsets", (1, 8, 3, 3))
        conv = {"strides": [1, 1], "pads_begin": [0, 0], "pads_end": [0, 0], "dilations": [1, 1]}
        (out,) = b.layer("DeformableConvolution", key.split("-")[1], [x, offsets, b.const(_f32(3, 2, 2, 2))],
                         conv, name="op")
        feeds["offsets"] = _f32(1, 8, 3, 3) * 1.7
    elif key == "DeformConv-irgrid1":
        offsets = b.parameter("offsets", (1, 8, 3, 3))
        (out,) = b.layer("DeformConv", "irgrid1", [x, b.const(_f32(3, 2, 2, 2)), offsets, b.const(_f32(3))],
                         {"kernel_shape": [2, 2], "pads": [0, 0, 0, 0], "strides": [1, 1], "dilations": [1, 1]},
                         name="op")
        feeds["offsets"] = _f32(1, 8, 3, 3) * 1.7
    elif key == "GroupConvolution-opset1":
        (out,) = b.layer("GroupConvolution", "opset1", [x, b.const(_f32(2, 1, 1, 3, 3))],
                         {"strides": [1, 1], "pads_begin": [1, 1], "pads_end": [1, 1], "dilations": [1, 1]},
                         name="op")
    elif key in ("Range-opset4", "Range-opset1"):
        version = key.split("-")[1]
        bounds = [b.const(np.array(v, np.float32 if version == "opset4" else np.int64)) for v in (0, 4, 1)]
        attrs = {"output_type": "f32"} if version == "opset4" else {}
        (out,) = b.layer("Range", version, bounds, attrs, name="op")
        if version == "opset1":
            (out,) = b.layer("Convert", "opset1", [out], {"destination_type": "f32"})
        (out,) = b.layer("Add", "opset1", [x, out])
    elif key == "Slice-opset8":
        ints = [b.const(np.array(v, np.int64)) for v in ([3, 0], [0, 4], [-1, 2], [2, 3])]
        (out,) = b.layer("Slice", "opset8", [x, *ints], name="op")
    elif key == "ExperimentalDetectronPriorGridGenerator-opset6":
        image = b.parameter("image", (1, 3, 16, 16))
        (out,) = b.layer("ExperimentalDetectronPriorGridGenerator", "opset6",
                         [b.const(np.array([[-2, -2, 2, 2], [-4, -1, 4, 1]], np.float32)), x, image],
                         {"flatten": True, "h": 0, "w": 0, "stride_x": 4.0, "stride_y": 4.0}, name="op")
        feeds["image"] = np.zeros((1, 3, 16, 16), np.float32)
    else:
        return None
    b.result(out, "out0")
    return feeds


def layer_seeds(folder: Path) -> list[str]:
    missing = []
    for spec in all_specs():
        if spec.type in SOURCES:
            continue
        for version in spec.versions[:1]:
            key = f"{spec.type}-{version}"
            b = IRBuilder(key)
            feeds = _by_hand(b, key)
            if feeds is not None:
                path = b.save(folder / f"{key}.xml")
                irgrid.compile_model(path, threads=1)(feeds)
                continue
            rng, nprng = random.Random(f"{spec.type}-{version}"), np.random.default_rng(len(spec.type))
            path = folder / f"{spec.type}-{version}.xml"
            for attempt in range(3000):
                found = _candidate(spec, version, rng, nprng, attempt)
                if found and _build(spec, version, *found, path):
                    break
            else:
                path.unlink(missing_ok=True)
                path.with_suffix(".bin").unlink(missing_ok=True)
                missing.append(f"{spec.type}-{version}")
    return missing


def saved_seeds(folder: Path) -> None:
    import openvino as ov
    import openvino.opset13 as ops

    def save(model, name):
        ov.save_model(model, str(folder / f"{name}.xml"), compress_to_fp16=False)

    x = ops.parameter([1, 3, 4, 4], np.float32, name="x")
    w = ops.constant(np.linspace(-1, 1, 3 * 3 * 3 * 3, dtype=np.float32).reshape(3, 3, 3, 3))
    conv = ops.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
    save(ov.Model([ops.result(ops.relu(ops.add(conv, ops.constant(np.float32(0.1)))))], [x], "conv"), "conv_relu")

    data = ops.parameter([1, 2, 5, 6], np.float32, name="data")
    grid = ops.parameter([1, 3, 4, 2], np.float32, name="grid")
    gs = ops.grid_sample(data, grid, {"align_corners": False, "mode": "bilinear", "padding_mode": "border"})
    save(ov.Model([ops.result(gs)], [data, grid], "gs9"), "grid_sample9")

    a = ops.parameter([2, -1], np.float32, name="a")
    shape = ops.shape_of(a)
    reshaped = ops.reshape(ops.multiply(a, ops.constant(np.float32(2))), ops.concat(
        [ops.constant(np.array([-1], np.int64)), ops.gather(shape, ops.constant(np.array([0], np.int64)),
                                                          ops.constant(np.int64(0)))], 0), special_zero=False)
    save(ov.Model([ops.result(reshaped)], [a], "dyn"), "dynamic_reshape")

    i = ops.parameter([1, 1, 4, 4], np.float32, name="img")
    up = ops.interpolate(i, ops.constant(np.array([8, 8], np.int64)), "linear", "sizes",
                         axes=ops.constant(np.array([2, 3], np.int64)))
    pooled = ops.max_pool(up, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2])
    save(ov.Model([ops.result(pooled.output(0))], [i], "interp"), "interpolate_maxpool")

    m = ops.parameter([2, 3], np.float16, name="m")
    mm = ops.matmul(ops.convert(m, np.float32), ops.constant(np.eye(3, 2, dtype=np.float32)), False, False)
    save(ov.Model([ops.result(ops.softmax(mm, 1))], [m], "mm"), "matmul_softmax_f16")

    s = ops.parameter([4, 6], np.float32, name="s")
    parts = ops.split(s, ops.constant(np.int64(1)), 2)
    sel = ops.select(ops.greater(parts.output(0), parts.output(1)), parts.output(0), parts.output(1))
    save(ov.Model([ops.result(ops.reduce_sum(sel, ops.constant(np.array([0], np.int64)), True))], [s], "sel"),
         "split_select_reduce")

    # a chain of element-wise layers (irgrid/runtime/elementwise_chains.py): PWC-Net's mask, an input
    # broadcast along two dims, booleans combined
    v = ops.parameter([2, 3, 4, 5], np.float32, name="v")
    k = ops.parameter([1, 3, 1, 5], np.float32, name="k")
    low = ops.less(k, ops.constant(np.float32(0.9999)))
    zeroed = ops.select(low, ops.constant(np.float32(0)), k)
    both = ops.logical_and(ops.greater(zeroed, ops.constant(np.float32(0))), ops.less_equal(v, zeroed))
    chained = ops.multiply(v, ops.select(both, ops.constant(np.float32(1)), ops.divide(zeroed, v)))
    save(ov.Model([ops.result(chained)], [v, k], "chain"), "elementwise_chain")


def onnx_seeds(folder: Path, scratch: Path) -> None:
    """IRs converted from ONNX by `irgrid convert` (OpenVINO's frontend with irgrid's rules): a 2-D
    cubic and a 3-D linear GridSample (irgrid1), each after a Relu."""
    import onnx
    from onnx import TensorProto, helper

    from irgrid.openvino.convert import convert

    for rank, mode in ((2, "cubic"), (3, "linear")):
        spatial = (3, 4, 5)[:rank]
        x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, *spatial])
        g = helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, *(2, 3, 2)[:rank], rank])
        y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
        nodes = [helper.make_node("Relu", ["X"], ["R"]),
                 helper.make_node("GridSample", ["R", "grid"], ["Y"], mode=mode, padding_mode="reflection",
                                  align_corners=1)]
        model = helper.make_model(helper.make_graph(nodes, "gs", [x, g], [y]), opset_imports=[helper.make_opsetid("", 20)])
        source = scratch / f"onnx_gridsample_{rank}d.onnx"
        onnx.save(model, str(source))
        convert(source, folder / f"onnx_gridsample_{rank}d.xml")


def array_seeds(folder: Path) -> None:
    rng = np.random.default_rng(0)
    np.save(folder / "f32_4d.npy", rng.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32))
    np.save(folder / "f64_scalar.npy", np.float64(2.5))
    np.save(folder / "i64_fortran.npy", np.asfortranarray(np.arange(12, dtype=np.int64).reshape(3, 4)))
    np.save(folder / "f16_bigendian.npy", np.arange(6, dtype=">f2").reshape(2, 3))
    np.save(folder / "bool_empty.npy", np.zeros((0, 3), bool))
    np.save(folder / "u8.npy", np.arange(10, dtype=np.uint8))
    np.save(folder / "special.npy", np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], np.float32))
    np.savez(folder / "two.npz", x=np.ones((2, 2), np.float32), grid=np.zeros((1, 2, 2, 2), np.float32))
    np.savez_compressed(folder / "compressed.npz", data=np.arange(24, dtype=np.float32).reshape(2, 3, 4))


def main() -> None:
    for group in ("layers", "saved", "arrays"):
        shutil.rmtree(SEEDS / group, ignore_errors=True)
        (SEEDS / group).mkdir(parents=True)
    missing = layer_seeds(SEEDS / "layers")
    saved_seeds(SEEDS / "saved")
    with tempfile.TemporaryDirectory() as scratch:
        onnx_seeds(SEEDS / "saved", Path(scratch))
    array_seeds(SEEDS / "arrays")
    size = sum(p.stat().st_size for p in SEEDS.rglob("*") if p.is_file())
    count = len(list((SEEDS / "layers").glob("*.xml")))
    print(f"{count} layer seeds, {size / 1024:.0f} KiB in all; no seed found for: {', '.join(missing) or 'none'}")


if __name__ == "__main__":
    main()
