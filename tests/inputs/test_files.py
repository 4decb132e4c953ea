"""Reading user files safely: special files refused without blocking, sizes bounded, bad UTF-8
with its byte offset, OS errors as one line, nesting bounded, CSV field limit reported."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from gpurent.errors import DataError, InputError
from gpurent.inputs import files


def _read_in_thread(path: Path) -> BaseException | str:
    """read_text in a thread, so that a read that blocks fails the test instead of hanging it."""
    out: list[BaseException | str] = []

    def target() -> None:
        try:
            out.append(files.read_text(path))
        except BaseException as exc:  # handed back to the test
            out.append(exc)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(5)
    assert out, f"reading {path} blocked"
    return out[0]


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    got = _read_in_thread(fifo)
    assert isinstance(got, InputError) and "is a FIFO (named pipe); give a regular file" in str(got)


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "a device"), ("/dev/null", "a device")])
def test_devices_are_refused(path: str, kind: str) -> None:
    got = _read_in_thread(Path(path))
    assert isinstance(got, InputError) and f"is {kind}" in str(got)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory; give a regular file"):
        files.read_text(tmp_path)


def test_os_errors_are_one_line(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    with pytest.raises(InputError, match="too many levels of symbolic links"):
        files.read_text(loop)
    with pytest.raises(InputError, match="file name too long") as long_name:
        files.read_text(tmp_path / ("x" * 300 + ".toml"))
    assert len(str(long_name.value)) < 250  # the path is shortened in the message
    with pytest.raises(InputError, match=r"^no such file: .*missing\.csv; check the path$"):
        files.read_text(tmp_path / "missing.csv")


def test_size_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * 1000)
    assert files.read_text(big, limit_bytes=5000).startswith("a: 1")
    with pytest.raises(InputError, match=r"is 5000 bytes, over the 4999 bytes limit \(workload"):
        files.read_text(big, limit_bytes=4999, what="workload file")
    assert files.MAX_CONFIG_BYTES < files.MAX_TEXT_BYTES


def test_not_utf8_names_the_byte_offset(tmp_path: Path) -> None:
    bad = tmp_path / "cal.csv"
    bad.write_bytes(b"model,gpu\nresnet50,\xff\n")
    with pytest.raises(DataError, match=r"cal.csv: not UTF-8 text \(byte offset 19"):
        files.read_text(bad, error=DataError)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbfa,b\n")
    assert files.read_text(bom) == "a,b\n"


def test_write_text_to_a_full_disk_is_one_line() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    with pytest.raises(InputError, match=r"^/dev/full: no space left on the device"):
        files.write_text("/dev/full", "x" * 100_000)


def test_deep_nesting_is_refused() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(InputError, match="nested more than 64 levels"):
        files.parse_json(deep, "x.json")
    with pytest.raises(InputError, match="nested more than 64 levels"):
        files.parse_json("[" * 70 + "]" * 70, "x.json")  # within Python's reach, over ours
    assert files.parse_json("[" * 60 + "]" * 60, "x.json") is not None
    with pytest.raises(InputError, match=r"^x\.yaml: (nested|not valid YAML)"):
        files.parse_yaml("[" * 5000 + "]" * 5000, "x.yaml")
    with pytest.raises(InputError, match=r"^x\.yaml: nested more than 64 levels"):
        files.parse_yaml("[" * 70 + "]" * 70, "x.yaml")
    with pytest.raises(InputError, match=r"^x\.toml: (nested|not valid TOML)"):
        files.parse_toml("a = " + "[" * 5000 + "]" * 5000, "x.toml")


def test_yaml_aliases_that_contain_themselves_are_refused() -> None:
    with pytest.raises(InputError, match="contains itself"):
        files.parse_yaml("a: &x [*x]\n", "x.yaml")
    shared = "a: &x [1, 2]\nb: *x\nc: *x\n"  # shared, not recursive: fine
    assert files.parse_yaml(shared, "x.yaml") == {"a": [1, 2], "b": [1, 2], "c": [1, 2]}


def test_parser_errors_are_one_line() -> None:
    for parse, text in (
        (files.parse_json, '{"a": '),
        (files.parse_json, "1" * 5000),  # more digits than int() converts: a ValueError
        (files.parse_toml, "a = [1,"),
        (files.parse_yaml, "a: [1,\n"),
        (files.parse_yaml, "d: 2001-13-01\n"),  # a ValueError from the date constructor
    ):
        with pytest.raises(InputError) as info:
            parse(text, "f")
        assert "\n" not in str(info.value) and str(info.value).startswith("f")


def test_csv_records_and_field_limit() -> None:
    header, rows = files.csv_records(" a , b\n1,2\n\n3\n", "t.csv")
    assert header == ["a", "b"]
    assert rows == [(2, {"a": "1", "b": "2"}), (4, {"a": "3", "b": ""})]
    huge = "a\n" + '"' + "x" * (files.CSV_FIELD_LIMIT + 1) + '"\n'
    with pytest.raises(InputError, match=r"^t.csv:2: unreadable CSV \(field larger than field"):
        files.csv_records(huge, "t.csv")
