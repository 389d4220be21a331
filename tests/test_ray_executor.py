"""The Ray executor on a real loopback Ray cluster: the same bytes as local, and faults that lose nothing.

One cluster (2 CPUs, every socket on 127.0.0.1, no dashboard) is started by
this module and stopped at its end. Faults are real: a render actor's
process killed by its PID, a Chromium browser killed inside an actor, the
driver killed with SIGKILL, a full disk (a small tmpfs).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import itemshot
from itemshot.executors.loopback import LoopbackCluster
from itemshot.executors.ray import RayExecutor
from itemshot.renderer.output import TEMP_PREFIX, read_jsonl
from tests.conftest import MIX_DATA, ROOT, TOOL_DATA, run_cli
from tests.ray_faults import (
    browser_processes,
    crashing_backend,
    listening_addresses,
    render_actor_processes,
    wait_for_exit,
)

pytestmark = pytest.mark.slow

ITEMS = 12  # items of the MMMU-Pro tool fixture (with their figures)
LOOK = {"scene": "exam_sheet", "capture": "scan", "severity": "light", "seed": 1}
CLI_LOOK = ("--scene", "exam_sheet", "--capture", "scan", "--severity", "light", "--seed", "1")


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    """Start a 2-CPU Ray cluster on loopback for this module; stop it (by its process group)."""
    with LoopbackCluster(cpus=2, env={"PYTHONPATH": str(ROOT)}) as running:
        yield running


@pytest.fixture(autouse=True)
def no_actor_outlives_its_test(cluster: LoopbackCluster) -> Iterator[None]:
    """After each test, its render actors end (Ray kills them when their run is done)."""
    yield
    actors = render_actor_processes(cluster.processes())
    assert wait_for_exit(actors, timeout=60) == [], "render actors outlived their run"


@pytest.fixture(scope="module")
def items() -> itemshot.api.Items:
    """Return the first items of the MMMU-Pro tool fixture."""
    return itemshot.load(TOOL_DATA, limit=ITEMS)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, items: Any) -> Path:
    """Return the output set of the local executor for the same jobs."""
    out = tmp_path_factory.mktemp("reference")
    run = itemshot.render(items, out, **LOOK, verify=False, progress=False)
    assert run.status == 0 and len(run.images) == ITEMS
    return out


def output_files(out: Path) -> dict[str, bytes]:
    """Return every image and sidecar of an output set by relative path."""
    return {
        str(path.relative_to(out)): path.read_bytes()
        for path in sorted((out / "images").iterdir())
        if not path.name.startswith(TEMP_PREFIX)
    }


def assert_same_set(out: Path, reference: Path) -> None:
    """Assert that two output sets hold the same files, byte for byte, and the same manifest."""
    mine, theirs = output_files(out), output_files(reference)
    assert mine.keys() == theirs.keys()
    assert [name for name in mine if mine[name] != theirs[name]] == []
    assert (out / "manifest.jsonl").read_bytes() == (reference / "manifest.jsonl").read_bytes()
    assert not list(out.rglob(TEMP_PREFIX + "*"))


def assert_loopback_only(cluster: LoopbackCluster) -> None:
    """Assert that every TCP socket the cluster and this driver listen on is on 127.0.0.1."""
    addresses = listening_addresses([*cluster.processes(), os.getpid()])
    assert addresses, "found no listening socket of the cluster"
    assert {a.rsplit(":", 1)[0] for a in addresses} == {"127.0.0.1"}, addresses


def render_on_ray(
    items: Any, out: Path, executor: RayExecutor, on_event: Any = None
) -> itemshot.RunResult:
    with executor:
        return itemshot.render(
            items, out, **LOOK, verify=False, progress=False, executor=executor, on_event=on_event
        )


def test_sweep_on_ray_gives_the_bytes_of_the_local_executor(
    cluster: LoopbackCluster, tmp_path: Path
) -> None:
    design = ROOT / "designs" / "mmmu_pro_2x2.yaml"
    common = ("sweep", design, "--dataset", MIX_DATA, "--limit", "40", "--no-progress")
    assert run_cli(*common, "--out", tmp_path / "local", "--workers", "1") == 0
    ray_args = ("--executor", "ray", "--address", cluster.address, "--workers", "2")
    assert run_cli(*common, "--out", tmp_path / "ray", *ray_args) == 0
    local, ray = output_files(tmp_path / "local"), output_files(tmp_path / "ray")
    assert len([name for name in local if name.endswith(".png")]) == 80  # 40 items x 4/10 options
    assert local.keys() == ray.keys()
    assert [name for name in local if local[name] != ray[name]] == []
    manifest = (tmp_path / "local" / "manifest.jsonl").read_bytes()
    assert (tmp_path / "ray" / "manifest.jsonl").read_bytes() == manifest
    # Nothing of the executor (hosts, processes, timings) enters a sidecar.
    sidecar = json.loads(next(v for k, v in ray.items() if k.endswith(".json")))
    assert set(sidecar["render"]) == {
        "backend",
        "browser",
        "renderer_version",
        "decor",
        "css_size",
        "device_scale",
    }


def render_with_a_fault(
    cluster: LoopbackCluster, items: Any, out: Path, fault: Callable[[], None]
) -> itemshot.RunResult:
    """Render on 2 actors, causing `fault` once when the first job is done; check nothing is lost."""
    caused: list[bool] = []

    def on_event(event: dict[str, Any]) -> None:
        if not caused and event["event"] == "ok":
            fault()
            caused.append(True)

    run = render_on_ray(items, out, RayExecutor(cluster.address, actors=2), on_event)
    assert caused and run.status == 0 and run.render is not None
    assert run.render.rendered == ITEMS and run.render.failed == 0
    return run


def test_a_killed_actor_process_loses_nothing(
    cluster: LoopbackCluster, items: Any, reference: Path, tmp_path: Path
) -> None:
    def kill_an_actor() -> None:
        assert_loopback_only(cluster)
        actors = render_actor_processes(cluster.processes())
        assert len(actors) == 2
        os.kill(actors[0], signal.SIGKILL)

    render_with_a_fault(cluster, items, tmp_path, kill_an_actor)
    assert_same_set(tmp_path, reference)


def test_a_chromium_crash_inside_an_actor_is_recovered(
    cluster: LoopbackCluster, items: Any, reference: Path, tmp_path: Path
) -> None:
    def crash_a_browser() -> None:
        actor = render_actor_processes(cluster.processes())[0]
        [browser] = browser_processes(actor)
        os.kill(browser, signal.SIGKILL)

    render_with_a_fault(cluster, items, tmp_path, crash_a_browser)
    assert_same_set(tmp_path, reference)


def test_a_job_that_keeps_crashing_chromium_is_recorded_failed(
    cluster: LoopbackCluster, items: Any, reference: Path, tmp_path: Path
) -> None:
    poison = items[2].id
    executor = RayExecutor(cluster.address, actors=2, pages=1, backend=crashing_backend(poison))
    run = render_on_ray(items, tmp_path, executor)
    assert run.status == 3
    [failed] = run.failed
    assert failed["item_id"] == poison
    # The actor's pool replaces the dying page and tries once more, then records
    # the job as the local executor would; the actor and its other jobs go on.
    assert failed["error"]["reason"] == "renderer_crashed", failed["error"]
    assert "died 2 times" in failed["error"]["message"]
    # Every other job is there, as the local executor made it; the failed one left nothing.
    mine, theirs = output_files(tmp_path), output_files(reference)
    poisoned = {name for name in theirs if Path(name).name.startswith(f"{poison}-")}
    assert len(poisoned) == 3  # the capture, its clean render and the sidecar
    assert mine.keys() == theirs.keys() - poisoned
    assert [name for name in mine if mine[name] != theirs[name]] == []
    rows = read_jsonl(tmp_path / "manifest.jsonl")
    assert [row["item_id"] for row in rows] == [item.id for item in items]


def _cli_render(out: Path, address: str) -> list[str]:
    return [
        "render",
        str(TOOL_DATA),
        "--out",
        str(out),
        "--limit",
        str(ITEMS),
        *CLI_LOOK,
        "--no-verify",
        "--no-progress",
        "--executor",
        "ray",
        "--address",
        address,
        "--workers",
        "2",
    ]


def test_a_killed_driver_resumes_to_the_same_files(
    cluster: LoopbackCluster, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    command = [sys.executable, "-m", "itemshot.cli", *_cli_render(out, cluster.address), "--events"]
    driver = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert driver.stdout is not None
    finished = 0
    for line in driver.stdout:
        finished += json.loads(line)["event"] == "ok"
        if finished == 4:
            driver.send_signal(signal.SIGKILL)  # the driver only; the cluster lives on
            break
    driver.wait()
    assert finished == 4 and driver.returncode == -signal.SIGKILL
    assert not (out / "manifest.jsonl").exists()

    assert run_cli(*_cli_render(out, cluster.address)) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["skipped"] >= 4 and summary["skipped"] + summary["rendered"] == ITEMS
    assert_same_set(out, reference)
    keys = [row["job_key"] for row in read_jsonl(out / "manifest.jsonl")]
    assert len(keys) == len(set(keys)) == ITEMS


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """Mount a 1 MiB tmpfs (room for about two jobs); unmount it afterwards."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill (needs root): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_full_disk_fails_with_one_clear_error_and_nothing_half_written(
    cluster: LoopbackCluster,
    reference: Path,
    small_disk: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = small_disk / "out"
    assert run_cli(*_cli_render(out, cluster.address)) == 5
    printed = capsys.readouterr().err
    assert printed.count("error:") == 1, printed
    assert "No space left on device" in " ".join(printed.split()), printed
    assert not list(out.rglob(TEMP_PREFIX + "*"))
    written = output_files(out)
    theirs = output_files(reference)
    assert written, "nothing was written before the disk filled"
    # Every file left is whole: the reference's bytes exactly.
    assert [name for name in written if written[name] != theirs.get(name)] == []

    # With room again, the same command finishes the set.
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    assert run_cli(*_cli_render(out, cluster.address)) == 0
    assert_same_set(out, reference)


def test_verification_on_ray_gives_the_local_verdicts(
    cluster: LoopbackCluster, reference: Path, tmp_path: Path
) -> None:
    local, ray = tmp_path / "local", tmp_path / "ray"
    shutil.copytree(reference, local)
    shutil.copytree(reference, ray)
    local_status = run_cli("verify", local, "--no-progress", "--workers", "2")
    ray_args = ("--executor", "ray", "--address", cluster.address)
    assert run_cli("verify", ray, "--no-progress", *ray_args) == local_status
    assert (ray / "manifest.jsonl").read_bytes() == (local / "manifest.jsonl").read_bytes()
    verdicts = [row["verdict"] for row in read_jsonl(ray / "manifest.jsonl")]
    assert len(verdicts) == ITEMS and set(verdicts) <= {"pass", "fail"}


def test_the_cli_refuses_an_address_without_the_ray_executor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run_cli(
        "render", TOOL_DATA, "--out", tmp_path, "--limit", "1", "--address", "127.0.0.1:1"
    )
    assert status == 2
    assert "needs the ray executor" in capsys.readouterr().err


def test_the_local_executor_needs_no_ray(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from itemshot.cli import main\n"
        f"status = main(['render', {str(TOOL_DATA)!r}, '--out', {str(tmp_path)!r}, "
        "'--limit', '1', '--no-verify', '--no-progress'])\n"
        "assert status == 0, status\n"
        "assert 'ray' not in sys.modules, 'the local executor imported ray'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
