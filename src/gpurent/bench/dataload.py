"""CPU input-pipeline throughput: decode + augment in DataLoader worker processes.

Synthetic JPEGs (made once in the parent with Pillow, quality 90, smooth gradients plus noise so
they compress like photos) are decoded, randomly cropped and resized (RandomResizedCrop-like,
scale 0.35-1), flipped half the time, and normalised to a float CHW tensor in `workers` worker
processes, as an ImageNet training loader does. The figure is images/s after the first batch
(worker start-up is excluded). Without Pillow a numpy stand-in is used (zlib decompress of the
raw pixels + the same crop/flip/normalise), labelled as such: it is not a JPEG figure.
"""

from __future__ import annotations

import importlib.util
import io
import time
import zlib
from typing import TYPE_CHECKING, Any

from gpurent.bench.result import Measurement

if TYPE_CHECKING:
    import numpy as np

# ImageNet channel statistics, as torchvision's Normalize uses them.
_MEAN = (0.485, 0.456, 0.406)
_STD = (0.229, 0.224, 0.225)


def has_pillow() -> bool:
    """Whether Pillow is installed (JPEG encoding and decoding)."""
    return importlib.util.find_spec("PIL") is not None


def synthetic_image(index: int, size: int) -> np.ndarray:
    """A deterministic size x size x 3 uint8 image: gradients plus noise."""
    import numpy as np

    rng = np.random.default_rng(index)
    ramp = np.linspace(0, 255, size, dtype=np.float32)
    base = (ramp[None, :, None] * rng.uniform(0.2, 1.0, 3)) + (ramp[:, None, None] * 0.3)
    noise = rng.normal(0, 12, (size, size, 3))
    return np.clip(base + noise, 0, 255).astype(np.uint8)


def encode(image: np.ndarray, use_pillow: bool) -> bytes:
    """The image encoded as JPEG with Pillow, else zlib-compressed raw bytes."""
    if use_pillow:
        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(image).save(buf, format="JPEG", quality=90)
        return buf.getvalue()
    return zlib.compress(image.tobytes(), 1)


class SyntheticImages:
    """A map-style dataset of encoded images; __getitem__ decodes and augments (a torch-free
    class, so DataLoader workers can use it)."""

    def __init__(self, blobs: list[bytes], *, src_size: int, out_size: int, pillow: bool) -> None:
        self.blobs = blobs
        self.src_size = src_size
        self.out_size = out_size
        self.pillow = pillow

    def __len__(self) -> int:
        return len(self.blobs)

    def __getitem__(self, index: int) -> np.ndarray:
        import numpy as np

        rng = np.random.default_rng(index)
        side = int(self.src_size * np.sqrt(rng.uniform(0.35, 1.0)))
        x0 = int(rng.integers(0, self.src_size - side + 1))
        y0 = int(rng.integers(0, self.src_size - side + 1))
        if self.pillow:
            from PIL import Image

            img = Image.open(io.BytesIO(self.blobs[index])).convert("RGB")
            img = img.crop((x0, y0, x0 + side, y0 + side)).resize(
                (self.out_size, self.out_size), Image.Resampling.BILINEAR
            )
            arr = np.asarray(img, dtype=np.uint8)
        else:
            raw = np.frombuffer(zlib.decompress(self.blobs[index]), dtype=np.uint8)
            full = raw.reshape(self.src_size, self.src_size, 3)[y0 : y0 + side, x0 : x0 + side]
            pick = np.linspace(0, side - 1, self.out_size).astype(np.int64)
            arr = full[pick][:, pick]
        if rng.random() < 0.5:
            arr = arr[:, ::-1]
        chw = arr.transpose(2, 0, 1).astype(np.float32) / 255.0
        mean = np.array(_MEAN, dtype=np.float32).reshape(3, 1, 1)
        std = np.array(_STD, dtype=np.float32).reshape(3, 1, 1)
        return np.ascontiguousarray((chw - mean) / std)


def run_dataload(
    torch: Any,
    *,
    images: int,
    src_size: int,
    out_size: int,
    workers: int,
    batch_size: int,
    use_pillow: bool | None = None,
) -> list[Measurement]:
    """Images/s of a DataLoader with `workers` processes decoding and augmenting `images`."""
    pillow = has_pillow() if use_pillow is None else use_pillow
    blobs = [encode(synthetic_image(i, src_size), pillow) for i in range(images)]
    dataset = SyntheticImages(blobs, src_size=src_size, out_size=out_size, pillow=pillow)
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, num_workers=workers, shuffle=False, drop_last=False
    )
    it = iter(loader)
    first = next(it)  # start-up (forking workers) is not throughput
    counted = 0
    t0 = time.perf_counter()
    for batch in it:
        counted += int(batch.shape[0])
    elapsed = time.perf_counter() - t0
    if counted == 0:  # everything came in the first batch: time it whole instead
        counted, elapsed = int(first.shape[0]), max(elapsed, 1e-9)
    what = (
        f"Pillow JPEG decode (q90, {src_size}px) + random resized crop to {out_size}px + flip "
        "+ normalise"
        if pillow
        else f"STAND-IN without Pillow: zlib decompress ({src_size}px raw) + numpy crop/resize "
        f"to {out_size}px + flip + normalise"
    )
    return [
        Measurement(
            key="dataload.images",
            benchmark="dataload",
            value=counted / elapsed,
            unit="images/s",
            detail=f"{what}; {workers} worker processes, batch {batch_size}, "
            f"{images} images (first batch excluded)",
        )
    ]
