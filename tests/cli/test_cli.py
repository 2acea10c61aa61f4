"""The `irgrid` command line, run as a subprocess (`python -m irgrid`) from a temporary directory so the
source tree does not shadow the installed package."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from lxml import etree

import irgrid
from oracles import assert_one_line_error, prior_grid_network, run_cli, save_ov

PRIORS = np.array([[-8.5, -4.5, 8.5, 4.5], [-3.0, -6.0, 3.0, 6.0], [-1.25, -1.25, 1.25, 1.25]], np.float32)
FEAT_SHAPE, IMAGE_SHAPE = (1, 4, 6, 10), (1, 3, 48, 80)


@pytest.fixture
def work(tmp_path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


@pytest.fixture
def prior_grid_model(work) -> Path:
    """priors (Parameter) + feat + image -> prior grid (h=4 of 6 rows) and ShapeOf(image)."""
    b, priors, _, _ = prior_grid_network("pg", PRIORS.shape, FEAT_SHAPE, IMAGE_SHAPE, h=4)
    (scale,) = b.layer("Multiply", "opset1", [priors, b.const(np.float32(2.0))], {"auto_broadcast": "numpy"},
                       name="scaled")
    b.result(scale, "scaled_out")
    return b.save(work / "pg.xml")


def _inputs():
    rng = np.random.default_rng(0)
    return {"priors": PRIORS, "feat": rng.normal(size=FEAT_SHAPE).astype(np.float32),
            "image": rng.normal(size=IMAGE_SHAPE).astype(np.float32)}


def _written_rows() -> int:
    return 4 * FEAT_SHAPE[3] * PRIORS.shape[0]


def _check_outputs(saved: dict, model: Path, inputs: dict, ov_run) -> None:
    """Saved outputs equal irgrid.compile_model's own run and OpenVINO's."""
    own = irgrid.compile_model(model)(inputs)
    assert list(saved) == list(own) == ["pg", "scaled"]
    for name in own:
        np.testing.assert_array_equal(saved[name], own[name])
    ov_out = ov_run(str(model), [inputs["priors"], inputs["feat"], inputs["image"]])
    n = _written_rows()
    np.testing.assert_array_equal(saved["pg"][:n], ov_out[0][:n])
    assert np.all(saved["pg"][n:] == 0)
    np.testing.assert_array_equal(saved["scaled"], ov_out[1])


# ---------------------------------------------------------------------------------------------
# infer
# ---------------------------------------------------------------------------------------------


def _closing_block(stdout: str) -> dict[str, str]:
    """benchmark_app's closing block: {'Count': '10 iterations', 'Median': '1.234 ms', ...}."""
    fields = {}
    for line in stdout.splitlines()[stdout.splitlines().index("Latency:") - 3:]:
        key, _, value = line.strip().partition(":")
        fields[key] = value.strip()
    return fields


def test_infer_random_inputs_prints_table_and_latency(prior_grid_model, work):
    proc = run_cli("infer", prior_grid_model, cwd=work)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Device: irgrid (supports every layer)"
    assert lines[1] == "Inputs: random (seed 0)"
    assert lines[2].startswith("First inference took ") and lines[2].endswith(" ms")
    assert lines[3].split()[:3] == ["output", "shape", "dtype"]
    rows = {line.split()[0]: line for line in lines[4:6]}
    assert set(rows) == {"pg", "scaled"}
    assert "[180, 4]" in rows["pg"] and "float32" in rows["pg"]
    assert "[3, 4]" in rows["scaled"]
    block = _closing_block(proc.stdout)
    assert list(block) == ["Threads", "Count", "Duration", "Latency", "Median", "Average", "Min", "Max",
                           "Throughput"]
    assert block["Count"] == "10 iterations"  # the first (cold) inference is reported apart
    latency = {k: float(block[k].removesuffix(" ms")) for k in ("Median", "Average", "Min", "Max")}
    assert 0 < latency["Min"] <= latency["Median"] <= latency["Max"]
    assert latency["Min"] <= latency["Average"] <= latency["Max"]
    duration = float(block["Duration"].removesuffix(" ms"))
    assert duration >= 10 * latency["Min"]
    assert float(block["Throughput"].removesuffix(" FPS")) == pytest.approx(10 / duration * 1e3, rel=0.01)
    assert proc.stderr.strip() == ""


def test_infer_model_by_option(prior_grid_model, work):
    proc = run_cli("infer", "-m", prior_grid_model, "-niter", 1, "-o", work / "m.npz", cwd=work)
    assert proc.returncode == 0, proc.stderr
    positional = run_cli("infer", prior_grid_model, "-niter", 1, "-o", work / "p.npz", cwd=work)
    assert positional.returncode == 0, positional.stderr
    with np.load(work / "m.npz") as by_option, np.load(work / "p.npz") as by_path:
        for name in ("pg", "scaled"):
            np.testing.assert_array_equal(by_option[name], by_path[name])
    assert_one_line_error(run_cli("infer", prior_grid_model, "-m", prior_grid_model, cwd=work), 2, "-m")
    assert_one_line_error(run_cli("infer", "-niter", 1, cwd=work), 2, "-m")


@pytest.mark.parametrize("sep", ["=", ":"])
def test_infer_named_npy_inputs_and_output_npz(prior_grid_model, work, ov_run, sep):
    inputs = _inputs()
    args = []
    for name, value in inputs.items():
        np.save(work / f"{name}.npy", value)
        args += ["-i", f"{name}{sep}{work / (name + '.npy')}"]
    proc = run_cli("infer", prior_grid_model, *args, "-o", work / "out.npz", "-niter", 2, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == "Inputs: " + ", ".join(args[1::2])
    assert "Saved outputs to" in proc.stdout
    with np.load(work / "out.npz") as saved:
        _check_outputs({k: saved[k] for k in saved.files}, prior_grid_model, inputs, ov_run)


def test_infer_npz_inputs(prior_grid_model, work, ov_run):
    inputs = _inputs()
    np.savez(work / "inputs_custom.npz", **inputs)
    proc = run_cli("infer", prior_grid_model, "-i", work / "inputs_custom.npz", "-o", work / "out.npz",
                   "-niter", 1, cwd=work)
    assert proc.returncode == 0, proc.stderr
    with np.load(work / "out.npz") as saved:
        _check_outputs({k: saved[k] for k in saved.files}, prior_grid_model, inputs, ov_run)


def test_infer_niter_and_nthreads(prior_grid_model, work):
    proc = run_cli("infer", prior_grid_model, "-niter", 3, "-nthreads", 1, cwd=work)
    assert proc.returncode == 0, proc.stderr
    block = _closing_block(proc.stdout)
    assert block["Count"] == "3 iterations" and block["Threads"] == "1"
    proc = run_cli("infer", prior_grid_model, "-niter", 1, cwd=work, env={"IRGRID_NUM_THREADS": "2"})
    assert proc.returncode == 0, proc.stderr
    block = _closing_block(proc.stdout)
    assert block["Count"] == "1 iterations" and block["Threads"] == "2"


def test_infer_time_limit(prior_grid_model, work):
    proc = run_cli("infer", prior_grid_model, "-t", 0.3, cwd=work)
    assert proc.returncode == 0, proc.stderr
    block = _closing_block(proc.stdout)
    count = int(block["Count"].split()[0])
    duration = float(block["Duration"].removesuffix(" ms"))
    assert count >= 1 and duration >= 300
    assert float(block["Throughput"].removesuffix(" FPS")) == pytest.approx(count / duration * 1e3, rel=0.01)


def test_infer_nthreads_results_identical(prior_grid_model, work):
    inputs = _inputs()
    np.savez(work / "in.npz", **inputs)
    outs = []
    for n in (1, 2):
        proc = run_cli("infer", prior_grid_model, "-i", work / "in.npz", "-nthreads", n, "-niter", 1,
                       "-o", work / f"out{n}.npz", cwd=work)
        assert proc.returncode == 0, proc.stderr
        with np.load(work / f"out{n}.npz") as saved:
            outs.append(saved["pg"])
    np.testing.assert_array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))


SCALE = np.array([1.0, -2.0, 0.5], np.float32).reshape(3, 1, 1)


@pytest.fixture
def dynamic_model(work) -> Path:
    x = ops.parameter(ov.PartialShape([-1, 3, -1, -1]), np.float32, name="x")
    y = ops.multiply(x, ops.constant(SCALE))
    y.output(0).get_tensor().set_names({"y"})
    return save_ov(ov.Model([ops.result(y)], [x], "dyn"), work, "dyn")


def test_infer_with_shape(dynamic_model, work, ov_core):
    data = np.random.default_rng(1).normal(size=(2, 3, 5, 7)).astype(np.float32)
    np.save(work / "x.npy", data)
    proc = run_cli("infer", dynamic_model, "-shape", "x[2,3,5,7]", "-i", f"x={work / 'x.npy'}",
                   "-o", work / "out.npz", "-niter", 1, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "[2, 3, 5, 7]" in proc.stdout
    ov_model = ov_core.read_model(str(dynamic_model))
    ov_model.reshape([2, 3, 5, 7])
    compiled = ov_core.compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    with np.load(work / "out.npz") as saved:
        np.testing.assert_array_equal(saved["y"], compiled([data])[compiled.outputs[0]])
        np.testing.assert_array_equal(saved["y"], data * SCALE)


@pytest.mark.parametrize("shape", ["x[1,3,4,4]", "[1,3,4,4]"])
def test_infer_shape_gives_random_inputs_a_shape(dynamic_model, work, shape):
    proc = run_cli("infer", dynamic_model, "-shape", shape, "-niter", 1, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == "Inputs: random (seed 0)"
    assert "[1, 3, 4, 4]" in proc.stdout


def test_check_unnamed_shape(dynamic_model, work):
    proc = run_cli("check", dynamic_model, "-shape", "[2,4,8,8]", "--json", cwd=work)
    assert proc.returncode == 1
    assert [p["layer_type"] for p in json.loads(proc.stdout)["problems"]] == ["Multiply"]


def test_infer_unnamed_shape_needs_a_single_input(prior_grid_model, work):
    assert_one_line_error(run_cli("infer", prior_grid_model, "-shape", "[1,4]", cwd=work), 2, "name")


def test_infer_inputs_npz_beside_the_model_and_what_wins(dynamic_model, work):
    x = np.full((1, 3, 2, 2), 2.0, np.float32)
    np.savez(work / "inputs.npz", x=x)
    proc = run_cli("infer", dynamic_model, "-niter", 1, "-o", work / "beside.npy", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == "Inputs: inputs.npz beside the model"
    np.testing.assert_array_equal(np.load(work / "beside.npy"), x * SCALE)
    proc = run_cli("infer", dynamic_model, "-niter", 1, "-shape", "x[2,3,5,5]", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == ("Inputs: random (seed 0); inputs.npz beside the model not used "
                                           "(-shape given)")
    assert "[2, 3, 5, 5]" in proc.stdout
    np.save(work / "own.npy", np.zeros((1, 3, 1, 1), np.float32))
    proc = run_cli("infer", dynamic_model, "-niter", 1, "-i", f"x:{work / 'own.npy'}", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == f"Inputs: x:{work / 'own.npy'}"
    assert "[1, 3, 1, 1]" in proc.stdout


def test_infer_huge_shape_is_one_line(dynamic_model, work):
    proc = run_cli("infer", dynamic_model, "-shape", "x[1,3,99999999999,2]", cwd=work)
    assert_one_line_error(proc, 2, "ShapeError", "GiB")
    proc = run_cli("infer", dynamic_model, "-shape", "x[1,3,99999999999999999999,2]", cwd=work)
    assert_one_line_error(proc, 2, "InputError", "has a dim of 2**63 - 1 or more")


def test_infer_output_npy(dynamic_model, prior_grid_model, work):
    np.save(work / "x.npy", np.ones((1, 3, 2, 2), np.float32))
    proc = run_cli("infer", dynamic_model, "-i", work / "x.npy", "-niter", 1, "-o", work / "y.npy", cwd=work)
    assert proc.returncode == 0, proc.stderr
    saved = np.load(work / "y.npy")
    np.testing.assert_array_equal(saved, np.broadcast_to(SCALE, (1, 3, 2, 2)))
    assert_one_line_error(run_cli("infer", prior_grid_model, "-o", work / "y.npy", cwd=work), 2, ".npz")
    np.testing.assert_array_equal(np.load(work / "y.npy"), saved)  # refused before anything was written
    assert_one_line_error(run_cli("infer", prior_grid_model, "-o", work / "y.txt", cwd=work), 2, ".npy")
    assert not (work / "y.txt").exists()


def test_infer_dynamic_without_shape_is_an_error(dynamic_model, work):
    assert_one_line_error(run_cli("infer", dynamic_model, "-niter", 1, cwd=work), 2, "x")


# ---------------------------------------------------------------------------------------------
# infer errors: one line on stderr, exit 2
# ---------------------------------------------------------------------------------------------


def test_infer_wrong_input_dtype(prior_grid_model, work):
    inputs = _inputs()
    inputs["feat"] = inputs["feat"].astype(np.float64)
    np.savez(work / "bad.npz", **inputs)
    assert_one_line_error(run_cli("infer", prior_grid_model, "-i", work / "bad.npz", cwd=work), 2,
                          "InputError", "feat")


def test_infer_wrong_input_shape(prior_grid_model, work):
    inputs = _inputs()
    inputs["image"] = inputs["image"][:, :, :10]
    np.savez(work / "bad.npz", **inputs)
    assert_one_line_error(run_cli("infer", prior_grid_model, "-i", work / "bad.npz", cwd=work), 2,
                          "InputError", "image")


def test_infer_missing_input_file(prior_grid_model, work):
    assert_one_line_error(run_cli("infer", prior_grid_model, "-i", "priors=nope.npy", cwd=work), 2, "nope.npy")


def test_infer_unnamed_npy_with_several_inputs(prior_grid_model, work):
    np.save(work / "p.npy", PRIORS)
    assert_one_line_error(run_cli("infer", prior_grid_model, "-i", work / "p.npy", cwd=work), 2)


@pytest.mark.parametrize("args", [["-nthreads", "0"], ["-niter", "0"], ["-nthreads", "two"],
                                  ["-shape", "x[1,a]"], ["-shape", "nonsense"], ["--bogus"],
                                  ["-hint", "latency"], ["-nit", "1"], ["-t", "0"], ["-t", "1", "-niter", "2"],
                                  ["-t", "inf"], ["-t", "nan"], ["-nthreads", "10000000000"]])
def test_infer_bad_arguments(prior_grid_model, work, args):
    assert_one_line_error(run_cli("infer", prior_grid_model, *args, cwd=work, timeout=30), 2)


@pytest.mark.parametrize("variable", ["IRGRID_NUM_THREADS", "OMP_NUM_THREADS"])
def test_infer_thread_variable_beyond_a_c_int(prior_grid_model, work, variable):
    """OpenMP takes an int: 2**32 + 1 threads is refused by name, not an OverflowError traceback."""
    proc = run_cli("infer", prior_grid_model, "-niter", "1", cwd=work, env={variable: "4294967297"})
    assert_one_line_error(proc, 2, "ConfigError", variable)


@pytest.mark.parametrize("command", [["infer", ""], ["check", ""], ["infer", "-m", ""]])
def test_empty_model_path(work, command):
    assert_one_line_error(run_cli(*command, cwd=work), 2, "the model path is empty")


def _corrupt_input_files(work: Path) -> dict[str, Path]:
    """Input files broken in each way np.load fails on, beside a valid .npy's bytes."""
    buffer = io.BytesIO()
    np.save(buffer, np.zeros((1, 4, 6, 10), np.float32))
    valid = buffer.getvalue()
    files = {"empty.npy": b"", "empty.npz": b"", "not_a_zip.npz": b"PK\x03\x04" + bytes(100)}
    for name, content in files.items():
        (work / name).write_bytes(content)
    np.savez(work / "objects.npz", feat=np.array([1, "a", None], dtype=object))
    with zipfile.ZipFile(work / "truncated.npz", "w") as archive:
        archive.writestr("feat.npy", valid[:200])
    with zipfile.ZipFile(work / "deflated.npz", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("feat.npy", valid)
    raw = bytearray((work / "deflated.npz").read_bytes())
    raw[60:70] = b"\xff" * 10  # inside the compressed member
    (work / "deflated.npz").write_bytes(bytes(raw))
    header = valid[:valid.index(b"\n") + 1].replace(b"(1, 4, 6, 10)", b"(1000000, 1000000, 1000)")
    with zipfile.ZipFile(work / "huge.npz", "w") as archive:
        archive.writestr("feat.npy", header)
    return {p.name: p for p in work.iterdir() if p.suffix in (".npy", ".npz")}


def test_infer_corrupt_input_files(prior_grid_model, work):
    """Each broken -i file (and a broken inputs.npz beside the model) is one InputError line naming it
    (a shape too large for memory a ShapeError, as everywhere): the same reader as `irgrid batch`
    (irgrid.npz.read_arrays)."""
    for name, path in _corrupt_input_files(work).items():
        spec = f"feat={path}" if name.endswith(".npy") else path
        proc = run_cli("infer", prior_grid_model, "-niter", "1", "-i", spec, cwd=work)
        assert_one_line_error(proc, 2, "ShapeError" if name == "huge.npz" else "InputError", name)
    beside = prior_grid_model.with_name("inputs.npz")
    beside.write_bytes(b"PK\x03\x04" + bytes(100))
    assert_one_line_error(run_cli("infer", prior_grid_model, "-niter", "1", cwd=work), 2, "InputError", "inputs.npz")


def test_error_naming_a_layer_with_a_newline_is_one_line(prior_grid_model, work):
    """A name from the XML cannot split the error into lines (or forge one): control characters are
    escaped, in `infer`'s error and in `check`'s problem lines."""
    root = etree.fromstring(prior_grid_model.read_bytes())
    layer = root.find(".//layer[@name='pg']")
    layer.set("name", "pg\nirgrid: a forged line")
    layer.find("data").set("flatten", "maybe")
    path = work / "newline.xml"
    path.write_bytes(etree.tostring(root))
    path.with_suffix(".bin").write_bytes(prior_grid_model.with_suffix(".bin").read_bytes())
    err = assert_one_line_error(run_cli("infer", path, cwd=work), 2, "LayerAttributeError")
    assert "pg\\nirgrid: a forged line" in err
    proc = run_cli("check", path, cwd=work)
    assert proc.returncode == 1 and len(proc.stdout.strip().splitlines()) == 2, proc.stdout


def test_infer_unknown_shape_name(prior_grid_model, work):
    assert_one_line_error(run_cli("infer", prior_grid_model, "-shape", "nope[1,2]", cwd=work), 2, "nope")


def test_infer_missing_model(work):
    assert_one_line_error(run_cli("infer", work / "missing.xml", cwd=work), 2, "missing.xml")


def test_infer_run_time_failure(work):
    a = ops.parameter([3], np.int32, name="a")
    b = ops.parameter([3], np.int32, name="b")
    y = ops.divide(a, b)
    y.output(0).get_tensor().set_names({"q"})
    model = save_ov(ov.Model([ops.result(y)], [a, b], "div"), work, "div")
    np.savez(work / "zeros.npz", a=np.array([1, 2, 3], np.int32), b=np.array([1, 0, 1], np.int32))
    assert_one_line_error(run_cli("infer", model, "-i", work / "zeros.npz", cwd=work), 2, "Divide")


def test_infer_output_to_missing_directory(prior_grid_model, work):
    proc = run_cli("infer", prior_grid_model, "-niter", 1, "-o", work / "no_such_dir" / "out.npz", cwd=work)
    assert_one_line_error(proc, 2, "no_such_dir")


def test_no_command(work):
    assert_one_line_error(run_cli(cwd=work), 2)


def test_unknown_command(work):
    assert_one_line_error(run_cli("frobnicate", cwd=work), 2)


# ---------------------------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------------------------


def _break_two_dims(model: Path, work: Path) -> Path:
    root = etree.fromstring(model.read_bytes())
    root.find(".//layer[@name='pg']/output/port/dim").text = "999"
    root.find(".//layer[@name='scaled']/output/port").findall("dim")[1].text = "5"
    bad = work / "bad.xml"
    bad.write_bytes(etree.tostring(root))
    bad.with_suffix(".bin").write_bytes(model.with_suffix(".bin").read_bytes())
    return bad


def test_check_clean(prior_grid_model, work):
    for args in ([prior_grid_model], ["-m", prior_grid_model]):
        proc = run_cli("check", *args, cwd=work)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"{prior_grid_model}: 0 problems"


def test_check_problems_exit_1(prior_grid_model, work):
    bad = _break_two_dims(prior_grid_model, work)
    proc = run_cli("check", bad, cwd=work)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[-1].endswith("2 problems")
    assert any('ExperimentalDetectronPriorGridGenerator layer "pg"' in line and "port 3" in line for line in lines)
    assert any('Multiply layer "scaled"' in line and "port 2" in line for line in lines)


def test_check_json(prior_grid_model, work):
    bad = _break_two_dims(prior_grid_model, work)
    proc = run_cli("check", bad, "--json", cwd=work)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["model"] == str(bad)
    assert {(p["layer_name"], p["layer_type"], p["port"]) for p in report["problems"]} == {
        ("pg", "ExperimentalDetectronPriorGridGenerator", 3), ("scaled", "Multiply", 2)}
    clean = run_cli("check", prior_grid_model, "--json", cwd=work)
    assert clean.returncode == 0 and json.loads(clean.stdout)["problems"] == []


def test_check_with_shape(dynamic_model, work):
    proc = run_cli("check", dynamic_model, "-shape", "x[2,3,8,8]", cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_cli("check", dynamic_model, "-shape", "x[2,4,8,8]", "--json", cwd=work)
    assert proc.returncode == 1
    assert [p["layer_type"] for p in json.loads(proc.stdout)["problems"]] == ["Multiply"]


def test_check_unreadable_model(work):
    bad = work / "broken.xml"
    bad.write_text("<net version='11'><layers>")
    assert_one_line_error(run_cli("check", bad, cwd=work), 2, "ParseError")
    assert_one_line_error(run_cli("check", work / "absent.xml", cwd=work), 2, "absent.xml")


def test_check_names_every_unsupported_layer(work):
    """Binding is a pass that collects every problem: five unknown layer types and a bad attribute
    are all reported (text and --json), and the layers downstream of them are not blamed."""
    x = ops.parameter([2, 3], np.float32, name="x")
    y = x
    for _ in range(5):
        y = ops.multiply(y, ops.constant(np.float32(2.0)))
    z = ops.reshape(x, ops.constant(np.array([3, 2], np.int64)), special_zero=False)
    path = save_ov(ov.Model([ops.result(y), ops.result(z)], [x], "unsupported"), work)
    text = path.read_text()
    for k in range(5):
        text = text.replace('type="Multiply"', f'type="Frobnicate{k}"', 1)
    path.write_text(text.replace('special_zero="false"', 'special_zero="maybe"'))
    proc = run_cli("check", path, cwd=work)
    assert proc.returncode == 1, proc.stderr
    for k in range(5):
        assert f"operator type 'Frobnicate{k}' is not supported by irgrid" in proc.stdout
    assert "special_zero='maybe' is not a boolean" in proc.stdout and ": 6 problems" in proc.stdout
    problems = json.loads(run_cli("check", path, "--json", cwd=work).stdout)["problems"]
    assert sorted(p["layer_type"] for p in problems) == [*(f"Frobnicate{k}" for k in range(5)), "Reshape"]
    assert sorted(p["kind"] for p in problems) == ["layerattribute"] + ["unsupportedlayer"] * 5
    assert_one_line_error(run_cli("infer", path, cwd=work), 2, "Error: ")  # infer stops at the first


def test_check_bad_arguments(prior_grid_model, work):
    assert_one_line_error(run_cli("check", cwd=work), 2)
    assert_one_line_error(run_cli("check", prior_grid_model, "-shape", "feat[1,?x]", cwd=work), 2)


def test_config_and_ops(work):
    proc = run_cli("config", cwd=work, env={"IRGRID_NUM_THREADS": "3"})
    assert proc.returncode == 0
    assert irgrid.__version__ in proc.stdout and "threads: 3" in proc.stdout and "openmp" in proc.stdout
    proc = run_cli("ops", cwd=work)
    assert proc.returncode == 0
    assert "ExperimentalDetectronPriorGridGenerator" in proc.stdout and "Cython" in proc.stdout


def test_closed_stdout_is_no_traceback(work):
    """`irgrid ops | head -1`: the reader has gone before irgrid writes; exit 1 with nothing on stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "irgrid", "ops"], cwd=work, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (1, "")


def test_infer_output_named_file_is_saved(work):
    """An output tensor may be called anything, including `file` (np.savez's own parameter name)."""
    x = ops.parameter([2], np.float32, name="x")
    y = ops.add(x, ops.constant(np.float32(1.0)))
    y.output(0).get_tensor().set_names({"file"})
    model = save_ov(ov.Model([ops.result(y)], [x], "named_file"), work, "named_file")
    np.save(work / "x.npy", np.array([1.0, 2.0], np.float32))
    proc = run_cli("infer", model, "-i", work / "x.npy", "-niter", 1, "-o", work / "out.npz", cwd=work)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    with np.load(work / "out.npz") as saved:
        np.testing.assert_array_equal(saved["file"], [2.0, 3.0])


@pytest.mark.parametrize("name", ["out.npz", "out.npy"])
def test_an_interrupted_write_leaves_the_previous_outputs(tmp_path, monkeypatch, name):
    """`-o` (and `irgrid batch`) write under a temporary name and rename it: Ctrl-C while writing left a
    truncated file in place of the previous one."""
    from irgrid import npz

    path = str(tmp_path / name)
    npz.save_outputs(path, {"y": np.arange(4.0)})
    before = Path(path).read_bytes()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np.lib.format, "write_array", interrupted)
    monkeypatch.setattr(np, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        npz.save_outputs(path, {"y": np.arange(1000.0)})
    assert Path(path).read_bytes() == before and os.listdir(tmp_path) == [name]
