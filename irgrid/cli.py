"""The `irgrid` command line, in the dialect of OpenVINO's benchmark_app.

    irgrid infer model.xml [-i name=file.npy ... | -i inputs.npz] [-shape "name[1,3,8,8]"]
                           [-o out.npz] [-nthreads N] [-niter N] [--plan]
    irgrid check model.xml [-shape "name[1,3,8,8]"] [--json]
    irgrid ops             (the supported layer table)
    irgrid config          (version, OpenMP, threads)

Exit codes: 0 success (check: clean), 1 check found problems, 2 the model cannot be read, the
arguments are wrong, or running failed. Errors are one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from .errors import InputError, IRGridError
from .threads import get_num_threads, set_num_threads


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="irgrid", description="Read, check and run OpenVINO IR models with grid operators.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    infer = commands.add_parser("infer", help="run a model and print its outputs and latency")
    infer.add_argument("model", help="model .xml (its .bin beside it)")
    infer.add_argument("-i", dest="inputs", action="append", default=[],
                       help="name=file.npy, file.npz (keys are input names), or file.npy for a single input")
    infer.add_argument("-shape", dest="shape", action="append", default=[], help='e.g. "data[1,3,8,8],grid[1,4,4,2]"')
    infer.add_argument("-o", dest="output", help="save outputs to this .npz")
    infer.add_argument("-nthreads", type=int, help="kernel threads (default: available cores)")
    infer.add_argument("-niter", type=int, default=10, help="inferences to time (default 10)")
    infer.add_argument("-seed", type=int, default=0, help="seed for random inputs (default 0)")
    infer.add_argument("--plan", action="store_true", help="print the compiled plan (steps, fusions, kernels, memory)")
    check = commands.add_parser("check", help="infer every layer's shapes and report all problems")
    check.add_argument("model")
    check.add_argument("-shape", dest="shape", action="append", default=[])
    check.add_argument("--json", action="store_true", help="print problems as JSON")
    ops = commands.add_parser("ops", help="list the supported layers")
    ops.add_argument("--markdown", action="store_true", help="as the README's table")
    commands.add_parser("config", help="show version, OpenMP and threads")
    return parser


_ITEM = r"[^\[\],]+\[[^\]]*\]"


def parse_shapes(texts: list[str]) -> dict[str, tuple[int | None, ...]]:
    """'a[1,3,?,8],b[2]' -> {'a': (1, 3, None, 8), 'b': (2,)} ('?' or -1: dynamic)."""
    shapes = {}
    for text in texts:
        compact = text.replace(" ", "")
        if not re.fullmatch(rf"{_ITEM}(,{_ITEM})*", compact):
            raise _UsageError(f'bad -shape {text!r}: expected name[d1,d2,...] (e.g. "data[1,3,224,224]")')
        for name, dims in re.findall(r"([^\[\],]+)\[([^\]]*)\]", compact):
            parsed = []
            for d in filter(None, (d.strip() for d in dims.split(","))):
                if d in ("?", "-1"):
                    parsed.append(None)
                elif d.isdigit():
                    parsed.append(int(d))
                else:
                    raise _UsageError(f"bad dim {d!r} in -shape {text!r}")
            shapes[name] = tuple(parsed)
    return shapes


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        return {"infer": _infer, "check": _check, "ops": _ops, "config": _config}[args.command](args)
    except _UsageError as exc:
        print(f"irgrid: error: {exc}", file=sys.stderr)
        return 2
    except IRGridError as exc:
        print(f"irgrid: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("irgrid: out of memory", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _load_inputs(args, compiled) -> dict[str, np.ndarray]:
    model_path = Path(args.model)
    specs = args.inputs
    if not specs and model_path.with_name("inputs.npz").exists():
        specs = [str(model_path.with_name("inputs.npz"))]
    if not specs:
        return _random_inputs(compiled, args.seed)
    arrays: dict[str, np.ndarray] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = "", spec
        try:
            loaded = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot load input file {path!r}: {exc}") from None
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                arrays.update({k: loaded[k] for k in loaded.files})
        elif name:
            arrays[name] = loaded
        elif len(compiled.inputs) == 1:
            arrays[compiled.inputs[0][0].name] = loaded
        else:
            raise InputError(f"-i {spec!r}: name the input (name=file.npy); the model has {len(compiled.inputs)}")
    return arrays


def _random_inputs(compiled, seed: int) -> dict[str, np.ndarray]:
    from .ir import element_types

    rng = np.random.default_rng(seed)
    arrays = {}
    for parameter, info in compiled.inputs:
        if info.shape is None or None in info.shape:
            raise InputError(f"input {parameter.name!r} has dynamic shape {info.shape}: give -shape or -i")
        dtype = element_types.numpy_dtype(info.element_type)
        if dtype.kind == "f":
            arrays[parameter.name] = rng.uniform(-1, 1, info.shape).astype(dtype)
        elif dtype.kind == "b":
            arrays[parameter.name] = rng.integers(0, 2, info.shape).astype(bool)
        else:
            arrays[parameter.name] = rng.integers(0, 10, info.shape).astype(dtype)
    return arrays


def _infer(args) -> int:
    from .runtime.compiled import compile_model

    if args.nthreads is not None:
        if args.nthreads < 1:
            raise _UsageError("-nthreads must be at least 1")
        set_num_threads(args.nthreads)
    if args.niter < 1:
        raise _UsageError("-niter must be at least 1")
    compiled = compile_model(args.model, shapes=parse_shapes(args.shape) or None)
    if args.plan:
        print(compiled.describe())
    inputs = _load_inputs(args, compiled)
    times = []
    for _ in range(args.niter):
        start = time.perf_counter()
        outputs = compiled(inputs)
        times.append((time.perf_counter() - start) * 1e3)
    print(f"{'output':<28} {'shape':<22} {'dtype':<8} {'min':>12} {'max':>12} {'mean':>12}")
    for name, value in outputs.items():
        stats = _stats(value)
        print(f"{name:<28} {str(list(value.shape)):<22} {str(value.dtype):<8} {stats}")
    times_arr = np.array(times)
    print(f"Count: {args.niter} iterations, threads: {compiled.threads or get_num_threads()}")
    print(f"Latency: median {np.median(times_arr):.3f} ms, min {times_arr.min():.3f} ms, max {times_arr.max():.3f} ms")
    if args.output:
        _save_npz(args.output, outputs)
        print(f"Saved outputs to {args.output}")
    return 0


def _save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Like np.savez, but any output name works (np.savez's own keyword `file` would clash)."""
    try:
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name, value in arrays.items():
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    except OSError as exc:
        raise InputError(f"cannot write outputs to {path!r}: {exc.strerror or exc}") from None


def _stats(value: np.ndarray) -> str:
    if value.size == 0:
        return f"{'-':>12} {'-':>12} {'-':>12}"
    v = value.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return f"{np.nanmin(v):>12.6g} {np.nanmax(v):>12.6g} {np.nanmean(v):>12.6g}" if not np.isnan(v).all() \
            else f"{'nan':>12} {'nan':>12} {'nan':>12}"


def _check(args) -> int:
    from .checker import check_model

    problems = check_model(args.model, shapes=parse_shapes(args.shape) or None)
    if args.json:
        print(json.dumps({"model": args.model, "problems": [p.to_dict() for p in problems]}, indent=2))
    else:
        for problem in problems:
            print(problem)
        print(f"{args.model}: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


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
