"""The NPU worker image pins versions that go together.

data/torch_npu_compatibility.txt holds Ascend/pytorch COMPATIBILITY.md's rows; the op-plugin branch
(the second half of the GitCode branch) must be one that registers npu_sparse_flash_attention_grad:
Ascend/op-plugin's branches 7.3.0, 26.0.0 and 26.1.0 do (op_plugin/config/op_plugin_functions.yaml,
`op_api: all_version`); 7.2.0 does not.
"""

from __future__ import annotations

import re

from tests.judge.npu.conftest import DATA, REPO

DOCKERFILE = (REPO / "docker" / "worker-npu" / "Dockerfile").read_text()
ROWS = [tuple(cell.strip() for cell in line.split("|"))
        for line in (DATA / "torch_npu_compatibility.txt").read_text().splitlines() if line and line[0] != "#"]
OP_PLUGIN_WITH_SFAG = {"7.3.0", "26.0.0", "26.1.0"}


def _arg(name: str) -> str:
    match = re.search(rf"^ARG {name}=(\S+)$", DOCKERFILE, re.M)
    assert match, name
    return match.group(1)


def test_the_image_pins_a_pair_of_the_compatibility_table() -> None:
    cann = re.search(r"/cann:(\d+\.\d+\.\w+)-", _arg("CANN_IMAGE"))
    assert cann, _arg("CANN_IMAGE")
    pinned = (_arg("TORCH_NPU_VERSION"), _arg("TORCH_VERSION"), cann.group(1))
    table = {(npu, torch, cann_version): branch for npu, branch, torch, cann_version in ROWS}
    assert pinned in table, f"{pinned} is no row of COMPATIBILITY.md"
    assert table[pinned].rsplit("-", 1)[1] in OP_PLUGIN_WITH_SFAG, "that torch_npu has no vendor operator"


def test_the_old_pin_was_no_pair() -> None:
    assert ("2.7.1", "2.7.1", "8.5.0") not in {(n, t, c) for n, _, t, c in ROWS}


def _torch_install_for(arch: str) -> list[str]:
    """The pip commands the image's torch step runs on `arch`: its shell, run with `uname -m` faked."""
    import subprocess

    step = re.search(r'^RUN (case "\$\(uname -m\)".*?)\n &&', DOCKERFILE, re.M | re.S)
    assert step, "the torch step chooses by architecture"
    script = step.group(1).replace("\\\n", "\n").rstrip().rstrip("\\")
    script = script.replace('"$(uname -m)"', f'"{arch}"').replace("$(uname -m)", arch)
    fake = f'pip() {{ echo "pip $*"; }}\nTORCH_VERSION={_arg("TORCH_VERSION")}\n'
    tail = '\npip install ${torch_index} "${torch_spec}"\n'
    done = subprocess.run(["bash", "-c", fake + script + tail], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


README = [line for line in (DATA / "torch_npu_readme_install.txt").read_text().splitlines() if line[:1] != "#"]


def _readme_command(arch: str) -> list[str]:
    return README[README.index(f"**For {arch}:**") + 1].split()[2:]  # after "pip3 install"


def test_x86_installs_the_cpu_torch_from_pytorchs_cpu_index() -> None:
    # torch_npu's README (data/torch_npu_readme_install.txt): on x86 the +cpu wheel of PyTorch's index.
    words = _torch_install_for("x86_64")
    for word in _readme_command("x86"):
        assert word in words, (word, words)
    assert "torch==2.7.1+cpu" in words
    assert words[words.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"


def test_aarch64_installs_pypis_torch() -> None:
    words = _torch_install_for("aarch64")
    assert set(_readme_command("Aarch64")) <= set(words)
    assert "torch==2.7.1" in words and "--index-url" not in words
