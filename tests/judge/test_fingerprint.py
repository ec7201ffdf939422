import torch

from judge.fingerprint import fingerprint


def test_cpu_fingerprint_sees_one_bit():
    x = torch.randn(1000)
    before = fingerprint(x)
    assert fingerprint(x.clone()) == before
    x.view(torch.int32)[500] ^= 1
    assert fingerprint(x) != before


def test_bf16_and_int_tensors():
    x = torch.randn(7).to(torch.bfloat16)
    assert fingerprint(x) == fingerprint(x.clone())
    assert fingerprint(torch.arange(5, dtype=torch.int32)) != fingerprint(torch.arange(1, 6, dtype=torch.int32))
