"""Glue-heavy blocks of real architectures (issue 41), each exported the ways users export them and
timed on irgrid's runtime (and without its fusions and rewrites: `fuse=False`), OpenVINO with irgrid's
extension, plain OpenVINO (no irgrid: its own frontends, where they convert the block; `-` where not),
what `auto` picks, and torch eager.

    python benchmarks/glue_blocks.py [--small] [--rounds 3] [--calls 7] [--threads 2] [--ways irgrid,auto,...]
                                     [block/route ...]

Blocks: `pwc` (PWC-Net's backward warp with its occlusion mask, 4x3x436x1024), `voxelmorph`
(VoxelMorph's SpatialTransformer, 1x1x80x96x112), `vecint` (VoxelMorph's VecInt, 7 squaring steps of a
3x80x96x112 field), `stn3d` (F.affine_grid + F.grid_sample on 8x1x32x64x64), `raft` (RAFT's
correlation lookup, radius 4, on one 46x62 level of 2,852 one-channel maps), `dcnv2` (a modulated
deformable convolution written in plain PyTorch: an offset Conv2d, 9 grid_samples and a matmul, 256
channels of 50x68), `msda` (Deformable-DETR's encoder attention, MSDeformAttn with its PyTorch core: 4
levels, 19,947 queries, 8 heads of 32 channels, 4 points; a grid_sample per level). Routes: `cm` (ov.convert_model with irgrid's conversion extensions), `ts`
(torch.onnx.export(dynamo=False) then `irgrid convert`), `dyn` (torch.onnx.export, the dynamo exporter,
needs onnxscript, then `irgrid convert`). Needs torch.

Each way runs in a process of its own, as a user's application would run one runtime: in one process
the runtimes' thread pools (torch's OpenMP, OpenVINO's TBB, irgrid's OpenMP) kept spinning into each
other's calls on this project's 2-vCPU hosts, which slowed whichever ran next (benchmarks/README.md,
"auto on the glue-heavy blocks"). A block is exported once; then each round starts one process per
way, the ways' order reversed every other round, so a drifting host's load falls on all alike. A
process opens its way's model, calls it twice (irgrid specialises its plan on the second call), then
times --calls calls and reports their median; the table has the median over rounds, in ms.

Every process runs with glibc's malloc keeping large blocks in its heap (MALLOC_MMAP_THRESHOLD_ 64 MiB,
MALLOC_TRIM_THRESHOLD_ 128 MiB), as a long-lived application's heap is once it has freed large blocks.
Without that, a fresh process maps and unmaps every tensor above 128 KiB and page-faults it in on every
call: torch eager's RAFT block took 5-9 ms a call alone in a process, 4.2-5.2 ms with these settings (and
3.9-4.3 ms when all the runtimes shared one process).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _modules():
    import torch
    import torch.nn.functional as F

    class PWCWarp(torch.nn.Module):  # PWC-Net's backward warp, as published (align_corners as torch < 1.3)
        def forward(self, x, flo):
            B, C, H, W = x.size()
            xx = torch.arange(0, W).view(1, -1).repeat(H, 1)
            yy = torch.arange(0, H).view(-1, 1).repeat(1, W)
            xx = xx.view(1, 1, H, W).repeat(B, 1, 1, 1)
            yy = yy.view(1, 1, H, W).repeat(B, 1, 1, 1)
            grid = torch.cat((xx, yy), 1).float()
            vgrid = grid + flo
            vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :].clone() / max(W - 1, 1) - 1.0
            vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :].clone() / max(H - 1, 1) - 1.0
            vgrid = vgrid.permute(0, 2, 3, 1)
            output = F.grid_sample(x, vgrid, align_corners=True)
            mask = torch.ones(x.size())
            mask = F.grid_sample(mask, vgrid, align_corners=True)
            mask[mask < 0.9999] = 0
            mask[mask > 0] = 1
            return output * mask

    class SpatialTransformer(torch.nn.Module):  # voxelmorph/torch/layers.py's
        def __init__(self, size):
            super().__init__()
            grids = torch.meshgrid([torch.arange(0, s) for s in size], indexing="ij")
            self.register_buffer("grid", torch.stack(grids).unsqueeze(0).float(), persistent=False)

        def forward(self, src, flow):
            new_locs = self.grid + flow
            shape = flow.shape[2:]
            for i in range(len(shape)):
                new_locs[:, i, ...] = 2 * (new_locs[:, i, ...] / (shape[i] - 1) - 0.5)
            new_locs = new_locs.permute(0, 2, 3, 4, 1)[..., [2, 1, 0]]
            return F.grid_sample(src, new_locs, align_corners=True)

    class AffineTransformer(torch.nn.Module):
        def forward(self, x, theta):
            return F.grid_sample(x, F.affine_grid(theta, list(x.shape), align_corners=False), align_corners=False)

    class VecInt(torch.nn.Module):  # voxelmorph/torch/layers.py's: scaling and squaring of a velocity field
        def __init__(self, size, steps=7):
            super().__init__()
            self.steps, self.transformer = steps, SpatialTransformer(size)

        def forward(self, vec):
            vec = vec * (1.0 / 2 ** self.steps)
            for _ in range(self.steps):
                vec = vec + self.transformer(vec, vec)
            return vec

    class CorrLookup(torch.nn.Module):  # RAFT's CorrBlock.__call__ on one pyramid level, radius 4
        def forward(self, corr, coords):
            r = 4
            coords = coords.permute(0, 2, 3, 1)
            batch, h1, w1, _ = coords.shape
            d = torch.linspace(-r, r, 2 * r + 1)
            delta = torch.stack(torch.meshgrid(d, d, indexing="ij"), dim=-1)
            lookup = coords.reshape(batch * h1 * w1, 1, 1, 2) + delta.view(1, 2 * r + 1, 2 * r + 1, 2)
            height, width = corr.shape[-2:]  # RAFT's bilinear_sampler
            xgrid, ygrid = lookup.split([1, 1], dim=-1)
            grid = torch.cat([2 * xgrid / (width - 1) - 1, 2 * ygrid / (height - 1) - 1], dim=-1)
            return F.grid_sample(corr, grid, align_corners=True).view(batch, h1, w1, -1)

    class DCNv2Plain(torch.nn.Module):  # modulated deformable convolution in plain PyTorch: 9 grid_samples
        def __init__(self, channels):
            super().__init__()
            self.offsets = torch.nn.Conv2d(channels, 27, 3, padding=1)
            torch.nn.init.normal_(self.offsets.weight, std=0.01)
            self.weight = torch.nn.Parameter(torch.randn(channels, 9 * channels) / (9 * channels) ** 0.5)

        def forward(self, x):
            batch, channels, height, width = x.shape
            om = self.offsets(x)
            mask = torch.sigmoid(om[:, 18:])
            ys, xs = torch.meshgrid(torch.arange(height, dtype=x.dtype), torch.arange(width, dtype=x.dtype),
                                    indexing="ij")
            columns = []
            for k in range(9):
                px = xs + (k % 3 - 1) + om[:, 2 * k + 1]
                py = ys + (k // 3 - 1) + om[:, 2 * k]
                grid = torch.stack([2 * px / (width - 1) - 1, 2 * py / (height - 1) - 1], dim=-1)
                columns.append(F.grid_sample(x, grid, align_corners=True) * mask[:, k:k + 1])
            columns = torch.cat(columns, 1).flatten(2)  # (batch, 9 C, H W)
            return torch.matmul(self.weight, columns).view(batch, channels, height, width)

    class MSDeformAttn(torch.nn.Module):  # Deformable-DETR's encoder attention with its PyTorch core
        """models/ops/modules/ms_deform_attn.py and functions/ms_deform_attn_func.py's
        ms_deform_attn_core_pytorch, as published: queries src + pos over the flattened levels of src,
        reference points at each query's centre on every level (the encoder's, valid ratios 1)."""

        def __init__(self, shapes, d_model=256, heads=8, points=4):
            super().__init__()
            self.shapes, self.heads, self.points = shapes, heads, points
            levels = len(shapes)
            self.sampling_offsets = torch.nn.Linear(d_model, heads * levels * points * 2)
            self.attention_weights = torch.nn.Linear(d_model, heads * levels * points)
            self.value_proj = torch.nn.Linear(d_model, d_model)
            self.output_proj = torch.nn.Linear(d_model, d_model)
            centres = []
            for height, width in shapes:
                ys, xs = torch.meshgrid(torch.linspace(0.5, height - 0.5, height), torch.linspace(0.5, width - 0.5, width),
                                        indexing="ij")
                centres.append(torch.stack((xs.reshape(-1) / width, ys.reshape(-1) / height), -1))
            reference = torch.cat(centres, 0)[None, :, None].expand(1, -1, levels, 2).contiguous()
            self.register_buffer("reference_points", reference, persistent=False)
            self.register_buffer("normalizer", torch.tensor([[w, h] for h, w in shapes], dtype=torch.float32),
                                 persistent=False)

        def forward(self, src, pos):
            query, heads, levels, points = src + pos, self.heads, len(self.shapes), self.points
            batch, queries, d_model = query.shape
            value = self.value_proj(src).view(batch, queries, heads, d_model // heads)
            offsets = self.sampling_offsets(query).view(batch, queries, heads, levels, points, 2)
            weights = F.softmax(self.attention_weights(query).view(batch, queries, heads, levels * points), -1)
            weights = weights.view(batch, queries, heads, levels, points)
            locations = (self.reference_points[:, :, None, :, None, :]
                         + offsets / self.normalizer[None, None, None, :, None, :])
            # ms_deform_attn_core_pytorch
            channels = d_model // heads
            value_list = value.split([h * w for h, w in self.shapes], dim=1)
            grids = 2 * locations - 1
            sampled = []
            for level, (h, w) in enumerate(self.shapes):
                value_l = value_list[level].flatten(2).transpose(1, 2).reshape(batch * heads, channels, h, w)
                grid_l = grids[:, :, :, level].transpose(1, 2).flatten(0, 1)
                sampled.append(F.grid_sample(value_l, grid_l, mode="bilinear", padding_mode="zeros",
                                             align_corners=False))
            weights = weights.transpose(1, 2).reshape(batch * heads, 1, queries, levels * points)
            output = (torch.stack(sampled, dim=-2).flatten(-2) * weights).sum(-1).view(batch, heads * channels, queries)
            return self.output_proj(output.transpose(1, 2).contiguous())

    return PWCWarp, SpatialTransformer, AffineTransformer, VecInt, CorrLookup, DCNv2Plain, MSDeformAttn


def block(name: str, small: bool):
    """(module, example inputs) of a block."""
    import torch

    PWCWarp, SpatialTransformer, AffineTransformer, VecInt, CorrLookup, DCNv2Plain, MSDeformAttn = _modules()
    torch.manual_seed(0)  # DCNv2's weights: the same in every process
    generator = torch.Generator().manual_seed(0)
    if name == "vecint":
        size = (16, 20, 24) if small else (80, 96, 112)
        return VecInt(size), (torch.randn((1, 3, *size), generator=generator) * 2,)
    if name == "raft":
        height, width = (12, 16) if small else (46, 62)
        coords = torch.stack(torch.meshgrid(torch.arange(width, dtype=torch.float32),
                                            torch.arange(height, dtype=torch.float32), indexing="xy"))[None]
        return CorrLookup(), (torch.randn((height * width, 1, height, width), generator=generator),
                              coords + torch.randn((1, 2, height, width), generator=generator) * 2)
    if name == "dcnv2":
        channels, height, width = (16, 12, 16) if small else (256, 50, 68)
        return DCNv2Plain(channels), (torch.rand((1, channels, height, width), generator=generator),)
    if name == "msda":
        shapes, d_model = (((8, 12), (4, 6), (2, 3), (1, 2)), 64) if small else \
            (((100, 150), (50, 75), (25, 38), (13, 19)), 256)
        queries = sum(h * w for h, w in shapes)
        return MSDeformAttn(shapes, d_model), (torch.randn((1, queries, d_model), generator=generator),
                                               torch.randn((1, queries, d_model), generator=generator) / 4)
    if name == "pwc":
        shape = (1, 3, 44, 64) if small else (4, 3, 436, 1024)
        flow = torch.randn((shape[0], 2, *shape[2:]), generator=generator) * 5
        return PWCWarp(), (torch.rand(shape, generator=generator), flow)
    if name == "voxelmorph":
        size = (16, 20, 24) if small else (80, 96, 112)
        return SpatialTransformer(size), (torch.rand((1, 1, *size), generator=generator),
                                          torch.randn((1, 3, *size), generator=generator) * 3)
    if name != "stn3d":
        raise ValueError(f"no block named {name!r}")
    shape = (2, 1, 8, 16, 16) if small else (8, 1, 32, 64, 64)
    theta = torch.eye(3, 4).expand(shape[0], 3, 4) + torch.randn((shape[0], 3, 4), generator=generator) / 10
    return AffineTransformer(), (torch.rand(shape, generator=generator), theta)


def export(module, inputs, route: str, directory: Path) -> Path:
    import torch

    xml = directory / f"{route}.xml"
    names = [f"input{i}" for i in range(len(inputs))]
    if route == "cm":
        import openvino as ov

        import irgrid.openvino as iov

        model = ov.convert_model(module, example_input=inputs, extension=iov.conversion_extensions())
        ov.save_model(model, str(xml), compress_to_fp16=False)
        return xml
    onnx = directory / f"{route}.onnx"
    torch.onnx.export(module, inputs, str(onnx), dynamo=route == "dyn", input_names=names, output_names=["y"],
                      **({} if route == "dyn" else {"opset_version": 20}))  # 20: GridSample of any rank
    from irgrid.openvino.convert import convert  # `irgrid convert`'s function

    return convert(onnx, xml)


def plain_openvino(module, inputs, route: str, directory: Path, threads: int):
    """A call of the block on OpenVINO without irgrid: its PyTorch frontend's own conversion (cm) or its
    ONNX frontend (ts, dyn), CPU plugin at f32; None where OpenVINO cannot convert or compile it."""
    import openvino as ov

    core = ov.Core()
    try:
        model = (ov.convert_model(module, example_input=inputs) if route == "cm"
                 else core.read_model(str(directory / f"{route}.onnx")))
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                     "INFERENCE_NUM_THREADS": threads})
    except Exception:  # noqa: BLE001 - any refusal (a frontend's conversion error, the plugin's) means "cannot"
        return None
    request = compiled.create_infer_request()
    return lambda feeds: request.infer(feeds, share_outputs=True)


WAYS = ("irgrid", "unfused", "openvino", "plain", "torch", "auto")
MALLOC_ENV = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(64 << 20), "MALLOC_TRIM_THRESHOLD_": str(128 << 20)}


def _way(way: str, case: str, directory: Path, small: bool, threads: int):
    """(a call of the block's model on `way`, what auto said or ""), or None where the way cannot run it."""
    import torch

    import irgrid
    from irgrid.devices import open_model

    name, route = case.split("/")
    module, inputs = block(name, small)
    module.eval()
    feeds = [t.numpy() for t in inputs]
    xml = directory / f"{route}.xml"
    if way in ("irgrid", "openvino"):
        model, _ = open_model(xml, way, threads=threads)
        return (lambda: model(feeds)), ""
    if way == "unfused":  # no fusion or rewrite
        unfused = irgrid.compile_model(xml, threads=threads, fuse=False)
        return (lambda: unfused(feeds)), ""
    if way == "auto":  # as `irgrid infer -shape` runs it: the inputs' shapes given, so that it can measure
        shapes = {parameter.name: feed.shape for parameter, feed in zip(irgrid.read_model(xml).parameters, feeds)}
        chosen, why = open_model(xml, "auto", shapes=shapes, threads=threads)
        return (lambda: chosen(feeds)), why
    if way == "plain":
        plain = plain_openvino(module, inputs, route, directory, threads)
        return None if plain is None else ((lambda: plain(feeds)), "")
    torch.set_num_threads(threads)

    def eager():
        with torch.no_grad():
            module(*inputs)
    return eager, ""


def worker(way: str, case: str, directory: Path, small: bool, threads: int, calls: int) -> None:
    """One process's measurement: a JSON line {"ms": median ms or null, "why": auto's reason}."""
    opened = _way(way, case, directory, small, threads)
    if opened is None:
        print(json.dumps({"ms": None, "why": ""}))
        return
    run, why = opened
    run()
    run()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    print(json.dumps({"ms": 1e3 * float(np.median(times)), "why": why}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="*", default=["pwc/cm", "pwc/ts", "pwc/dyn", "voxelmorph/cm", "vecint/cm",
                                                     "stn3d/dyn", "raft/cm", "raft/dyn", "dcnv2/cm", "dcnv2/ts",
                                                     "msda/cm", "msda/ts", "msda/dyn"])
    parser.add_argument("--small", action="store_true", help="small shapes, a smoke run")
    parser.add_argument("--rounds", type=int, default=3, help="processes per way")
    parser.add_argument("--calls", type=int, default=7, help="timed calls per process")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ways", default=",".join(WAYS), help="the columns to run, comma-separated")
    parser.add_argument("--worker", nargs=3, metavar=("WAY", "CASE", "DIRECTORY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        way, case, directory = args.worker
        worker(way, case, Path(directory), args.small, args.threads, args.calls)
        return
    print("| block/route | irgrid | irgrid unfused | openvino | plain openvino | torch eager | auto | auto picks |\n"
          "|---|---|---|---|---|---|---|---|", flush=True)
    for case in args.cases:
        name, route = case.split("/")
        with tempfile.TemporaryDirectory() as directory:
            module, inputs = block(name, args.small)
            export(module.eval(), inputs, route, Path(directory))
            times: dict[str, list[float]] = {way: [] for way in WAYS}
            why, ways = "", [way for way in WAYS if way in args.ways.split(",")]
            for round_ in range(args.rounds):
                for way in ways if round_ % 2 == 0 else ways[::-1]:
                    command = [sys.executable, __file__, "--worker", way, case, directory, "--threads",
                               str(args.threads), "--calls", str(args.calls)] + (["--small"] if args.small else [])
                    done = subprocess.run(command, capture_output=True, text=True, check=True, env=MALLOC_ENV)
                    result = json.loads(done.stdout.strip().splitlines()[-1])
                    if result["ms"] is not None:
                        times[way].append(result["ms"])
                    why = result["why"] or why
                ways = [way for way in ways if times[way]]  # a way that cannot run the block is not retried
        ms = {way: f"{np.median(values):.1f}" for way, values in times.items() if values}
        columns = " | ".join(ms.get(way, "-") for way in WAYS)
        print(f"| {case} | {columns} | {why} |", flush=True)


if __name__ == "__main__":
    main()
