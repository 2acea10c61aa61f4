"""Glue-heavy blocks of real architectures (issue 41), each exported the ways users export them and
timed on irgrid's runtime (and without its fusions and rewrites: `fuse=False`), OpenVINO with irgrid's
extension, plain OpenVINO (no irgrid: its own frontends, where they convert the block; `-` where not),
what `auto` picks, and torch eager.

    python benchmarks/glue_blocks.py [--small] [--runs 7] [--threads 2] [block/route ...]

Blocks: `pwc` (PWC-Net's backward warp with its occlusion mask, 4x3x436x1024), `voxelmorph`
(VoxelMorph's SpatialTransformer, 1x1x80x96x112), `vecint` (VoxelMorph's VecInt, 7 squaring steps of a
3x80x96x112 field), `stn3d` (F.affine_grid + F.grid_sample on 8x1x32x64x64), `raft` (RAFT's
correlation lookup, radius 4, on one 46x62 level of 2,852 one-channel maps), `dcnv2` (a modulated
deformable convolution written in plain PyTorch: an offset Conv2d, 9 grid_samples and a matmul, 256
channels of 50x68). Routes: `cm` (ov.convert_model with irgrid's conversion extensions), `ts`
(torch.onnx.export(dynamo=False) then `irgrid convert`), `dyn` (torch.onnx.export, the dynamo exporter,
needs onnxscript, then `irgrid convert`). The runtimes are called in turn within each round (interleaved,
so a shared machine's load falls on all alike); medians over the rounds, in ms. Needs torch.
"""
from __future__ import annotations

import argparse
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

    return PWCWarp, SpatialTransformer, AffineTransformer, VecInt, CorrLookup, DCNv2Plain


def block(name: str, small: bool):
    """(module, example inputs) of a block."""
    import torch

    PWCWarp, SpatialTransformer, AffineTransformer, VecInt, CorrLookup, DCNv2Plain = _modules()
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
    if name == "pwc":
        shape = (1, 3, 44, 64) if small else (4, 3, 436, 1024)
        flow = torch.randn((shape[0], 2, *shape[2:]), generator=generator) * 5
        return PWCWarp(), (torch.rand(shape, generator=generator), flow)
    if name == "voxelmorph":
        size = (16, 20, 24) if small else (80, 96, 112)
        return SpatialTransformer(size), (torch.rand((1, 1, *size), generator=generator),
                                          torch.randn((1, 3, *size), generator=generator) * 3)
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
    subprocess.run([sys.executable, "-m", "irgrid", "convert", str(onnx), "-o", str(xml)], check=True,
                   capture_output=True, cwd=directory)  # the installed irgrid, not a clone's source folder
    return xml


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


def main() -> None:
    import torch

    import irgrid
    from irgrid.devices import open_model

    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="*", default=["pwc/cm", "pwc/ts", "pwc/dyn", "voxelmorph/cm", "vecint/cm",
                                                     "stn3d/dyn", "raft/cm", "raft/dyn", "dcnv2/cm", "dcnv2/ts"])
    parser.add_argument("--small", action="store_true", help="small shapes, a smoke run")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print("| block/route | irgrid | irgrid unfused | openvino | plain openvino | torch eager | auto | auto picks |\n"
          "|---|---|---|---|---|---|---|---|")
    for case in args.cases:
        name, route = case.split("/")
        module, inputs = block(name, args.small)
        module.eval()
        with tempfile.TemporaryDirectory() as directory:
            xml = export(module, inputs, route, Path(directory))
            feeds = [t.numpy() for t in inputs]
            runs = {}
            for device in ("irgrid", "openvino"):
                model, _ = open_model(xml, device, threads=args.threads)
                runs[device] = lambda model=model: model(feeds)
            unfused = irgrid.compile_model(xml, threads=args.threads, fuse=False)  # no fusion or rewrite
            runs["unfused"] = lambda: unfused(feeds)
            # auto as `irgrid infer -shape` runs it: the inputs' shapes given, so that it can measure
            shapes = {model_input.name: feed.shape for (model_input, _), feed in zip(model.inputs, feeds)}
            chosen, why = open_model(xml, "auto", shapes=shapes, threads=args.threads)
            runs["auto"] = lambda: chosen(feeds)
            plain = plain_openvino(module, inputs, route, Path(directory), args.threads)
            if plain is not None:
                runs["plain"] = lambda: plain(feeds)

            def eager():
                with torch.no_grad():
                    module(*inputs)
            runs["torch"] = eager
            times: dict[str, list[float]] = {key: [] for key in runs}
            for round_ in range(args.runs + 2):  # two warm-up rounds (irgrid specialises its plan on call 2)
                for key, run in runs.items():
                    start = time.perf_counter()
                    run()
                    if round_ >= 2:
                        times[key].append(time.perf_counter() - start)
        ms = {key: f"{1e3 * np.median(values):.1f}" for key, values in times.items()}
        columns = " | ".join(ms.get(key, "-") for key in ("irgrid", "unfused", "openvino", "plain", "torch", "auto"))
        print(f"| {case} | {columns} | {why} |", flush=True)


if __name__ == "__main__":
    main()
