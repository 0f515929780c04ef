"""The machine line printed beside every benchmark."""

from pathlib import Path

import pytest

from ecoagent.summary import _field, cpu_model

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC
flags\t\t: fpu sse2 avx2 avx512f avx512_bf16
"""


def test_field_reads_the_first_matching_line_and_not_a_longer_key() -> None:
    assert _field(CPUINFO, "model") == "2"  # not "model name"
    assert _field(CPUINFO, "model name") == "AMD EPYC"
    assert _field(CPUINFO, "cpu family") == "26"
    assert _field(CPUINFO, "microcode") is None


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="Linux only")
def test_cpu_model_names_family_and_model_from_proc_cpuinfo() -> None:
    text = Path("/proc/cpuinfo").read_text()
    line = cpu_model()
    for key in ("cpu family", "model"):
        value = _field(text, key)
        if value is not None:
            assert f"{key} {value}" in line
