"""Issue 13, items 1, 2, 4, 5, 6: steps of any size, rollback keeps the last good checkpoint,
a damaged or crafted checkpoint is skipped (never an exception), a failed async save does not
cost the next step."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app
from gpurent.errors import DeviceError, InputError
from gpurent.runtime import CheckpointManager
from gpurent.runtime.checkpoint import MOVED_ASIDE_DIR, newest_verified_step
from gpurent.runtime.storage import MANIFEST_NAME, LocalStorage

from .test_checkpoint import FullDiskStorage

torch = pytest.importorskip("torch")


def _step_dirs(root: Path) -> list[Path]:
    return sorted(
        (p for p in root.iterdir() if p.name.startswith("step-")),
        key=lambda p: int(p.name.split("-")[1]),
    )


def _dir_of(root: Path, step: int) -> Path:
    (hit,) = [p for p in _step_dirs(root) if int(p.name.split("-")[1]) == step]
    return hit


def _rewrite(ckpt: Path, filename: str, data: bytes) -> None:
    """Replace a file of a checkpoint and re-sign it in the manifest (a crafted checkpoint)."""
    (ckpt / filename).write_bytes(data)
    manifest = json.loads((ckpt / MANIFEST_NAME).read_text())
    manifest.pop("manifest_sha256", None)
    manifest["files"][filename] = {
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    (ckpt / MANIFEST_NAME).write_text(json.dumps(manifest))


def _edit_manifest(ckpt: Path, edit: Any) -> None:
    manifest = json.loads((ckpt / MANIFEST_NAME).read_text())
    manifest.pop("manifest_sha256", None)
    edit(manifest)
    (ckpt / MANIFEST_NAME).write_text(json.dumps(manifest))


# ---- item 1: steps ------------------------------------------------------------------------


def test_steps_of_any_size_load_and_rotate(tmp_path: Path) -> None:
    mgr = CheckpointManager(tmp_path, keep_last=2, interval=None)
    for step in (5, 10**12 - 1, 10**12, 10**12 + 1, 10**30):
        mgr.save({"step": step}, step)
    loaded = CheckpointManager(tmp_path).load_latest()
    assert loaded is not None and loaded[0] == 10**30 and loaded[1] == {"step": 10**30}
    assert [c.step for c in mgr.committed()] == [10**30, 10**12 + 1]
    assert len(_step_dirs(tmp_path)) == 2  # the big ones are rotated too


@pytest.mark.parametrize("step", [-1, -(10**12), 2.5, True, "7", 10**300])
def test_a_bad_step_is_a_one_line_input_error_and_writes_nothing(tmp_path: Path, step: Any) -> None:
    mgr = CheckpointManager(tmp_path)
    with pytest.raises(InputError, match="step") as err:
        mgr.save({"a": 1}, step)
    assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="step"):
        mgr.save_async({"a": 1}, step)
    mgr.close()
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_numpy_like_integer_steps_are_accepted(tmp_path: Path) -> None:
    mgr = CheckpointManager(tmp_path)
    info = mgr.save({"a": 1}, torch.tensor(12))  # has __index__, as numpy integers do
    assert info.step == 12 and isinstance(info.step, int)


# ---- item 2: rollback ---------------------------------------------------------------------


def _saved_10_to_50(root: Path) -> None:
    mgr = CheckpointManager(root, keep_last=3, interval=None)
    for step in (10, 20, 30, 40, 50):
        mgr.save({"w": torch.full((100,), float(step)), "step": step}, step)


def test_rollback_keeps_the_last_good_checkpoint_and_moves_newer_ones_aside(
    tmp_path: Path,
) -> None:
    _saved_10_to_50(tmp_path)
    pt40 = _dir_of(tmp_path, 40) / "torch.pt"
    data = bytearray(pt40.read_bytes())
    data[len(data) // 2] ^= 0x10
    pt40.write_bytes(bytes(data))
    (_dir_of(tmp_path, 50) / "data.json").write_bytes(b"{}")
    name40, name50 = _dir_of(tmp_path, 40).name, _dir_of(tmp_path, 50).name

    mgr = CheckpointManager(tmp_path, keep_last=3, interval=None)
    loaded = mgr.load_latest()
    assert loaded is not None and loaded[0] == 30
    mgr.save({"w": torch.full((100,), 31.0), "step": 31}, 31)

    assert [int(p.name.split("-")[1]) for p in _step_dirs(tmp_path)] == [30, 31]
    aside = tmp_path / MOVED_ASIDE_DIR
    assert (aside / name40 / "torch.pt").exists() and (aside / name50 / "data.json").exists()
    for name in (name40, name50):
        reason = (aside / f"{name}.reason.txt").read_text()
        assert "resumed from step 30" in reason
    assert "sha256" in (aside / f"{name40}.reason.txt").read_text()

    for step in (32, 33):
        mgr.save({"w": torch.full((100,), float(step)), "step": step}, step)
    assert [int(p.name.split("-")[1]) for p in _step_dirs(tmp_path)] == [31, 32, 33]
    fresh = CheckpointManager(tmp_path).load_latest()
    assert (
        fresh is not None
        and fresh[0] == 33
        and torch.equal(fresh[1]["w"], torch.full((100,), 33.0))
    )


def test_rotation_never_deletes_a_good_checkpoint_while_keeping_a_damaged_one(
    tmp_path: Path,
) -> None:
    """Without a resume (a fresh manager that only saves), damaged checkpoints are moved aside
    and do not count towards keep_last."""
    _saved_10_to_50(tmp_path)
    for step in (40, 50):
        pt = _dir_of(tmp_path, step) / "torch.pt"
        pt.write_bytes(pt.read_bytes()[:-7])
    mgr = CheckpointManager(tmp_path, keep_last=2, interval=None)
    mgr.save({"w": torch.zeros(3), "step": 60}, 60)
    assert [int(p.name.split("-")[1]) for p in _step_dirs(tmp_path)] == [30, 60]
    assert len(list((tmp_path / MOVED_ASIDE_DIR).glob("*.reason.txt"))) == 2


# ---- item 4: the manifest is validated as a whole -----------------------------------------


def _torch_entry(m: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = m["files"]["torch.pt"]
    return entry


MANIFEST_EDITS: dict[str, Any] = {
    "size_missing": lambda m: _torch_entry(m).pop("size_bytes"),
    "size_is_text": lambda m: _torch_entry(m).update(size_bytes="12"),
    "size_negative": lambda m: _torch_entry(m).update(size_bytes=-1),
    "sha_is_number": lambda m: _torch_entry(m).update(sha256=5),
    "files_is_list": lambda m: m.update(files=[1, 2]),
    "files_entry_is_list": lambda m: m["files"].update({"torch.pt": [1]}),
    "step_differs_from_name": lambda m: m.update(step=m["step"] + 1),
    "step_is_bool": lambda m: m.update(step=True),
    "keys_is_list": lambda m: m.update(keys=["w"]),
    "unknown_kind": lambda m: m["keys"].update(w="pickle"),
    "created_is_text": lambda m: m.update(created_unix_s="noon"),
    "versions_is_number": lambda m: m.update(versions=3),
    "manifest_is_list": lambda m: (m.clear(), m.update({"format": ["x"]})),
}


@pytest.mark.parametrize("edit", sorted(MANIFEST_EDITS))
def test_an_invalid_manifest_means_does_not_verify(tmp_path: Path, edit: str) -> None:
    mgr = CheckpointManager(tmp_path, keep_last=2, interval=None)
    mgr.save({"w": torch.ones(10), "step": 1}, 1)
    mgr.save({"w": torch.ones(10) * 2, "step": 2}, 2)
    _edit_manifest(_dir_of(tmp_path, 2), MANIFEST_EDITS[edit])

    fresh = CheckpointManager(tmp_path, keep_last=2, interval=None)
    loaded = fresh.load_latest()
    assert loaded is not None and loaded[0] == 1
    assert fresh.last_skipped and "manifest" in fresh.last_skipped[0].reason
    assert [c.step for c in fresh.committed()] == [1]
    for step in range(3, 7):  # saves go on and rotation keeps the directory bounded
        fresh.save({"w": torch.ones(10) * step, "step": step}, step)
    assert [int(p.name.split("-")[1]) for p in _step_dirs(tmp_path)] == [5, 6]


def test_a_manifest_with_a_flipped_bit_is_skipped(tmp_path: Path) -> None:
    mgr = CheckpointManager(tmp_path, interval=None)
    mgr.save({"w": torch.ones(10), "step": 1}, 1)
    mgr.save({"w": torch.ones(10) * 2, "step": 2}, 2)
    path = _dir_of(tmp_path, 2) / MANIFEST_NAME
    original = path.read_bytes()
    text = original.decode()
    # "size_bytes": 1234 -> a digit changes: still valid JSON and a valid schema
    at = text.index('"size_bytes": ') + len('"size_bytes": ')
    flipped = bytearray(original)
    flipped[at] ^= 0x01
    path.write_bytes(bytes(flipped))
    loaded = CheckpointManager(tmp_path).load_latest()
    assert loaded is not None and loaded[0] == 1


def test_run_with_a_damaged_manifest_in_the_checkpoint_dir_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ck = tmp_path / "ck"
    mgr = CheckpointManager(ck, interval=None)
    mgr.save({"step": 1}, 1)
    _edit_manifest(_dir_of(ck, 1), lambda m: m["files"]["data.json"].pop("size_bytes"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))
    r = CliRunner().invoke(
        app,
        [
            "run", "--checkpoint-dir", str(ck), "--notice", "none", "--poll", "0.05",
            "--", sys.executable, "-c", "pass",
        ],
    )  # fmt: skip
    assert r.exit_code == 0, (r.stdout, r.stderr, r.exception)


class _NoDeleteStorage(LocalStorage):
    def delete(self, name: str) -> None:
        raise PermissionError(13, "Permission denied", name)


def test_a_failing_rotation_never_makes_a_committed_save_raise(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mgr = CheckpointManager(_NoDeleteStorage(tmp_path), keep_last=1, interval=None)
    with caplog.at_level(logging.WARNING, logger="gpurent.runtime"):
        for step in (1, 2, 3):
            assert mgr.save({"step": step}, step).step == step
    assert "could not delete" in caplog.text
    loaded = CheckpointManager(tmp_path).load_latest()
    assert loaded is not None and loaded[0] == 3


# ---- item 5: crafted checkpoints are skipped ----------------------------------------------


class _Evil:
    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, ("touch pwned-by-checkpoint",))


def _two_saved(root: Path) -> Path:
    mgr = CheckpointManager(root, interval=None)
    mgr.save({"w": torch.ones(10), "step": 1}, 1)
    mgr.save({"w": torch.ones(10) * 2, "step": 2}, 2)
    return _dir_of(root, 2)


def _assert_falls_back(root: Path) -> None:
    done: list[Any] = []
    thread = threading.Thread(
        target=lambda: done.append(CheckpointManager(root).load_latest()), daemon=True
    )
    thread.start()
    thread.join(20)
    assert done, "load_latest blocked"
    loaded = done[0]
    assert loaded is not None and loaded[0] == 1 and torch.equal(loaded[1]["w"], torch.ones(10))


def test_a_pickle_payload_is_skipped_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _rewrite(_two_saved(tmp_path / "ck"), "torch.pt", pickle.dumps({"w": _Evil()}))
    _assert_falls_back(tmp_path / "ck")
    assert not (tmp_path / "pwned-by-checkpoint").exists()


@pytest.mark.parametrize(
    "payload",
    [
        b'{"step": {"__float__": [1]}}',
        b'{"step": {"__float__": "1e400x"}}',
        b'{"step": {"__tuple__": 5}}',
        b'{"step": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"step": 1' + b"0" * 5000 + b"}",
        b"[1, 2]",
        b"\xff\xfe",
    ],
    ids=["float_list", "float_text", "tuple_int", "deep", "huge_int", "not_object", "not_utf8"],
)
def test_a_crafted_data_json_is_skipped(tmp_path: Path, payload: bytes) -> None:
    _rewrite(_two_saved(tmp_path), "data.json", payload)
    _assert_falls_back(tmp_path)


def test_a_user_dict_that_looks_like_a_tag_round_trips(tmp_path: Path) -> None:
    mgr = CheckpointManager(tmp_path, interval=None)
    state = {"a": {"__float__": "inf"}, "b": {"__tuple__": [1]}, "c": (1.5, float("inf"))}
    mgr.save(state, 1)
    loaded = CheckpointManager(tmp_path).load_latest()
    assert loaded is not None and loaded[1] == state


@pytest.mark.parametrize("name", ["../outside.json", "/etc/hostname", "sub/x", ".", ""])
def test_a_manifest_naming_files_outside_its_directory_is_skipped(
    tmp_path: Path, name: str
) -> None:
    ckpt = _two_saved(tmp_path)
    data = b'{"step": 2}'
    (tmp_path / "outside.json").write_bytes(data)

    def edit(m: dict[str, Any]) -> None:
        m["files"][name] = {"size_bytes": 0, "sha256": hashlib.sha256(b"").hexdigest()}

    _edit_manifest(ckpt, edit)
    _assert_falls_back(tmp_path)


def test_a_fifo_or_a_symlink_in_a_checkpoint_is_not_opened(tmp_path: Path) -> None:
    ckpt = _two_saved(tmp_path)
    (ckpt / "data.json").unlink()
    os.mkfifo(ckpt / "data.json")
    _edit_manifest(
        ckpt,
        lambda m: m["files"].update(
            {"data.json": {"size_bytes": 0, "sha256": hashlib.sha256(b"").hexdigest()}}
        ),
    )
    _assert_falls_back(tmp_path)
    # a symlink to a file with the right bytes elsewhere is not followed either
    real = tmp_path / "elsewhere.pt"
    real.write_bytes((ckpt / "torch.pt").read_bytes())
    (ckpt / "data.json").unlink()
    (ckpt / "data.json").write_bytes(b'{"step":2}')
    (ckpt / "torch.pt").unlink()
    (ckpt / "torch.pt").symlink_to(real)
    _assert_falls_back(tmp_path)


def test_a_fifo_as_manifest_does_not_block(tmp_path: Path) -> None:
    ckpt = _two_saved(tmp_path)
    (ckpt / MANIFEST_NAME).unlink()
    os.mkfifo(ckpt / MANIFEST_NAME)
    _assert_falls_back(tmp_path)


def test_a_symlinked_step_directory_is_neither_loaded_nor_rotated(tmp_path: Path) -> None:
    other = tmp_path / "other"
    CheckpointManager(other, interval=None).save({"w": torch.ones(2), "step": 99}, 99)
    (target,) = _step_dirs(other)
    root = tmp_path / "ck"
    mgr = CheckpointManager(root, keep_last=2, interval=None)
    mgr.save({"w": torch.ones(2), "step": 1}, 1)
    (root / target.name).symlink_to(target, target_is_directory=True)
    loaded = CheckpointManager(root).load_latest()
    assert loaded is not None and loaded[0] == 1
    for step in range(2, 6):
        mgr.save({"w": torch.ones(2), "step": step}, step)
    assert (target / MANIFEST_NAME).exists() and (root / target.name).is_symlink()
    assert CheckpointManager(other).load_latest() is not None


# ---- item 6: a failed async save does not cost the next step ------------------------------


def test_after_a_failed_async_save_the_next_save_is_saved(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    storage = FullDiskStorage(tmp_path, budget_bytes=100)
    mgr = CheckpointManager(storage, interval=None)
    assert isinstance(mgr.save_async({"w": torch.ones(1000)}, 1).exception(), DeviceError)
    storage.budget_bytes = 10**9
    with caplog.at_level(logging.WARNING, logger="gpurent.runtime"):
        info = mgr.save({"ok": 2}, 2)
        assert info.step == 2
        mgr.save({"ok": 3}, 3)
    assert [c.step for c in mgr.committed()] == [3, 2]
    assert sum("in the background" in r.getMessage() for r in caplog.records) == 1


def test_after_a_failed_async_save_the_next_async_save_is_saved(tmp_path: Path) -> None:
    storage = FullDiskStorage(tmp_path, budget_bytes=100)
    mgr = CheckpointManager(storage, interval=None)
    assert isinstance(mgr.save_async({"w": torch.ones(1000)}, 1).exception(), DeviceError)
    storage.budget_bytes = 10**9
    assert mgr.save_async({"w": torch.ones(1000)}, 2).result().step == 2
    mgr.close()
    assert [c.step for c in mgr.committed()] == [2]


# ---- the API the supervisor uses ----------------------------------------------------------


def test_newest_verified_step_skips_damage_and_never_raises(tmp_path: Path) -> None:
    assert newest_verified_step(tmp_path / "absent") is None
    ckpt = _two_saved(tmp_path)
    assert newest_verified_step(tmp_path) == 2
    (ckpt / "torch.pt").write_bytes(b"x")
    assert newest_verified_step(tmp_path) == 1
    (tmp_path / "not-a-dir").write_text("x")
    assert newest_verified_step(tmp_path / "not-a-dir") is None


# The venv's s3fs (0.4.x, boto3-based) makes fsspec warn that it is old; harmless for a test.
@pytest.mark.filterwarnings("ignore:Your installed version of s3fs:UserWarning")
def test_rollback_on_s3_moves_the_newer_damaged_checkpoint_aside(
    s3_bucket: tuple[str, dict[str, Any]],
) -> None:
    bucket, options = s3_bucket
    url = f"s3://{bucket}/run1"
    mgr = CheckpointManager(url, keep_last=2, interval=None, storage_options=options)
    for step in (1, 2):
        mgr.save({"w": torch.full((10,), float(step)), "step": step}, step)
    fs = mgr.storage.fs  # type: ignore[attr-defined]
    newest = mgr.committed()[0].name
    fs.pipe(f"{bucket}/run1/{newest}/data.json", b'{"step": 9}')  # damaged, size differs

    fresh = CheckpointManager(url, keep_last=2, interval=None, storage_options=options)
    loaded = fresh.load_latest()
    assert loaded is not None and loaded[0] == 1
    fresh.save({"w": torch.full((10,), 3.0), "step": 3}, 3)
    assert [c.step for c in fresh.committed()] == [3, 1]
    aside = fs.ls(f"{bucket}/run1/{MOVED_ASIDE_DIR}")
    assert any(newest in p and p.endswith(".reason.txt") for p in aside), aside
    assert any(newest in p and not p.endswith(".reason.txt") for p in aside), aside


def test_callback_train_end_saves_the_last_step_after_a_failed_async_save(
    tmp_path: Path,
) -> None:
    from gpurent.runtime.callbacks._common import CheckpointCallback

    storage = FullDiskStorage(tmp_path, budget_bytes=100)
    mgr = CheckpointManager(storage, interval=None, every_steps=2)
    cb = CheckpointCallback(mgr, async_save=True)
    cb._step_end(2, writer=True, state=lambda: {"w": torch.ones(1000), "step": 2})
    in_flight = mgr._in_flight
    assert in_flight is not None and isinstance(in_flight.exception(), DeviceError)
    storage.budget_bytes = 10**9
    cb._train_end(3, writer=True, state=lambda: {"step": 3})
    assert [c.step for c in mgr.committed()] == [3]
