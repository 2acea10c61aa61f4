"""ExperimentalDetectronPriorGridGenerator-6: prior boxes at every cell of a feature-map grid.

Spec: ExperimentalDetectronPriorGridGenerator-6 (OpenVINO opset6, native in OpenVINO); exact
arithmetic from OpenVINO's CPU plugin (docs/semantics.md). Where OpenVINO is undefined or unsafe,
irgrid is defined:
- h > feature-map height or w > feature-map width is refused (OpenVINO writes out of bounds);
- output rows past h * w * priors (when h or w is smaller than the feature map) are zero.
"""
from __future__ import annotations

import numpy as np

from ..errors import LayerAttributeError
from ..ir.attributes import Attr
from ..registry import Attrs, OpSpec, RunContext, TensorInfo, register
from .common import array_infos, compute_dtype, merge_dim, output_buffer, require_float, require_rank


def _grid_size(attrs: Attrs, featmap_h: int | None, featmap_w: int | None) -> tuple[int | None, int | None]:
    h, w = attrs["h"], attrs["w"]
    for name, value, extent, what in (("h", h, featmap_h, "height"), ("w", w, featmap_w, "width")):
        if value and extent is not None and value > extent:
            raise LayerAttributeError(
                f"{name}={value} exceeds the feature map {what} {extent} (OpenVINO would write out of "
                "bounds; irgrid refuses)", input=1)
    return (h or featmap_h), (w or featmap_w)


def infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    priors, featmap, image = inputs
    require_rank(priors, (2,), 0, "priors")
    require_rank(featmap, (4,), 1, "feature map")
    require_rank(image, (4,), 2, "image")
    for index, info in enumerate(inputs):
        require_float(info, index, ("priors", "feature map", "image")[index])
    merge_dim(priors.shape[1], 4, "priors must have 4 columns", 0)
    fh, fw = featmap.shape[2], featmap.shape[3]
    _grid_size(attrs, fh, fw)
    n = priors.shape[0]
    if attrs["flatten"]:
        rows = None if None in (fh, fw, n) else fh * fw * n
        shape = (rows, 4)
    else:
        shape = (fh, fw, n, 4)
    return [TensorInfo(shape, priors.element_type)]


def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    from .._kernels.prior_boxes import prior_grid

    priors, featmap, image = inputs
    (info,) = infer(attrs, array_infos(inputs))  # ranks, types, h and w against this feature map
    fh, fw = featmap.shape[2:]
    layer_h, layer_w = _grid_size(attrs, fh, fw)
    dtype = compute_dtype(priors)
    # Steps in the compute type, as OpenVINO computes them (float(image_W) / layer_w in f32).
    step_w = dtype.type(attrs["stride_x"]) or dtype.type(image.shape[3]) / dtype.type(layer_w or 1)
    step_h = dtype.type(attrs["stride_y"]) or dtype.type(image.shape[2]) / dtype.type(layer_h or 1)
    out = output_buffer(ctx.out if priors.dtype == dtype else (), 0, info.shape, dtype)
    flat = out.reshape(-1)
    written = layer_h * layer_w * priors.shape[0] * 4
    prior_grid(np.ascontiguousarray(priors, dtype), flat, layer_h, layer_w, step_w, step_h, ctx.threads)
    flat[written:] = 0
    return [out if out.dtype == priors.dtype else out.astype(priors.dtype)]


register(OpSpec(
    type="ExperimentalDetectronPriorGridGenerator", versions=("opset6", "experimental", "extension"),
    inputs=(3, 3), native=True, kernel=True,
    attrs=(Attr("flatten", "bool", True), Attr("h", "int", 0, minimum=0), Attr("w", "int", 0, minimum=0),
           Attr("stride_x", "float", 0.0, minimum=0), Attr("stride_y", "float", 0.0, minimum=0)),
    infer=infer, run=run, entry="prior_boxes.prior_grid",
    summary="Prior boxes at every feature-map cell (Detectron / Mask R-CNN)."))
