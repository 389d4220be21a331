"""The Ray executor against heads started as users start them, token authentication included.

Each head is a plain `ray start --head` on 127.0.0.1 (no `--block`), in a
home folder of its own. Ray 2.60 turns token authentication on for a head
whenever a token exists where it starts: here `~/.ray/auth_token`, made by
`ray get-auth-token --generate` as the Ray documentation says (any local
`ray.init()` writes the same file). Each driver is the real CLI in a
subprocess whose environment holds only PATH, HOME and the variables the
test names.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from itemshot.executors.loopback import LOOPBACK_SWITCH, free_port, session_processes
from itemshot.renderer.output import read_jsonl
from tests.conftest import ROOT, sample_subset
from tests.ray_faults import listening_addresses, wait_for_exit

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
RAY = BIN / "ray"
PATH = f"{BIN}{os.pathsep}/usr/bin{os.pathsep}/bin"
ITEMS = ("en-rainfall", "en-parabola")  # two sample items: 4 rows, 2 of them images
TOKEN_LINE = "the cluster requires a token; set RAY_AUTH_TOKEN"


class PlainHead:
    """A head started by `ray start --head` as a user runs it, stopped by its processes' ids.

    `ray start` returns once the head is up and leaves its daemons behind; they
    keep the session it was started in, so they are found, and killed, by that
    session alone (`ray stop` would end every Ray process on the machine).
    """

    def __init__(self, home: Path, temp_dir: Path) -> None:
        self.home = home
        self.temp_dir = temp_dir
        self.port = free_port()
        self.session = 0
        self.output = ""

    @property
    def address(self) -> str:
        """Return the head's address, `127.0.0.1:PORT`."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        """Run `ray start --head` on loopback; fail with its output if it does not start."""
        command = [
            str(RAY),
            "start",
            "--head",
            "--node-ip-address=127.0.0.1",
            f"--port={self.port}",
            "--include-dashboard=false",
            "--num-cpus=2",
            "--disable-usage-stats",
            f"--temp-dir={self.temp_dir}",
        ]
        # The loopback switch, as the README says for a cluster on 127.0.0.1: without
        # it Ray 2.60 binds the machine's own address despite --node-ip-address.
        env = {"PATH": PATH, "HOME": str(self.home), LOOPBACK_SWITCH: "0"}
        started = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # the head's daemons stay in this session
        )
        self.session = started.pid
        self.output, _ = started.communicate(timeout=300)
        if started.returncode != 0:
            self.stop()
            pytest.fail(f"ray start failed:\n{self.output}")

    def processes(self) -> list[int]:
        """Return the ids of the head's live processes."""
        return session_processes(self.session)

    def stop(self) -> None:
        """Kill every process of the head by its id and wait until they have all ended."""
        for _ in range(2):  # again for any worker the raylet started meanwhile
            pids = self.processes()
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
            assert wait_for_exit(pids, timeout=60) == []


@pytest.fixture(scope="module")
def token_head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlainHead]:
    """Start a head whose home holds a Ray token, so token authentication is on."""
    home = tmp_path_factory.mktemp("head-home")
    generated = subprocess.run(
        [str(RAY), "get-auth-token", "--generate"],
        env={"PATH": PATH, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert generated.returncode == 0, generated.stderr
    yield from _running(PlainHead(home, tmp_path_factory.mktemp("ray")))


@pytest.fixture(scope="module")
def open_head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlainHead]:
    """Start a head whose home holds no token, so it runs without authentication."""
    home = tmp_path_factory.mktemp("open-home")
    yield from _running(PlainHead(home, tmp_path_factory.mktemp("ray")))


def _running(head: PlainHead) -> Iterator[PlainHead]:
    head.start()
    try:
        yield head
    finally:
        head.stop()


@pytest.fixture(scope="module")
def design(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Write a 2 × 1 design (standard, vision at 4 options) over two sample items."""
    folder = tmp_path_factory.mktemp("design")
    items = sample_subset(folder, ITEMS)
    path = folder / "tiny.yaml"
    path.write_text(
        "name: tiny\n"
        f"dataset: {{path: {json.dumps(str(items))}}}\n"
        "factors:\n  format: [standard, vision]\n  n_options: [4]\n"
        "presentation: {scene: exam_sheet, font_style: regular}\n",
        encoding="utf-8",
    )
    return path


def sweep_on(
    address: str, design: Path, out: Path, home: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `itemshot sweep DESIGN --executor ray --address ADDRESS` with a clean environment."""
    command = [
        sys.executable,
        "-m",
        "itemshot.cli",
        "sweep",
        str(design),
        "--out",
        str(out),
        "--no-progress",
        "--executor",
        "ray",
        "--address",
        address,
        "--workers",
        "2",
    ]
    clean = {"PATH": PATH, "HOME": str(home), "NO_ALBUMENTATIONS_UPDATE": "1", **(env or {})}
    # From the checkout, so that it is this checkout's itemshot that runs.
    return subprocess.run(command, cwd=ROOT, env=clean, capture_output=True, text=True, timeout=600)


def assert_swept(done: subprocess.CompletedProcess[str], out: Path) -> None:
    """Assert that the sweep finished with every row of the design, quietly."""
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_jsonl(out / "manifest.jsonl")
    cells = sorted((row["item_id"], row["format"], row["n_options"]) for row in rows)
    assert cells == sorted((item, f, 4) for item in ITEMS for f in ("standard", "vision"))
    assert all(row["status"] == "ok" for row in rows)
    assert all((out / row["image"]).is_file() for row in rows if row["format"] == "vision")
    assert "InvalidAuthToken" not in done.stderr


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """Return the non-empty lines the command printed, both streams."""
    return [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


@pytest.mark.parametrize("source", ["default file", "RAY_AUTH_TOKEN"])
def test_a_sweep_runs_on_a_head_with_token_authentication(
    token_head: PlainHead, design: Path, tmp_path: Path, source: str
) -> None:
    addresses = listening_addresses(token_head.processes())
    assert {a.rsplit(":", 1)[0] for a in addresses} == {"127.0.0.1"}, addresses
    assert "Token authentication is enabled" in token_head.output
    token = (token_head.home / ".ray" / "auth_token").read_text(encoding="utf-8")
    if source == "default file":  # the head's own user on its machine
        home, env = token_head.home, {}
    else:  # a driver elsewhere, given the head's token
        home, env = tmp_path / "home", {"RAY_AUTH_TOKEN": token}
        home.mkdir()
    out = tmp_path / "out"
    assert_swept(sweep_on(token_head.address, design, out, home, env), out)


def test_a_driver_without_a_token_is_told_in_one_line_what_to_set(
    token_head: PlainHead, design: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = sweep_on(token_head.address, design, tmp_path / "out", home)
    assert done.returncode == 2
    [line] = error_lines(done)
    assert line.startswith(f"error: cannot connect to Ray at {token_head.address}: {TOKEN_LINE}")
    assert "RAY_AUTH_TOKEN_PATH" in line and "ray get-auth-token" in line


def test_a_driver_with_the_wrong_token_is_told_in_one_line(
    token_head: PlainHead, design: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    wrong = tmp_path / "token"
    wrong.write_text("0" * 64, encoding="utf-8")
    env = {"RAY_AUTH_TOKEN_PATH": str(wrong)}
    done = sweep_on(token_head.address, design, tmp_path / "out", home, env)
    assert done.returncode == 2
    [line] = error_lines(done)
    assert line.startswith(
        f"error: cannot connect to Ray at {token_head.address}: "
        f"the cluster refused the token from RAY_AUTH_TOKEN_PATH ({wrong})"
    )


def test_a_token_left_in_the_drivers_home_does_not_break_a_head_without_one(
    open_head: PlainHead, design: Path, tmp_path: Path
) -> None:
    # A local ray.init() once left ~/.ray/auth_token; this head runs without tokens.
    assert "Token authentication is disabled" in open_head.output
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text("1" * 64, encoding="utf-8")
    out = tmp_path / "out"
    assert_swept(sweep_on(open_head.address, design, out, home), out)


def test_nothing_listening_is_told_in_one_line(design: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    address = f"127.0.0.1:{free_port()}"  # no head: nothing listens there
    done = sweep_on(address, design, tmp_path / "out", home)
    assert done.returncode == 2
    [line] = error_lines(done)
    assert line.startswith(f"error: cannot connect to Ray at {address}: nothing answers there")
