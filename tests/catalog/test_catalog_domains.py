"""The scale-up domain column and the rows issue 12 corrected or added."""

from __future__ import annotations

from gpurent.catalog import all_gpus, get_gpu


def test_every_row_says_its_scale_up_domain() -> None:
    for g in all_gpus():
        assert g.scale_up_domain_gpus is not None and g.scale_up_domain_gpus >= 1, g.name
        if g.interconnect == "PCIe":
            assert g.scale_up_domain_gpus == 1, g.name
    assert get_gpu("GB200").scale_up_domain_gpus == 72
    assert get_gpu("GB300").scale_up_domain_gpus == 72
    for name in ("H100-SXM5-80GB", "B200", "B300", "MI300X", "MI325X", "MI355X"):
        assert get_gpu(name).scale_up_domain_gpus == 8, name


def test_amd_rows_use_one_fp32_convention_and_have_links() -> None:
    """AMD's FP32 vector rate (dual issue, 256 FLOP per CU-cycle) on every CDNA row: MI300X's
    row once carried the FP64 vector rate (81.7) in its fp32 column."""
    for name in ("MI300X", "MI325X", "MI355X"):
        g = get_gpu(name)
        assert g.sm_cycles_per_s is not None and g.interconnect_gbps is not None, name
        per_cu_cycle = g.fp32_tflops * 1e12 / g.sm_cycles_per_s
        assert abs(per_cu_cycle / 256.0 - 1.0) < 0.01, (name, per_cu_cycle)
    mi325 = get_gpu("AMD Instinct MI325X")
    assert mi325.architecture == "CDNA3" and mi325.memory_gib == 256
