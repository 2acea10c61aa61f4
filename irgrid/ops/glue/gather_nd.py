"""GatherND-5 and GatherND-8: slices of data picked by tuples of indices, per batch.

indices[..., :] holds k = indices.shape[-1] coordinates into the data dims after the first batch_dims;
each tuple picks the slice data[batch, i_0, ..., i_(k-1), ...]. The first batch_dims dims of data and
indices must be equal (the specs say broadcastable, but OpenVINO's shape inference merges them and
refuses 1 against 2). The output is indices.shape[:-1] + data.shape[batch_dims + k:]; GatherND-5
flattens its batch dims into one when batch_dims > 1 ((2, 3, ...) -> (6, ...)), GatherND-8 keeps them.
An unknown indices.shape[-1] leaves the output rank unknown, as in OpenVINO.

Negative indices count from the end of their dim, in both versions (OpenVINO's CPU plugin and reference
do so for GatherND-5 too, whose spec still asks for [0, s-1]). An index outside [-s, s-1] is an
InputError: OpenVINO's CPU plugin does not check them, it adds index * stride to the slice's offset and
copies from there (a neighbouring slice while that stays inside data, memory past data otherwise, and a
crash for a large one), which no runtime can reproduce. The CPU plugin also carries f64 data as f32 and
i64 data as i32 (2**40 + 1 comes back as 1); irgrid moves data's own values.
"""
from __future__ import annotations

from math import prod

import numpy as np

from ...errors import ShapeError
from ...ir.attributes import Attr
from ...ir.dims import Shape, format_shape
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import array_infos, merge_dim
from .index_inputs import checked_indices, require_integer


def _output_shape(attrs: Attrs, inputs: list[TensorInfo], flatten: bool) -> Shape:
    """GatherND-8's output shape (GatherND-5's when `flatten`); None while indices.shape[-1] is unknown."""
    data, indices = inputs
    require_integer(indices, 1, "indices")
    batch_dims = attrs["batch_dims"]
    if not data.shape:
        raise ShapeError("data must have rank 1 or more, got a scalar", input=0)
    if not indices.shape:
        raise ShapeError("indices must have rank 1 or more, got a scalar", input=1)
    if batch_dims >= len(data.shape):
        raise ShapeError(f"batch_dims {batch_dims} must be below the rank of data {format_shape(data.shape)}",
                         input=0)
    if batch_dims >= len(indices.shape):
        raise ShapeError(f"batch_dims {batch_dims} must be below the rank of indices "
                         f"{format_shape(indices.shape)}", input=1)
    k = indices.shape[-1]
    if k is None:
        return None
    if batch_dims + k > len(data.shape):
        raise ShapeError(f"tuples of {k} indices after {batch_dims} batch dims exceed the rank of data "
                         f"{format_shape(data.shape)}", input=1)
    batch = [merge_dim(data.shape[i], indices.shape[i], f"batch dim {i} differs between data and indices", 1)
             for i in range(batch_dims)]
    rest = list(indices.shape[batch_dims:-1]) + list(data.shape[batch_dims + k:])
    if flatten and batch_dims > 1:
        batch = [None if None in batch else prod(batch)]
    return tuple(batch + rest)


def _infer(flatten: bool):
    def infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
        return [TensorInfo(_output_shape(attrs, inputs, flatten), inputs[0].element_type)]
    return infer


def _run(flatten: bool):
    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        data, indices = inputs
        out_shape = _output_shape(attrs, array_infos(inputs), flatten)
        b = attrs["batch_dims"]
        k = indices.shape[-1]
        idx = checked_indices(indices, np.array(data.shape[b:b + k], np.int64),
                              lambda at: f"dim {b + at[-1]} of data {format_shape(data.shape)}")
        batch = prod(data.shape[:b])
        tuples = prod(indices.shape[b:-1])
        slice_shape = data.shape[b + k:]
        strides = np.array([prod(data.shape[b + j + 1:b + k]) for j in range(k)], np.int64)
        flat = (idx.reshape(batch, tuples, k) * strides).sum(axis=-1)  # (batch, tuples) offsets into the k dims
        table = data.reshape((batch, prod(data.shape[b:b + k])) + slice_shape)
        taken = table[np.arange(batch)[:, None], flat]  # (batch, tuples) + slice_shape, a fresh array
        return [taken.reshape(out_shape)]
    return run


_BATCH_DIMS = (Attr("batch_dims", "int", 0, minimum=0),)
register(OpSpec(type="GatherND", versions=("opset5",), inputs=(2, 2), attrs=_BATCH_DIMS,
                infer=_infer(True), run=_run(True),
                summary="Slices picked by index tuples after batch_dims batch dims (flattened into one)."))
register(OpSpec(type="GatherND", versions=("opset8",), inputs=(2, 2), attrs=_BATCH_DIMS,
                infer=_infer(False), run=_run(False),
                summary="Slices picked by index tuples after batch_dims batch dims."))
