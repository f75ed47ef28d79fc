"""Bucket choice and padding arithmetic of kernelab.graphs (the capture itself is a GPU test)."""

import pytest

from kernelab.graphs import DEFAULT_BUCKETS, bucket_for, padding_waste


@pytest.mark.parametrize("batch,bucket", [(1, 1), (2, 2), (3, 4), (5, 8), (8, 8), (9, 16), (33, 64), (64, 64)])
def test_smallest_bucket_that_holds_the_batch(batch, bucket):
    assert bucket_for(batch, DEFAULT_BUCKETS) == bucket


def test_out_of_range_batches_are_refused_with_the_fix():
    with pytest.raises(ValueError, match="largest bucket 64"):
        bucket_for(65, DEFAULT_BUCKETS)
    with pytest.raises(ValueError, match=">= 1"):
        bucket_for(0, DEFAULT_BUCKETS)


def test_padding_waste():
    assert padding_waste([1, 2, 4, 8], DEFAULT_BUCKETS) == 0.0
    assert padding_waste([5], DEFAULT_BUCKETS) == pytest.approx(3 / 8)
    assert padding_waste(list(range(1, 65)), DEFAULT_BUCKETS) < 0.3  # powers of two waste < 50% per batch
