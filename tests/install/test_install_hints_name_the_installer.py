"""A hint that says how to add the `mcp` extra or reinstall names the command of the
installer that made this environment (pipx, uv tool, install.sh, pip), read from the
receipts and folders those installers leave, and the distribution's own name."""

from __future__ import annotations

import shlex
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from git_checkpoint.install import installer
from git_checkpoint.install.installer import DIST, detect, extra_hint, reinstall_hint

ROOT = Path(__file__).resolve().parents[2]
PIN = installer.requirement("mcp")
QUOTED = shlex.quote(PIN)


def environment(path: Path, receipt: str | None = None, text: str = "") -> Path:
    (path / "bin").mkdir(parents=True)
    (path / "pyvenv.cfg").write_text("home = /usr/bin\n")
    if receipt is not None:
        (path / receipt).write_text(text)
    return path


def test_the_hints_name_the_distribution_pyproject_builds() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DIST != "git-checkpoint"  # that name is another project's


def test_the_mcp_pin_is_the_one_the_metadata_gives() -> None:
    try:
        metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{DIST} is not installed under its name here (./install.sh --dev)")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (wanted,) = project["optional-dependencies"]["mcp"]
    assert Requirement(PIN).specifier == Requirement(wanted).specifier
    assert Requirement(PIN).name == "mcp"


def test_pipx_by_its_receipt_and_by_its_folder(tmp_path: Path) -> None:
    by_receipt = environment(tmp_path / "tools" / DIST, "pipx_metadata.json", "{}")
    by_folder = environment(tmp_path / ".local/share/pipx/venvs" / DIST)
    for prefix in (by_receipt, by_folder):
        found = detect(prefix)
        assert found.kind == "pipx"
        assert extra_hint("mcp", found) == f"pipx inject {DIST} {QUOTED}"
        assert reinstall_hint(found) == f"reinstall it: pipx reinstall {DIST}"


def test_uv_tool_by_its_receipt_and_by_its_folder(tmp_path: Path) -> None:
    by_receipt = environment(tmp_path / "elsewhere" / DIST, "uv-receipt.toml", "[tool]\n")
    by_folder = environment(tmp_path / ".local/share/uv/tools" / DIST)
    for prefix in (by_receipt, by_folder):
        found = detect(prefix)
        assert found.kind == "uv tool"
        assert extra_hint("mcp", found).startswith(f"uv tool install --with {QUOTED} ")


def test_install_sh_by_its_receipt_names_the_clone(tmp_path: Path) -> None:
    prefix = environment(tmp_path / "venv", installer.INSTALL_SH_RECEIPT, "/src/my clone\n")
    found = detect(prefix)
    assert (found.kind, found.source) == ("install.sh", "/src/my clone")
    assert reinstall_hint(found) == "run ./install.sh again in '/src/my clone'"
    python = prefix / "bin" / "python"
    assert extra_hint("mcp", found) == f"{python} -m pip install '{DIST}[mcp]'"


def test_any_other_environment_is_pip_with_its_own_interpreter(tmp_path: Path) -> None:
    found = detect(environment(tmp_path / "venv"))
    assert found.kind == "pip"
    assert extra_hint("mcp", found) == f"{tmp_path}/venv/bin/python -m pip install '{DIST}[mcp]'"


def test_the_mcp_command_without_the_extra_names_the_command_that_adds_it(tmp_path: Path) -> None:
    """Run where `mcp` cannot be imported (None in sys.modules is how Python marks a
    module as missing), as in an environment installed without the extra."""
    code = "import sys\nsys.modules['mcp'] = None\nfrom git_checkpoint.entry.launch import main\n"
    proc = subprocess.run(
        [sys.executable, "-c", code + "main()", "mcp"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert f"the MCP server needs the mcp extra: {extra_hint('mcp')}" in proc.stdout + proc.stderr
