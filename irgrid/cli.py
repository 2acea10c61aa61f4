"""The `irgrid` command line, in the dialect of OpenVINO's benchmark_app.

    irgrid infer [-m] model.xml|model.onnx [-d auto|irgrid|openvino]
                 [-i name:file.npy | name=file.npy | file.npy | inputs.npz ...]
                 [-shape "name[1,3,8,8]" | -shape "[1,3,8,8]"] [-o out.npz | out.npy]
                 [-nthreads N] [-niter N | -t SECONDS] [-seed N] [-pc] [--save-images DIR] [--plan]
    irgrid check [-m] model.xml [-shape "name[1,3,8,8]"] [--json]
    irgrid convert model.onnx -o model.xml [--compress-to-fp16]
    irgrid batch [-m] model.xml --input DIR --output DIR [--address HOST:PORT] [-d ...] [-nthreads N]
                 [--actors N]      (every .npz/.npy under DIR, on Ray Data; needs irgrid[ray])
    irgrid ops             (the supported layer table)
    irgrid config          (version, OpenMP, threads)

Exit codes: 0 success (check: clean), 1 check found problems or some batch items failed, 2 the model
cannot be read, the arguments are wrong, or running failed. Errors are one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from .devices import DEVICES, open_model
from .shapes import name_single_input
from .errors import InputError, IRGridError, printable
from .input_arrays import random_inputs
from .npz import read_arrays, save_outputs as _save_outputs
from .pictures import load_pillow, save_pictures
from .threads import available_cores, get_num_threads, set_num_threads, validate_threads


class _Parser(argparse.ArgumentParser):
    """One-line errors (exit 2) and options matched exactly: benchmark_app's `-hint` must not be read
    as `-h` + "int", nor `-nit` as `-niter`."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})

    def _get_option_tuples(self, option_string: str) -> list:
        # On Python 3.11 allow_abbrev=False still matches single-dash prefixes ("-nit" ran as -niter);
        # offering no candidates makes an unknown option "unrecognized" (and "-t5" must be "-t 5").
        return []

    def error(self, message: str) -> None:
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _print_extension(compiled: object) -> None:
    """Which irgrid extension OpenVINO runs (the native library, or the Python ops and why)."""
    extension = getattr(compiled, "extension", None)
    if extension:
        print(f"Extension: {extension}")


def _add_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", nargs="?", help="model .xml (its .bin beside it)")
    parser.add_argument("-m", dest="model_option", metavar="MODEL", help="the model, as benchmark_app's -m")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="irgrid", description="Read, check and run OpenVINO IR models with grid operators.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    infer = commands.add_parser("infer", help="run a model and print its outputs and latency")
    _add_model(infer)
    infer.add_argument("-d", dest="device", choices=DEVICES, default="auto",
                       help="irgrid's runtime, OpenVINO's CPU plugin with irgrid's extension, or auto "
                            "(irgrid when it supports every layer, else OpenVINO; default)")
    infer.add_argument("-i", dest="inputs", action="append", default=[],
                       help="name:file.npy or name=file.npy, file.npz (keys are input names), or file.npy "
                            "for a single input (default: inputs.npz beside the model, else random)")
    infer.add_argument("-shape", dest="shape", action="append", default=[],
                       help='e.g. "data[1,3,8,8],grid[1,4,4,2]", or "[1,3,8,8]" for a single input')
    infer.add_argument("-o", dest="output", help="save outputs to this .npz (or the one output to a .npy)")
    infer.add_argument("-nthreads", type=int, help="kernel threads (default: IRGRID_NUM_THREADS, "
                       "OMP_NUM_THREADS, else the CPUs available)")
    duration = infer.add_mutually_exclusive_group()
    duration.add_argument("-niter", type=int, help="timed inferences after the first (default 10)")
    duration.add_argument("-t", dest="seconds", type=float, help="run timed inferences for this many seconds")
    infer.add_argument("-seed", type=int, default=0, help="seed for random inputs (default 0)")
    infer.add_argument("-pc", action="store_true", help="per-layer performance counters (type, kernel, median "
                       "time, share), as benchmark_app's -pc")
    infer.add_argument("--plan", action="store_true", help="print irgrid's plan for the inputs' shapes: steps, fusions, kernels, buffers, "
                       "peak memory")
    infer.add_argument("--save-images", metavar="DIR", help="write image-like inputs and outputs as PNGs "
                       "(needs Pillow: pip install 'irgrid[images]')")
    check = commands.add_parser("check", help="infer every layer's shapes and report all problems")
    _add_model(check)
    check.add_argument("-shape", dest="shape", action="append", default=[])
    check.add_argument("--json", action="store_true", help="print problems as JSON")
    convert = commands.add_parser("convert", help="convert an ONNX model to OpenVINO IR with irgrid's rules")
    convert.add_argument("source", help="model.onnx (or any format OpenVINO's frontends read)")
    convert.add_argument("-o", dest="output", required=True, help="the IR to write (model.xml; its .bin beside it)")
    convert.add_argument("--compress-to-fp16", action="store_true",
                         help="store f32 weights as f16 (off: the IR is as exact as the source)")
    batch = commands.add_parser("batch", help="run a model over every .npz/.npy under a directory on Ray Data "
                                "(needs pip install 'irgrid[ray]')")
    _add_model(batch)
    batch.add_argument("--input", required=True, metavar="DIR", help="input files: an .npz holds the model's "
                       "inputs by name, a .npy the input of a single-input model (searched recursively)")
    batch.add_argument("--output", required=True, metavar="DIR", help="one .npz per input, same relative name; "
                       "failed items are listed in DIR/errors.csv; existing outputs are skipped")
    batch.add_argument("--address", help="an existing Ray cluster (ray start --head ...); default: a local "
                       "Ray instance with this machine's cores")
    batch.add_argument("-d", dest="device", choices=DEVICES, default="auto", help="as infer's -d")
    batch.add_argument("-nthreads", type=int, default=1, help="kernel threads per actor, the CPUs Ray gives "
                       "each actor (default 1)")
    batch.add_argument("--actors", type=int, help="actors, each compiling the model once (default: as many "
                       "of -nthreads CPUs as the cluster's nodes hold)")
    ops = commands.add_parser("ops", help="list the supported layers")
    ops.add_argument("--markdown", action="store_true", help="as the README's table")
    commands.add_parser("config", help="show version, OpenMP and threads")
    return parser


_ITEM = r"[^\[\],]+\[[^\]]*\]"


def parse_shapes(texts: list[str]) -> dict[str, tuple[int | None, ...]]:
    """'a[1,3,?,8],b[2]' -> {'a': (1, 3, None, 8), 'b': (2,)} ('?' or -1: dynamic); '[1,3]' -> {'': (1, 3)}."""
    shapes = {}
    for text in texts:
        compact = text.replace(" ", "")
        if re.fullmatch(r"\[[^\]]*\]", compact):
            items = [("", compact[1:-1])]
        elif re.fullmatch(rf"{_ITEM}(,{_ITEM})*", compact):
            items = re.findall(r"([^\[\],]+)\[([^\]]*)\]", compact)
        else:
            raise _UsageError(f'bad -shape {text!r}: expected name[d1,d2,...] (e.g. "data[1,3,224,224]")')
        for name, dims in items:
            parsed = []
            for d in filter(None, (d.strip() for d in dims.split(","))):
                if d in ("?", "-1"):
                    parsed.append(None)
                elif d.isascii() and d.isdigit():
                    parsed.append(int(d))
                else:
                    raise _UsageError(f"bad dim {d!r} in -shape {text!r}")
            shapes[name] = tuple(parsed)
    return shapes


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        return {"infer": _infer, "check": _check, "convert": _convert, "batch": _batch, "ops": _ops,
                "config": _config}[args.command](args)
    except _UsageError as exc:
        print(f"irgrid: error: {printable(exc)}", file=sys.stderr)
        return 2
    except IRGridError as exc:
        print(f"irgrid: {type(exc).__name__}: {printable(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print("irgrid: out of memory", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader of stdout left (`irgrid ops | head -1`): no traceback, and none again when Python
        # flushes stdout at exit (the recipe of Python's `signal` docs).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _model_path(args) -> str:
    """The model named by the positional path or -m (once)."""
    if (args.model is None) == (args.model_option is None):
        raise _UsageError("give the model once: as a path or with -m")
    path = args.model if args.model is not None else args.model_option
    if not path:
        raise _UsageError("the model path is empty")
    return path


def _split_spec(spec: str) -> tuple[str, str]:
    """'name:file' or 'name=file' -> (name, file); a bare (or existing) file -> ('', file)."""
    for sep in "=:":
        name, found, path = spec.partition(sep)
        if found and name and not Path(spec).exists():
            return name, path
    return "", spec


def _load_inputs(args, compiled) -> tuple[dict[str, np.ndarray], str]:
    """The arrays to run on and where they came from: -i files, else random if -shape was given, else
    inputs.npz beside the model, else random."""
    beside = Path(_model_path(args)).with_name("inputs.npz")
    if not args.inputs:
        if args.shape or not beside.exists():
            note = "; inputs.npz beside the model not used (-shape given)" if beside.exists() else ""
            return random_inputs(compiled.inputs, args.seed), f"random (seed {args.seed}){note}"
        return _load_files([str(beside)], compiled), "inputs.npz beside the model"
    return _load_files(args.inputs, compiled), ", ".join(args.inputs)


def _load_files(specs: list[str], compiled) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for spec in specs:
        name, path = _split_spec(spec)
        loaded = read_arrays(path)
        if isinstance(loaded, dict):
            arrays.update(loaded)
        elif name:
            arrays[name] = loaded
        elif len(compiled.inputs) == 1:
            arrays[compiled.inputs[0][0].name] = loaded
        else:
            raise InputError(f"-i {spec!r}: name the input (name:file.npy); the model has {len(compiled.inputs)}")
    return arrays


def _timed_runs(compiled, inputs, niter: int | None, seconds: float | None,
                profile: bool = False) -> tuple[list[float], float, list[list]]:
    """Latencies (ms) of the runs after the first, their total wall time (ms), and with `profile` each
    run's per-layer times: `niter` runs, or as many as fit in `seconds` (at least one)."""
    times, counters = [], []
    start = time.perf_counter()
    while True:
        begin = time.perf_counter()
        if profile:
            counters.append(compiled.infer_profiled(inputs)[1])
        else:
            compiled(inputs)
        end = time.perf_counter()
        times.append((end - begin) * 1e3)
        if len(times) == niter or (seconds is not None and end - start >= seconds):
            return times, (end - start) * 1e3, counters


def _print_counters(runs: list[list]) -> None:
    """benchmark_app's -pc: each layer's type, kernel, median time over the timed runs and share. Layers
    are matched by name and type: OpenVINO's list of executed layers may change from run to run of a
    dynamic-shape model (a layer absent from a run took no time in it)."""
    layers, seconds = {}, []
    for run in runs:
        seen: Counter = Counter()  # an IR's layer names need not be unique
        keyed = []
        for layer in run:
            key = (layer.name, layer.type, seen[layer.name, layer.type])
            seen[layer.name, layer.type] += 1
            layers.setdefault(key, layer)
            keyed.append((key, layer.seconds))
        seconds.append(dict(keyed))
    medians = [(layer, float(np.median([run.get(key, 0.0) for run in seconds])) * 1e3) for key, layer in layers.items()]
    total = sum(ms for _, ms in medians) or 1.0
    print(f"Performance counts (median of {len(runs)} runs):")
    print(f"  {'layer':<32} {'type':<28} {'kernel':<40} {'ms':>9} {'share':>6}")
    for layer, ms in medians:
        print(f"  {layer.name[:32]:<32} {layer.type[:28]:<28} {layer.kernel[:40]:<40} {ms:>9.3f} {ms / total:>6.1%}")
    print(f"  {'total':<32} {'':<28} {'':<40} {total:>9.3f}")


def _infer(args) -> int:
    if args.nthreads is not None:
        set_num_threads(validate_threads(args.nthreads, "-nthreads"))
        cores = available_cores()
        if args.nthreads > cores:
            print(f"irgrid: warning: -nthreads {args.nthreads} is more than the {cores} CPUs this process may use; "
                  "running anyway", file=sys.stderr)
    if args.niter is not None and args.niter < 1:
        raise _UsageError("-niter must be at least 1")
    if args.seconds is not None and not 0 < args.seconds < math.inf:
        raise _UsageError("-t must be a positive, finite number of seconds")
    if args.save_images:
        load_pillow()
    suffix = Path(args.output).suffix.lower() if args.output else None
    if suffix not in (None, ".npz", ".npy"):
        raise _UsageError(f"-o {args.output!r}: the file must end in .npz (all outputs) or .npy (a single output)")
    compiled, why = open_model(_model_path(args), args.device, parse_shapes(args.shape) or None,
                               get_num_threads(), profile=args.pc,
                               inputs_for=lambda model: _load_inputs(args, model)[0])  # auto measures on them
    print(f"Device: {why}")
    _print_extension(compiled)
    if suffix == ".npy" and len(compiled.outputs) != 1:
        raise _UsageError(f"-o {args.output!r}: a .npy holds one output and this model has "
                          f"{len(compiled.outputs)}: use .npz")
    inputs, source = _load_inputs(args, compiled)
    print(f"Inputs: {source}")
    if args.plan:  # the plan for these inputs' shapes, the one that runs them
        describe = getattr(compiled, "describe", None)  # irgrid's runtime has a plan; OpenVINO's does not
        print(describe(inputs=inputs) if describe else "Plan: none (OpenVINO runs this model)")
    start = time.perf_counter()
    outputs = compiled(inputs)
    print(f"First inference took {(time.perf_counter() - start) * 1e3:.3f} ms")
    niter = None if args.seconds is not None else args.niter or 10
    times, duration, counters = _timed_runs(compiled, inputs, niter, args.seconds, args.pc)
    _report(outputs, times, duration, compiled.threads or get_num_threads())
    if counters:
        _print_counters(counters)
    if args.output:
        _save_outputs(args.output, outputs)
        print(f"Saved outputs to {args.output}")
    if args.save_images:
        written = save_pictures({**{f"input_{k}": v for k, v in inputs.items()},
                                 **{f"output_{k}": v for k, v in outputs.items()}}, args.save_images)
        names = ", ".join(p.name for p in written) or "none (no image-like tensor)"
        print(f"Pictures saved to {args.save_images}: {names}")
    return 0


def _report(outputs: dict[str, np.ndarray], times: list[float], duration: float, threads: int) -> None:
    """The outputs table, then a closing block as benchmark_app's."""
    print(f"{'output':<28} {'shape':<22} {'dtype':<8} {'min':>12} {'max':>12} {'mean':>12}")
    for name, value in outputs.items():
        print(f"{name:<28} {str(list(value.shape)):<22} {str(value.dtype):<8} {_stats(value)}")
    latency = np.array(times)
    print(f"Threads:    {threads}")
    print(f"Count:      {len(times)} iterations")
    print(f"Duration:   {duration:.3f} ms")
    print("Latency:")
    for label, value in (("Median", np.median(latency)), ("Average", latency.mean()), ("Min", latency.min()),
                         ("Max", latency.max())):
        print(f"   {label + ':':<9}{value:.3f} ms")
    print(f"Throughput: {len(times) / duration * 1e3:.2f} FPS")


def _stats(value: np.ndarray) -> str:
    if value.size == 0:
        return f"{'-':>12} {'-':>12} {'-':>12}"
    v = value.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return f"{np.nanmin(v):>12.6g} {np.nanmax(v):>12.6g} {np.nanmean(v):>12.6g}" if not np.isnan(v).all() \
            else f"{'nan':>12} {'nan':>12} {'nan':>12}"


def _check(args) -> int:
    from .binding import bind_model
    from .checker import check_model
    from .ir.reader import read_ir

    path = _model_path(args)
    problems = []
    model = bind_model(read_ir(path), on_problem=problems.append)
    shapes = name_single_input(parse_shapes(args.shape), [p.name for p in model.parameters])
    problems += check_model(model, shapes=shapes or None)
    if args.json:
        print(json.dumps({"model": path, "problems": [p.to_dict() for p in problems]}, indent=2))
    else:
        for problem in problems:
            print(printable(problem))
        print(f"{path}: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


def _convert(args) -> int:
    from .openvino.convert import convert

    written = convert(args.source, args.output, compress_to_fp16=args.compress_to_fp16)
    print(f"Saved {written} (and {written.with_suffix('.bin').name})")
    return 0


def _batch(args) -> int:
    """The model is opened here first, so a model error is exit 2 before Ray starts; the actors then
    open the same IR on the device chosen here (the run itself: irgrid.ray.run_batch)."""
    try:
        from . import ray as batch
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "ray":
            raise
        raise _UsageError("irgrid batch needs Ray: pip install 'irgrid[ray]'") from None
    from .runtime.compiled import CompiledModel

    model = Path(_model_path(args)).resolve()
    try:
        input_dir, output_dir = batch.batch_dirs(args.input, args.output)
        threads = validate_threads(args.nthreads, "-nthreads")
        if args.actors is not None and args.actors < 1:
            raise _UsageError("--actors must be at least 1")
        compiled, why = open_model(model, args.device, None, threads)
        device = "irgrid" if isinstance(compiled, CompiledModel) else "openvino"
        print(f"Device: {why}")
        _print_extension(compiled)
        return batch.run_batch(model, input_dir, output_dir, device, threads, args.actors, args.address,
                               args.input, args.output)
    except batch.BatchUsageError as exc:
        raise _UsageError(str(exc)) from None


def _ops(args) -> int:
    from .registry import support_table

    rows = support_table()
    if args.markdown:
        print("| type | versions | runs on | what |\n|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        for type_, versions, engine, summary in rows:
            print(f"{type_:<40} {versions:<32} {engine:<7} {summary}")
    return 0


def _config(args) -> int:
    from .config import show_config

    show_config()
    return 0
