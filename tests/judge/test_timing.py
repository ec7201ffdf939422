from judge.timing import CheckSampler, sem_ratio, stats


def test_sampler_checks_exactly_one_per_block():
    sampler = CheckSampler(4)
    picks = [sampler.next() for _ in range(400)]
    for block in range(100):
        assert sum(picks[block * 4 : block * 4 + 4]) == 1


def test_sampler_positions_vary():
    sampler = CheckSampler(4)
    positions = set()
    for _ in range(200):
        block = [sampler.next() for _ in range(4)]
        positions.add(block.index(True))
    assert positions == {0, 1, 2, 3}


def test_stats_and_sem():
    s = stats([10, 20, 30, 40])
    assert (s.median_ns, s.mean_ns, s.min_ns, s.count) == (25, 25, 10, 4)
    assert sem_ratio([100] * 10) == 0
    assert sem_ratio([100]) == float("inf")
    assert sem_ratio([90, 110] * 50) < sem_ratio([90, 110] * 5)


def test_physical_floor():
    from judge.timing import below_physical_floor

    # 1 GFLOP at 1 TFLOP/s takes at least 1 ms.
    assert below_physical_floor(1e9, 1e12, 0.9e6)
    assert not below_physical_floor(1e9, 1e12, 1.1e6)
    assert not below_physical_floor(1e9, 0.0, 1.0)  # no peak known: no floor


def test_paired_ratio_ignores_bursts_that_hit_both():
    from judge.timing import paired_ratio

    # A slow burst hits pairs 3-5 for both kernels; the submission is always 2x the baseline.
    sub = [20, 20, 200, 200, 200, 20, 20]
    base = [10, 10, 100, 100, 100, 10, 10]
    assert paired_ratio(sub, base) == 2.0
    # Bursts that hit only some pairs move the median of the pairs, not of each kernel alone.
    assert paired_ratio([10, 10, 10, 100, 10], [10, 10, 10, 10, 100]) == 1.0
