"""The NPU worker image pins versions that go together (issue 14, item 6).

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
