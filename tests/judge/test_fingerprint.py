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


def test_a_change_in_the_last_byte_of_a_large_tensor_is_seen():
    x = torch.randn(3 << 20)  # 12 MiB: XXH3 reads it in stripes; the last one must count too
    before = fingerprint(x)
    x.view(torch.uint8)[-1] ^= 0x80
    assert fingerprint(x) != before
