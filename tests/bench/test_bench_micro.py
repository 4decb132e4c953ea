"""Each micro-benchmark on the CPU at tiny sizes: real measurements, honest labels."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from gpurent.bench.allreduce import bus_bandwidth_gbps, run_allreduce
from gpurent.bench.dataload import SyntheticImages, encode, run_dataload, synthetic_image
from gpurent.bench.disk import run_disk
from gpurent.bench.hostdev import run_hostdev
from gpurent.bench.matmul import run_matmul
from gpurent.bench.membw import run_membw
from gpurent.bench.spawn import run_spawned
from gpurent.bench.timing import spread
from gpurent.errors import DeviceError, InputError


def test_matmul_reports_torch_and_numpy_at_the_same_size() -> None:
    got = {
        m.key: m
        for m in run_matmul(
            torch, device="cpu", sizes=(64, 128), precisions=("fp32", "bf16"), repeats=2, rounds=1
        )
    }
    assert set(got) == {"matmul.fp32", "matmul.bf16", "matmul.numpy-fp32"}
    best = got["matmul.fp32"].detail.split("best at n=")[1].split(" ")[0]
    assert f"at n={best}" in got["matmul.numpy-fp32"].detail
    assert all(m.value is not None and m.value > 0 and m.unit == "TFLOP/s" for m in got.values())


def test_membw_copy_and_triad() -> None:
    got = run_membw(torch, device="cpu", array_mib=4, repeats=3)
    assert [m.key for m in got] == ["membw.copy", "membw.triad"]
    assert all(m.value and m.value > 0.1 for m in got)  # any machine moves > 0.1 GB/s
    assert "host DRAM" in got[0].detail


def test_hostdev_without_gpu_is_a_labelled_stand_in() -> None:
    (m,) = run_hostdev(torch, device="cpu", size_mib=4, repeats=2)
    assert m.key == "hostdev.host-memcpy" and "STAND-IN" in m.detail and m.value


def test_busbw_formula_matches_nccl_tests() -> None:
    # 1 GB in 10 ms on 8 ranks: algbw 100 GB/s, busbw x 2*7/8 = 175 GB/s
    assert bus_bandwidth_gbps(10**9, 0.01, 8) == pytest.approx(175.0)
    assert bus_bandwidth_gbps(10**9, 0.01, 2) == pytest.approx(100.0)


def test_allreduce_with_gloo_between_two_processes() -> None:
    (m,) = run_allreduce(device="cpu", world_size=2, sizes_mib=[0.25, 1.0], repeats=3, timeout_s=60)
    assert m.key == "allreduce.busbw" and m.value and m.value > 0
    assert "gloo over 2 CPU processes" in m.detail
    (single,) = run_allreduce(device="cpu", world_size=1, sizes_mib=[1.0], repeats=1, timeout_s=5)
    assert single.value is None and "not applicable" in single.detail


def _boom(rank: int, world: int, args: dict) -> None:
    raise RuntimeError(f"NCCL error on rank {rank}: {args['what']}")


def test_worker_errors_become_one_device_error_line() -> None:
    with pytest.raises(DeviceError, match=r"rank 0: RuntimeError: NCCL error on rank 0: bad"):
        run_spawned(_boom, 1, {"what": "bad"}, timeout_s=60)


def test_disk_measures_and_cleans_up(tmp_path: Path) -> None:
    got = {m.key: m for m in run_disk(tmp_path, file_mib=4, random_reads=200)}
    assert set(got) == {"disk.seq-write", "disk.seq-read", "disk.rand-read"}
    assert got["disk.rand-read"].unit == "IOPS" and "200 random 4 KiB reads" in (
        got["disk.rand-read"].detail
    )
    assert any(w in got["disk.seq-read"].detail for w in ("O_DIRECT", "posix_fadvise", "buffered"))
    assert all(m.value and m.value > 0 for m in got.values())
    assert os.listdir(tmp_path) == []


def test_disk_rejects_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"--path .*not an existing directory"):
        run_disk(tmp_path / "nope", file_mib=1, random_reads=1)


@pytest.mark.parametrize("pillow", [True, False])
def test_dataload_decodes_in_workers(pillow: bool) -> None:
    (m,) = run_dataload(
        torch, images=24, src_size=48, out_size=32, workers=1, batch_size=8, use_pillow=pillow
    )
    assert m.value and m.value > 0 and m.unit == "images/s"
    assert ("Pillow JPEG" in m.detail) is pillow
    assert ("STAND-IN" in m.detail) is not pillow


def test_augmented_sample_shape_and_determinism() -> None:
    blobs = [encode(synthetic_image(i, 40), True) for i in range(2)]
    ds = SyntheticImages(blobs, src_size=40, out_size=16, pillow=True)
    a, b = ds[1], ds[1]
    assert a.shape == (3, 16, 16) and (a == b).all()


def test_spread_statistics() -> None:
    s = spread([3.0, 1.0, 2.0, 4.0, 5.0])
    assert s.median_s == 3.0 and s.min_s == 1.0 and s.p10_s < s.median_s < s.p90_s
    with pytest.raises(ValueError):
        spread([])
