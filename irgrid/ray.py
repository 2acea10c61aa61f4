"""Batch inference past one machine on Ray Data: one compiled model per actor.

    import ray, irgrid.ray
    ds = ray.data.from_items([{"image": image, "flow": flow}, ...])   # a row: one set of the model's inputs
    out = ds.map_batches(irgrid.ray.Predictor, fn_constructor_kwargs={"model": "/shared/model.xml"},
                         compute=ray.data.ActorPoolStrategy(size=2), num_cpus=1, batch_size=8)

runs 2 actors of 1 kernel thread each. `Predictor` is a callable class because Ray Data constructs it
once per actor: the IR is read, checked and planned once per actor, not once per batch. Each actor runs
its kernels with the CPUs Ray gave it (`num_cpus`), since several actors share a node and each taking
every core would oversubscribe it.
`FileRunner` is what `irgrid batch` maps: rows name input files, and each actor loads, runs and writes
them itself, so the data never passes through the driver and a bad item becomes a row with its error;
`run_batch` is that command's run, from the files still to do to the errors table.

This module is `irgrid.ray`; `import ray` below is an absolute import (Python 3), so it is Ray itself.
"""
from __future__ import annotations

import csv
import logging
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np
import ray
import ray.data

from .devices import open_model
from .errors import ConfigError, InputError, error_line
from .npz import read_arrays, save_outputs
from .threads import available_cores, get_num_threads, set_num_threads, validate_threads

INPUT_SUFFIXES = (".npz", ".npy")
ERRORS_FILE = "errors.csv"


def actor_threads(threads: int | None = None) -> int:
    """Kernel threads for this actor: `threads` when given, else the CPUs Ray assigned this worker
    (its `num_cpus`), else irgrid's default (outside Ray)."""
    if threads is not None:
        return validate_threads(threads, "threads")
    if ray.is_initialized():
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU")
        if cpus:
            return max(1, int(cpus))
    return get_num_threads()


class Predictor:
    """For `Dataset.map_batches`: a column per model input, each row one complete set of inputs (the
    model's own shapes, batch dim included); returns a column per model output. Rows run one model
    call each, so items of different shapes run on a model with dynamic dims."""

    def __init__(self, model: str | os.PathLike, device: str = "auto", threads: int | None = None,
                 shapes: Mapping[str, Sequence[int | None]] | None = None) -> None:
        self.threads = actor_threads(threads)
        # The process's own knob too (an actor's own process): irgrid's ops inside OpenVINO and
        # constant folding resolve it rather than taking a thread count.
        set_num_threads(self.threads)
        self.compiled, self.device = open_model(model, device, shapes, self.threads)

    def __call__(self, batch: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        rows = len(next(iter(batch.values()), ()))
        results = [self.compiled({name: column[i] for name, column in batch.items()}) for i in range(rows)]
        return {name: _column([r[name] for r in results]) for name in (results[0] if results else ())}


def _column(values: list[np.ndarray]) -> np.ndarray:
    """Stacked when every row has the same shape, else an object array (Ray Data's ragged tensors)."""
    if len({v.shape for v in values}) == 1:
        return np.stack(values)
    ragged = np.empty(len(values), dtype=object)
    ragged[:] = values
    return ragged


class FileRunner(Predictor):
    """For `irgrid batch`: a column `file` of paths relative to `input_dir`; each is loaded, run and
    written to `output_dir` under the same relative name as .npz (save_outputs: an output that exists
    is complete). Returns `file` and `error` ("" when it succeeded): a bad item is a row,
    never a failed batch, so it cannot stop the run."""

    def __init__(self, model: str | os.PathLike, input_dir: str | os.PathLike, output_dir: str | os.PathLike,
                 device: str = "auto", threads: int | None = None) -> None:
        super().__init__(model, device, threads)
        self.input_dir, self.output_dir = Path(input_dir), Path(output_dir)

    def __call__(self, batch: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        files = [str(f) for f in batch["file"]]
        return {"file": np.array(files, dtype=object),
                "error": np.array([self._run_one(f) for f in files], dtype=object)}

    def _run_one(self, name: str) -> str:
        try:
            outputs = self.compiled(load_item(self.input_dir / name, self.compiled.inputs))
            target = self.output_dir / output_name(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            save_outputs(str(target), outputs)
        except Exception as exc:  # noqa: BLE001  (any failure of one item is that item's error row)
            return error_line(exc)
        return ""


def ray_failure_line(exc: BaseException) -> str:
    """The root error of a Ray failure in one line: Ray's message holds the remote traceback (with
    colour codes), whose last `module.Type: message` line is what went wrong (e.g. a worker node that
    cannot read the model: `ParseError: cannot read ...`)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    raised = re.findall(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Exit)): (.*)$", text, flags=re.MULTILINE)
    return f"{raised[-1][0]}: {raised[-1][1].strip()}" if raised else error_line(exc)


def output_name(name: str) -> str:
    """The output file for an input file: the same relative name, as .npz."""
    return str(Path(name).with_suffix(".npz"))


def load_item(path: Path, inputs: Sequence[tuple]) -> dict[str, np.ndarray]:
    """The model inputs in `path`: an .npz holds them by name, a .npy the one input of a single-input
    model (read as `read_arrays` reads them: a broken or hostile file is an InputError)."""
    arrays = read_arrays(path)
    if not isinstance(arrays, np.ndarray):
        return arrays
    if len(inputs) != 1:  # read_arrays tells a .npy by its bytes, whatever the file's name
        raise InputError(f"a .npy holds one input and the model has {len(inputs)}: use an .npz "
                         "with the inputs by name")
    return {inputs[0][0].name: arrays}


def pending_files(input_dir: Path, output_dir: Path) -> tuple[list[str], int]:
    """The .npz / .npy files under `input_dir` (recursively, relative names, sorted) whose output does
    not exist yet, and how many were skipped because it does."""
    names = sorted(str(p.relative_to(input_dir)) for p in input_dir.rglob("*")
                   if p.suffix.lower() in INPUT_SUFFIXES and p.is_file())
    by_output: dict[str, str] = {}
    for name in names:
        clash = by_output.setdefault(output_name(name), name)
        if clash != name:
            raise InputError(f"{clash!r} and {name!r} would both write {output_name(name)!r}: rename one")
    pending = [name for name in names if not (output_dir / output_name(name)).exists()]
    return pending, len(names) - len(pending)


_EMPTY_DIR: tempfile.TemporaryDirectory | None = None


def worker_runtime_env() -> dict:
    """The runtime_env irgrid starts Ray jobs with: an empty working_dir.

    Without a working_dir, Ray puts the driver's current directory on every worker's sys.path, ahead
    of the installed packages; run from a source checkout (an `irgrid/` folder whose kernels are not
    built in place), the workers would import that folder instead of the installed irgrid."""
    global _EMPTY_DIR
    if _EMPTY_DIR is None:
        _EMPTY_DIR = tempfile.TemporaryDirectory(prefix="irgrid-ray-")
    return {"working_dir": _EMPTY_DIR.name}


def start_ray(address: str | None) -> bool:
    """Connect to the Ray cluster at `address`, or start a local instance with this machine's cores,
    quietly (no dashboard, warnings only, worker logs kept on the workers). False when Ray was already
    initialised: the caller's session, used as it is and left running."""
    if ray.is_initialized():
        return False
    quiet = {"logging_level": logging.WARNING, "log_to_driver": False, "runtime_env": worker_runtime_env()}
    try:
        if address:
            ray.init(address=address, **quiet)
        else:
            ray.init(address="local", num_cpus=available_cores(), include_dashboard=False, **quiet)
    except Exception as exc:  # noqa: BLE001  (Ray raises ConnectionError, ValueError, RuntimeError, ...)
        where = f"connect to Ray at {address!r}" if address else "start a local Ray instance"
        raise ConfigError(f"cannot {where}: {error_line(exc)}") from None
    return True


def node_cpus() -> list[int]:
    """The CPUs of each live node of the Ray cluster (an actor must fit on one node)."""
    return [int(node["Resources"].get("CPU", 0)) for node in ray.nodes() if node.get("Alive")]


def run_files(model: Path, input_dir: Path, output_dir: Path, files: list[str], device: str, threads: int,
              actors: int) -> Iterator[tuple[str, str]]:
    """(file, error) for each of `files` as the actors finish it ("" when it succeeded). Batches are
    small (about four per actor, at most 16 files each) so a slow item holds back few others."""
    batch_size = max(1, min(16, len(files) // (4 * actors)))
    results = ray.data.from_items([{"file": name} for name in files]).map_batches(
        FileRunner, batch_size=batch_size, compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=threads,
        fn_constructor_kwargs={"model": str(model), "input_dir": str(input_dir), "output_dir": str(output_dir),
                               "device": device, "threads": threads})
    for row in results.iter_rows():
        yield str(row["file"]), str(row["error"])


def write_errors(output_dir: Path, failures: Iterable[tuple[str, str]]) -> Path | None:
    """The errors table (file, error) of this run in `output_dir`; none, and a stale one removed, when
    every item succeeded."""
    path = output_dir / ERRORS_FILE
    failures = sorted(failures)
    if not failures:
        path.unlink(missing_ok=True)
        return None
    with open(path, "w", newline="", encoding="utf-8") as table:
        writer = csv.writer(table)
        writer.writerow(["file", "error"])
        writer.writerows(failures)
    return path


class BatchUsageError(Exception):
    """A batch that cannot run as asked (bad directories, more CPUs than the cluster has, Ray failing):
    `irgrid batch` prints it as a usage error."""


def batch_dirs(input_arg: str, output_arg: str) -> tuple[Path, Path]:
    """--input and --output, absolute (Ray workers run elsewhere)."""
    input_dir, output_dir = Path(input_arg).resolve(), Path(output_arg).resolve()
    if not input_dir.is_dir():
        raise BatchUsageError(f"--input {input_arg!r} is not a directory")
    if output_dir == input_dir or input_dir in output_dir.parents:
        raise BatchUsageError("--output must not be inside --input (its outputs would be read as inputs)")
    if output_dir.exists() and not output_dir.is_dir():
        raise BatchUsageError(f"--output {output_arg!r} is a file, not a directory")
    return input_dir, output_dir


def batch_actors(requested: int | None, threads: int, address: str | None, started: bool) -> int:
    """How many actors of `threads` CPUs: `requested`, else as many as the nodes hold; more than the
    cluster can place is a usage error (Ray would wait for CPUs that never come)."""
    nodes = node_cpus()
    cpus, largest = sum(nodes), max(nodes, default=0)
    if threads > largest:
        raise BatchUsageError(f"-nthreads {threads}: no Ray node has that many CPUs (the largest has {largest})")
    actors = requested or sum(n // threads for n in nodes)
    if actors * threads > cpus:
        raise BatchUsageError(f"--actors {actors} x -nthreads {threads} needs {actors * threads} CPUs; the Ray "
                              f"cluster has {cpus}")
    where = f"cluster at {address}" if address else "local instance" if started else "this session's Ray"
    print(f"Ray: {where}, {cpus} CPUs; {actors} actor{'s' * (actors > 1)} x {threads} thread{'s' * (threads > 1)}")
    return actors


def run_batch(model: Path, input_dir: Path, output_dir: Path, device: str, threads: int, actors: int | None,
              address: str | None, input_arg: str, output_arg: str) -> int:
    """`irgrid batch` once the model opened on `device`: every pending file under `input_dir` on Ray
    (`address`, else a local instance), a summary printed; 1 when an item failed, else 0."""
    files, skipped = pending_files(input_dir, output_dir)
    note = f" ({skipped} skipped: output exists)" if skipped else ""
    print(f"Inputs: {len(files)} to run under {input_arg}{note}")
    if not files:
        write_errors(output_dir, [])
        return 0
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BatchUsageError(f"cannot create --output {output_arg!r}: {exc.strerror or exc}") from None
    started = start_ray(address)
    try:
        actors = batch_actors(actors, threads, address, started)
        start = time.perf_counter()
        failures = [(name, error) for name, error in run_files(
            model, input_dir, output_dir, files, device, threads, actors) if error]
        seconds = time.perf_counter() - start
    except ray.exceptions.RayError as exc:
        raise BatchUsageError(f"Ray failed: {ray_failure_line(exc)}") from None
    finally:
        if started:
            ray.shutdown()
    table = write_errors(output_dir, failures)
    print(f"Done: {len(files) - len(failures)} ok, {len(failures)} failed in {seconds:.2f} s "
          f"({len(files) / seconds:.1f} items/s)" + (f"; errors listed in {table}" if table else ""))
    return 1 if failures else 0
