"""`irgrid batch` and `irgrid.ray` on a real local Ray instance (started once for this module, 2 CPUs).

The oracle is irgrid's own single-item path, which the other test files check against OpenVINO,
onnxruntime and ONNX's reference: every output a batch run writes must be bitwise identical to
`irgrid.compile_model(model)(inputs)` on that item (and to `irgrid infer -o` for one item), since a batch
run must change where items run, never what they give. Kernels use fixed-size chunks, so the actor's
thread count (1 here) does not change results.
"""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irgrid
from irgrid.builder import IRBuilder
from irgrid.cli import main
from oracles import ROOT, SAMPLES, assert_one_line_error, readme_snippet, run_cli

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'irgrid[ray]')")
import irgrid.ray as irgrid_ray  # noqa: E402

FLOW_WARP, PRIOR_GRID = SAMPLES / "flow_warp" / "model.xml", SAMPLES / "prior_grid" / "model.xml"


@pytest.fixture(scope="module")
def ray_session():
    """One local Ray instance for the module; `irgrid batch` run in-process uses it as it is."""
    import logging

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.WARNING,
             log_to_driver=False, runtime_env=irgrid_ray.worker_runtime_env())
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def _sample_inputs(model: Path, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random inputs of the sample's own shapes and dtypes (its inputs.npz), flows of a few pixels."""
    with np.load(model.with_name("inputs.npz")) as sample:
        return {name: (rng.standard_normal(value.shape) * 3).astype(value.dtype) for name, value in sample.items()}


def _write_items(folder: Path, model: Path, names: list[str], seed: int) -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    items = {}
    for name in names:
        items[name] = _sample_inputs(model, rng)
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        np.savez(folder / name, **items[name])
    return items


def _single_input_model(folder: Path) -> Path:
    """data (1,2,8,8) sampled at a constant 5x5 grid: a one-input model, for .npy items."""
    b = IRBuilder("single")
    data = b.parameter("data", (1, 2, 8, 8))
    grid = b.const(np.random.default_rng(3).uniform(-1.1, 1.1, (1, 5, 5, 2)).astype(np.float32))
    (out,) = b.layer("GridSample", "opset9", [data, grid], {"mode": "bilinear", "padding_mode": "border",
                                                            "align_corners": False})
    b.result(out, "sampled")
    return b.save(folder / "single.xml")


def _batch(capsys, *args) -> tuple[int, str, str]:
    code = main(["batch", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_outputs_equal(saved: Path, expected: dict[str, np.ndarray]) -> None:
    with np.load(saved) as got:
        assert list(got.files) == list(expected)
        for name, value in expected.items():
            assert got[name].dtype == value.dtype and got[name].shape == value.shape
            np.testing.assert_array_equal(got[name], value)  # bitwise (NaNs equal by position)


def _errors(output: Path) -> dict[str, str]:
    with open(output / irgrid_ray.ERRORS_FILE, newline="", encoding="utf-8") as table:
        rows = list(csv.reader(table))
    assert rows[0] == ["file", "error"]
    return dict(rows[1:])


def _bad_flow_items(folder: Path) -> dict[str, str]:
    """Bad items beside good ones, and a fragment of the error each must be listed with."""
    good = _sample_inputs(FLOW_WARP, np.random.default_rng(9))
    (folder / "bad").mkdir()
    np.savez(folder / "bad" / "shape.npz", image=good["image"][..., :100], flow=good["flow"])
    np.savez(folder / "bad" / "dtype.npz", image=good["image"].astype(np.float64), flow=good["flow"])
    np.savez(folder / "bad" / "missing.npz", image=good["image"])
    np.save(folder / "bad" / "single.npy", good["image"])
    (folder / "bad" / "broken.npz").write_bytes(b"PK\x03\x04 not a zip")
    truncated = folder / "bad" / "truncated.npz"
    np.savez(truncated, image=good["image"], flow=good["flow"])
    truncated.write_bytes(truncated.read_bytes()[:4000])
    return {"bad/shape.npz": "must have shape [1,3,96,128]", "bad/dtype.npz": "must be f32",
            "bad/missing.npz": "'flow' is missing", "bad/single.npy": "a .npy holds one input",
            "bad/broken.npz": "cannot load input file 'broken.npz'",
            "bad/truncated.npz": "cannot load input file 'truncated.npz'"}


@pytest.fixture(scope="module")
def flow_run(ray_session, tmp_path_factory):
    """The flow-warp sample over good items (in nested folders) mixed with bad ones, then re-run."""
    root = tmp_path_factory.mktemp("flow")
    items = _write_items(root / "in", FLOW_WARP, ["a.npz", "sub/b.npz", "sub/deeper/c.npz", "d.npz"], seed=1)
    bad = _bad_flow_items(root / "in")
    return root, items, bad


def test_flow_warp_outputs_identical_and_bad_items_listed(flow_run, capsys):
    root, items, bad = flow_run
    code, out, err = _batch(capsys, FLOW_WARP, "--input", root / "in", "--output", root / "out")
    assert code == 1, (out, err)
    assert "Device: irgrid" in out and f"Done: {len(items)} ok, {len(bad)} failed" in out
    compiled = irgrid.compile_model(FLOW_WARP)
    for name, inputs in items.items():
        _assert_outputs_equal(root / "out" / name, compiled(inputs))
    errors = _errors(root / "out")
    assert set(errors) == set(bad)
    for name, fragment in bad.items():
        assert errors[name].startswith("InputError: ") and fragment in errors[name], errors[name]
        assert not (root / "out" / name).with_suffix(".npz").exists()
    assert not list((root / "out").rglob("*.part"))


def test_rerun_skips_existing_outputs(flow_run, capsys):
    root, items, bad = flow_run
    written = {name: (root / "out" / name).stat().st_mtime_ns for name in items}
    code, out, _ = _batch(capsys, FLOW_WARP, "--input", root / "in", "--output", root / "out", "--actors", 1)
    assert code == 1 and f"Inputs: {len(bad)} to run under" in out and f"({len(items)} skipped" in out
    assert {name: (root / "out" / name).stat().st_mtime_ns for name in items} == written
    assert set(_errors(root / "out")) == set(bad)
    for name in bad:  # the bad items fixed: nothing fails any more, and the stale errors table goes
        (root / "in" / name).unlink()
    code, out, _ = _batch(capsys, FLOW_WARP, "--input", root / "in", "--output", root / "out")
    assert code == 0 and "Inputs: 0 to run" in out
    assert not (root / "out" / irgrid_ray.ERRORS_FILE).exists()


def test_flow_warp_output_identical_to_irgrid_infer(flow_run, capsys):
    root, items, _ = flow_run
    if not (root / "out" / "a.npz").exists():
        _batch(capsys, FLOW_WARP, "--input", root / "in", "--output", root / "out")
    proc = run_cli("infer", FLOW_WARP, "-i", root / "in" / "a.npz", "-niter", 1, "-o", root / "infer.npz",
                   cwd=root)
    assert proc.returncode == 0, proc.stderr
    with np.load(root / "infer.npz") as infer:
        _assert_outputs_equal(root / "out" / "a.npz", dict(infer))


def test_prior_grid_outputs_identical(ray_session, tmp_path, capsys):
    items = _write_items(tmp_path / "in", PRIOR_GRID, ["x.npz", "y/z.npz"], seed=2)
    code, out, err = _batch(capsys, "-m", PRIOR_GRID, "--input", tmp_path / "in", "--output", tmp_path / "out",
                            "--actors", 2)
    assert code == 0, (out, err)
    compiled = irgrid.compile_model(PRIOR_GRID)
    for name, inputs in items.items():
        _assert_outputs_equal(tmp_path / "out" / name, compiled(inputs))
    assert not (tmp_path / "out" / irgrid_ray.ERRORS_FILE).exists()


def test_npy_items_of_a_single_input_model(ray_session, tmp_path, capsys):
    model = _single_input_model(tmp_path)
    rng = np.random.default_rng(4)
    data = {f"n{i}.npy": rng.standard_normal((1, 2, 8, 8)).astype(np.float32) for i in range(3)}
    (tmp_path / "in").mkdir()
    for name, array in data.items():
        np.save(tmp_path / "in" / name, array)
    np.save(tmp_path / "in" / "fortran.npy", np.asfortranarray(data["n0.npy"]))
    np.save(tmp_path / "in" / "objects.npy", np.array([None, 1], dtype=object), allow_pickle=True)
    header_only = (tmp_path / "in" / "n0.npy").read_bytes()[:128]  # declares 512 bytes of data, has none
    (tmp_path / "in" / "header_only.npy").write_bytes(header_only)
    with open(tmp_path / "in" / "huge.npy", "wb") as huge:  # a header declaring 2**80 floats, no data
        np.lib.format.write_array_header_1_0(huge, {"descr": "<f4", "fortran_order": False, "shape": (2**40, 2**40)})
    code, out, err = _batch(capsys, model, "--input", tmp_path / "in", "--output", tmp_path / "out",
                            "--actors", 1, "-nthreads", 2)
    assert code == 1, (out, err)
    assert "1 actor x 2 threads" in out
    compiled = irgrid.compile_model(model)
    for name, array in {**data, "fortran.npy": data["n0.npy"]}.items():
        _assert_outputs_equal(tmp_path / "out" / Path(name).with_suffix(".npz"), compiled({"data": array}))
    errors = _errors(tmp_path / "out")
    assert set(errors) == {"objects.npy", "header_only.npy", "huge.npy"}
    assert errors["huge.npy"].startswith("ShapeError: ") and "more than this machine's" in errors["huge.npy"]
    assert "object arrays are not model inputs" in errors["objects.npy"]
    assert "fewer" in errors["header_only.npy"]


def test_openvino_device_in_actors(ray_session, tmp_path, capsys):
    """-d openvino: the actors run OpenVINO's CPU plugin; the oracle is OpenVINO on the same item here
    (rtol 1e-6, atol 1e-6: OpenVINO's own kernels may split work by thread count)."""
    from irgrid.devices import open_model

    items = _write_items(tmp_path / "in", FLOW_WARP, ["a.npz", "b.npz"], seed=5)
    code, out, err = _batch(capsys, FLOW_WARP, "--input", tmp_path / "in", "--output", tmp_path / "out",
                            "-d", "openvino", "--actors", 1)
    assert code == 0, (out, err)
    assert "Device: openvino" in out
    oracle, _ = open_model(FLOW_WARP, "openvino", threads=1)
    for name, inputs in items.items():
        expected = oracle(inputs)
        with np.load(tmp_path / "out" / name) as got:
            assert list(got.files) == list(expected)
            for key, value in expected.items():
                np.testing.assert_allclose(got[key], value, rtol=1e-6, atol=1e-6)


def test_predictor_in_a_ray_data_pipeline(ray_session):
    """The README's Python form: rows of arrays through `map_batches(irgrid.ray.Predictor, ...)`."""
    rng = np.random.default_rng(6)
    rows = [_sample_inputs(FLOW_WARP, rng) for _ in range(5)]
    context = ray.data.DataContext.get_current()
    preserve, context.execution_options.preserve_order = context.execution_options.preserve_order, True
    try:
        outputs = ray.data.from_items(rows).map_batches(
            irgrid_ray.Predictor, fn_constructor_kwargs={"model": str(FLOW_WARP), "threads": 1},
            compute=ray.data.ActorPoolStrategy(size=2), num_cpus=1, batch_size=2).take_all()
    finally:
        context.execution_options.preserve_order = preserve
    compiled = irgrid.compile_model(FLOW_WARP)
    assert len(outputs) == len(rows)
    for got, want in zip(outputs, [compiled(row) for row in rows]):
        assert list(got) == list(want)
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value)


def test_readme_python_form_runs(ray_session, monkeypatch):

    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    exec(compile(readme_snippet("irgrid.ray.Predictor"), "README.md", "exec"), namespace)
    assert namespace["shapes"] == [(1, 3, 96, 128)] * 4


def test_actor_threads_follow_num_cpus(ray_session):
    @ray.remote(num_cpus=2)
    def threads_in_task():
        return irgrid_ray.actor_threads(), irgrid_ray.actor_threads(3)

    assert ray.get(threads_in_task.remote()) == (2, 3)


def test_cluster_address_from_another_process(ray_session, tmp_path):
    """--address: a separate `irgrid batch` process joins this module's Ray instance as a driver."""
    items = _write_items(tmp_path / "in", FLOW_WARP, ["a.npz"], seed=7)
    proc = run_cli("batch", FLOW_WARP, "--input", tmp_path / "in", "--output", tmp_path / "out",
                   "--address", ray_session, "--actors", 1, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"Ray: cluster at {ray_session}, 2 CPUs; 1 actor x 1 thread" in proc.stdout
    _assert_outputs_equal(tmp_path / "out" / "a.npz", irgrid.compile_model(FLOW_WARP)(items["a.npz"]))


def test_local_instance_started_by_the_cli(ray_session, tmp_path):
    """Without --address, `irgrid batch` starts (and stops) its own local Ray instance with this
    machine's cores, beside any other."""
    from irgrid.threads import available_cores

    items = _write_items(tmp_path / "in", FLOW_WARP, ["a.npz"], seed=8)
    proc = run_cli("batch", FLOW_WARP, "--input", tmp_path / "in", "--output", tmp_path / "out", "--actors", 1,
                   cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"Ray: local instance, {available_cores()} CPUs; 1 actor x 1 thread" in proc.stdout
    _assert_outputs_equal(tmp_path / "out" / "a.npz", irgrid.compile_model(FLOW_WARP)(items["a.npz"]))


@pytest.mark.parametrize("case", ["no_input_dir", "output_inside_input", "output_is_a_file", "bad_model", "actors",
                                  "threads", "clash", "too_many_actors", "too_many_threads"])
def test_usage_and_model_errors_are_one_line_exit_2(case, ray_session, tmp_path, capsys):
    (tmp_path / "in").mkdir()
    np.savez(tmp_path / "in" / "a.npz", x=np.zeros(1))
    model, extra = FLOW_WARP, []
    if case == "no_input_dir":
        extra, fragment = ["--input", tmp_path / "nowhere"], "is not a directory"
    elif case == "output_inside_input":
        extra, fragment = ["--output", tmp_path / "in" / "out"], "must not be inside --input"
    elif case == "output_is_a_file":
        (tmp_path / "out").write_text("")
        fragment = "is a file, not a directory"
    elif case == "bad_model":
        model, fragment = tmp_path / "missing.xml", "ParseError"
    elif case == "actors":
        extra, fragment = ["--actors", 0], "--actors must be at least 1"
    elif case == "threads":
        extra, fragment = ["-nthreads", 0], "-nthreads must be a positive integer"
    elif case == "clash":
        np.save(tmp_path / "in" / "a.npy", np.zeros(1))
        fragment = "would both write 'a.npz'"
    elif case == "too_many_actors":  # asks the running Ray session (one node, 2 CPUs)
        extra, fragment = ["--actors", 3], "needs 3 CPUs; the Ray cluster has 2"
    else:
        extra, fragment = ["-nthreads", 3], "no Ray node has that many CPUs (the largest has 2)"
    code, _, err = _batch(capsys, model, "--input", tmp_path / "in", "--output", tmp_path / "out", *extra)
    assert code == 2 and len(err.strip().splitlines()) == 1 and fragment in err, err
    if case not in ("output_is_a_file", "too_many_actors", "too_many_threads"):  # refused before any output
        assert not (tmp_path / "out").exists()


def test_a_failure_inside_ray_is_named_by_its_root_error(ray_session, flow_run, tmp_path):
    """What a worker node that cannot read the model raises: the actor dies in its constructor, and
    the CLI's line names irgrid's error rather than Ray's wrapper."""
    root, items, _ = flow_run
    with pytest.raises(ray.exceptions.RayError) as failure:
        list(irgrid_ray.run_files(tmp_path / "absent.xml", root / "in", tmp_path / "out", list(items)[:1],
                                  "irgrid", 1, 1))
    assert irgrid_ray.ray_failure_line(failure.value).startswith(f"ParseError: cannot read {tmp_path / 'absent.xml'}")


def test_without_ray_installed_it_says_what_to_install(tmp_path):
    code = f"""
import sys
sys.modules['ray'] = None  # as if Ray were not installed
from irgrid.cli import main
sys.exit(main(['batch', {str(FLOW_WARP)!r}, '--input', '.', '--output', 'out']))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert_one_line_error(proc, 2, "pip install 'irgrid[ray]'")
