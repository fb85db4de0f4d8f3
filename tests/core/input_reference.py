#!/usr/bin/env python3
"""gpuperf's CPU input pipeline (libgpuperf/core input/) against torchvision 0.14 and PIL.

  input_reference.py geometry --tool <input_reference_tool>
      RandomResizedCrop.get_params, Resize's size arithmetic and CenterCrop's offsets from
      torchvision itself, with torch's random functions replaced by a feed of given uniform
      draws, against gpuperf's boxes for the same draws: every integer must match.
  input_reference.py folder --tool <input_reference_tool> --work <folder>
      A folder with awkward names (case, digits, spaces, nested folders, dots, links, other
      extensions) read by torchvision.datasets.ImageFolder (restricted to .jpg/.jpeg) and by
      gpuperf's scan: the same (path, label) list in the same order.
  input_reference.py pixels --tool <input_reference_tool> --work <folder>
      JPEGs written by PIL (baseline 4:2:0 and 4:4:4, progressive, grayscale, CMYK) and a YCCK
      one written by gpuperf (PIL writes no YCCK), decoded and
      transformed by gpuperf and by PIL + torchvision (Resize(256) + CenterCrop(224), and the
      training crop of gpuperf's draws + flip; ToTensor, Normalize). Without DCT scaling the
      output must equal torchvision's within 1e-5 (float rounding only: gpuperf repeats PIL's
      decode settings and resampling arithmetic, so no 8-bit level may differ); with DCT scaling
      the mean absolute difference must stay below 2 levels of 255 and the largest is reported.

Exit 77 (CTest SKIPPED) when this Python has no torch/torchvision/PIL/numpy.
"""

import argparse
import contextlib
import math
import os
import random
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torchvision
    import torchvision.transforms as T
    import torchvision.transforms.functional as F
    from PIL import Image
except ImportError as error:  # pragma: no cover - the SKIPPED path
    print(f"SKIPPED: {error}")
    sys.exit(77)

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
ATTEMPTS = 10


@contextlib.contextmanager
def fed_draws(draws):
    """Replaces torch.empty(...).uniform_ and torch.randint with the draws, in get_params' order:
    (area, log ratio) per attempt, then top and left."""
    uniforms = []
    for k in range(ATTEMPTS):
        uniforms += [draws[2 * k], draws[2 * k + 1]]
    integers = [draws[2 * ATTEMPTS], draws[2 * ATTEMPTS + 1]]
    state = {"u": 0, "i": 0}

    class FakeEmpty:
        def uniform_(self, low, high):
            u = uniforms[state["u"]]
            state["u"] += 1
            value = float(low) + (float(high) - float(low)) * u
            return torch.tensor([value], dtype=torch.float32)

    def fake_empty(*args, **kwargs):
        return FakeEmpty()

    def fake_randint(low, high, size=None, **kwargs):
        u = integers[state["i"]]
        state["i"] += 1
        n = high - low
        return torch.tensor([low + min(int(math.floor(u * n)), n - 1)])

    saved = torch.empty, torch.randint
    torch.empty, torch.randint = fake_empty, fake_randint
    try:
        yield
    finally:
        torch.empty, torch.randint = saved


def reference_box(height, width, scale, ratio, draws):
    with fed_draws(draws):
        return T.RandomResizedCrop.get_params(
            torch.zeros(1, height, width, dtype=torch.uint8), list(scale), list(ratio))


def geometry(tool):
    rng = random.Random(34)
    cases, expected = [], []
    shapes = [(rng.randint(1, 1200), rng.randint(1, 1200)) for _ in range(1500)]
    shapes += [(10, 1000), (1000, 10), (1, 1), (2, 3), (224, 224), (375, 500), (500, 375),
               (333, 500), (257, 300), (259, 600)]
    for height, width in shapes:
        scale, ratio = (0.08, 1.0), (3.0 / 4.0, 4.0 / 3.0)
        if rng.random() < 0.2:
            scale = (rng.uniform(0.01, 0.5), rng.uniform(0.5, 1.0))
            ratio = (rng.uniform(0.2, 1.0), rng.uniform(1.0, 5.0))
        draws = [rng.random() for _ in range(2 * ATTEMPTS + 2)]
        if rng.random() < 0.1:  # draws near the edges of [0, 1)
            draws = [rng.choice([0.0, 1.0 - 2**-53, 0.5, rng.random()]) for _ in draws]
        cases.append("rrc %d %d %r %r %r %r %s" % (height, width, scale[0], scale[1], ratio[0],
                                                   ratio[1], " ".join(repr(d) for d in draws)))
        expected.append(" ".join(str(v) for v in reference_box(height, width, scale, ratio, draws)))
        size = rng.choice([224, 256, 288, 32, 1])
        cases.append("resize %d %d %d" % (height, width, size))
        h, w = F._compute_resized_output_size((height, width), [size])
        expected.append("%d %d" % (h, w))
        crop = rng.choice([224, 7, 1, max(1, min(height, width) - 1)])
        cases.append("center %d %d %d" % (height, width, crop))
        expected.append(center_reference(height, width, crop))
    # Draws whose first attempt puts sqrt(area * ratio) next to a rounding boundary (k + 0.5):
    # there the float32 steps and the half-to-even rounding decide the box.
    boundary = 0
    while boundary < 3000:
        height, width = rng.randint(50, 1200), rng.randint(50, 1200)
        scale, ratio = (0.08, 1.0), (3.0 / 4.0, 4.0 / 3.0)
        draws = [rng.random() for _ in range(2 * ATTEMPTS + 2)]
        log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
        aspect = math.exp(log_lo + (log_hi - log_lo) * draws[1])
        target_w = rng.randint(20, max(21, int(min(width, height) * 0.9))) + 0.5 + rng.choice(
            [0.0, 1e-7, -1e-7, 1e-5, -1e-5, 1e-3])
        fraction = target_w ** 2 / aspect / (height * width)
        if not scale[0] <= fraction < scale[1]:
            continue
        draws[0] = (fraction - scale[0]) / (scale[1] - scale[0])
        cases.append("rrc %d %d %r %r %r %r %s" % (height, width, scale[0], scale[1], ratio[0],
                                                   ratio[1], " ".join(repr(d) for d in draws)))
        expected.append(" ".join(str(v) for v in reference_box(height, width, scale, ratio, draws)))
        boundary += 1
    out = subprocess.run([tool, "geometry"], input="\n".join(cases) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    if len(out) != len(cases):
        print(f"FAIL: {len(out)} answers for {len(cases)} cases")
        return 1
    bad = [(c, e, o) for c, e, o in zip(cases, expected, out) if e != o]
    for case, want, got in bad[:10]:
        print(f"MISMATCH {case[:80]}...: torchvision {want}, gpuperf {got}")
    fallbacks = sum(1 for c in cases if c.startswith("rrc"))
    if bad:
        print(f"FAIL: {len(bad)} of {len(cases)} cases differ")
        return 1
    print(f"ok: {len(cases)} cases ({fallbacks} RandomResizedCrop, {boundary} of them next to a "
          f"rounding boundary; the rest Resize and CenterCrop) equal torchvision "
          f"{torchvision.__version__}")
    return 0


def center_reference(height, width, crop):
    """CenterCrop's offsets in the original image's pixels (negative: padding), from
    torchvision's own center_crop on a tensor whose pixels hold their coordinates + 1 (the
    padding holds 0)."""
    rows = torch.arange(1, height + 1, dtype=torch.float64).view(1, height, 1)
    cols = torch.arange(1, width + 1, dtype=torch.float64).view(1, 1, width)
    image = torch.cat([rows.expand(1, height, width), cols.expand(1, height, width)])
    out = F.center_crop(image, [crop, crop])
    offsets = []
    for line in (out[0].max(dim=1).values, out[1].max(dim=0).values):
        first = int(torch.nonzero(line)[0].item())  # the first output index on the image
        offsets.append(int(line[first].item()) - 1 - first)
    return "%d %d" % tuple(offsets)


def write_images(work):
    """Smooth random pictures saved by PIL in each flavour gpuperf must read."""
    rng = np.random.default_rng(34)
    files = []
    for index, (width, height) in enumerate([(500, 375), (333, 500), (640, 427), (1100, 900),
                                             (260, 257)]):
        y, x = np.mgrid[0:height, 0:width]
        image = np.zeros((height, width, 3))
        for c in range(3):
            a, b, p = rng.uniform(0.005, 0.05, 3)
            image[..., c] = 128 + 90 * np.sin(a * x + p * 7) * np.cos(b * y) + \
                rng.normal(0, 12, (height, width))
        rgb = Image.fromarray(np.clip(image, 0, 255).astype(np.uint8), "RGB")
        name = os.path.join(work, f"img{index}")
        flavours = {
            "baseline": lambda p: rgb.save(p, quality=90),
            "444": lambda p: rgb.save(p, quality=90, subsampling=0),
            "progressive": lambda p: rgb.save(p, quality=85, progressive=True),
            "grayscale": lambda p: rgb.convert("L").save(p, quality=90),
            "cmyk": lambda p: rgb.convert("CMYK").save(p, quality=90),
        }
        for flavour, save in flavours.items():
            path = f"{name}_{flavour}.jpg"
            save(path)
            files.append((flavour, path))
    # Shapes at the edges of the geometry: one pixel, and strips one to three pixels across
    # (RandomResizedCrop falls back to its centre crop; the filters clamp at both ends).
    for width, height in [(1, 1), (3, 4000), (4000, 3), (1, 500)]:
        noise = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
        for flavour, subsampling in (("baseline", 2), ("444", 0)):
            path = os.path.join(work, f"edge{width}x{height}_{flavour}.jpg")
            Image.fromarray(noise, "RGB").save(path, quality=90, subsampling=subsampling)
            files.append((flavour, path))
    return files


def reference_tensor(path, box=None, flip=False):
    image = Image.open(path).convert("RGB")
    if box is None:
        image = F.center_crop(F.resize(image, 256, T.InterpolationMode.BILINEAR), 224)
    else:
        top, left, height, width = box
        image = F.resized_crop(image, top, left, height, width, [224, 224],
                               T.InterpolationMode.BILINEAR)
        if flip:
            image = F.hflip(image)
    tensor = F.normalize(F.to_tensor(image), MEAN, STD)
    return tensor.permute(1, 2, 0).contiguous().numpy()  # HWC, as gpuperf writes


def run_transform(tool, mode, path, out, dct, index):
    args = [tool, "transform", mode, path, out, "dct" if dct else "exact", "7", str(index)]
    lines = subprocess.run(args, capture_output=True, text=True, check=True).stdout.splitlines()
    fields = lines[0].split()
    box = tuple(int(v) for v in fields[1:5])
    flip = fields[6] == "1"
    draws = [float(v) for v in lines[1].split()]
    got = np.fromfile(out, dtype=np.float32).reshape(224, 224, 3)
    return got, box, flip, draws


def pixels(tool, work):
    os.makedirs(work, exist_ok=True)
    files = write_images(work)
    ycck = os.path.join(work, "gpuperf_ycck.jpg")
    subprocess.run([tool, "ycck", ycck], check=True)
    files.append(("ycck", ycck))
    level = 1.0 / 255.0 / max(STD)  # one 8-bit level in normalised units, at most
    failures = 0
    worst_dct = 0.0
    worst_dct_mean = 0.0
    worst_exact = 0.0
    for flavour, path in files:
        out = os.path.join(work, "out.f32")
        rgb = os.path.join(work, "out.rgb")
        # The decode alone: gpuperf's RGB against PIL's convert("RGB").
        size = subprocess.run([tool, "decode", path, rgb], capture_output=True, text=True,
                              check=True).stdout.split()
        mine = np.fromfile(rgb, dtype=np.uint8).reshape(int(size[1]), int(size[0]), 3)
        theirs = np.asarray(Image.open(path).convert("RGB"))
        decode_diff = int(np.abs(mine.astype(int) - theirs.astype(int)).max())
        if decode_diff != 0:
            print(f"FAIL {os.path.basename(path)}: decode differs from PIL by {decode_diff} levels")
            failures += 1
        for mode in ("val", "train"):
            for index in range(3 if mode == "train" else 1):
                got, box, flip, draws = run_transform(tool, mode, path, out, False, index)
                if mode == "train":
                    with Image.open(path) as im:
                        want_box = reference_box(im.height, im.width, (0.08, 1.0),
                                                 (3.0 / 4.0, 4.0 / 3.0), draws)
                    if tuple(want_box) != box:
                        print(f"FAIL {path}: box {box}, torchvision {want_box}")
                        failures += 1
                want = reference_tensor(path, box if mode == "train" else None, flip)
                diff = float(np.abs(got - want).max())
                worst_exact = max(worst_exact, diff)
                if diff > 1e-5:
                    print(f"FAIL {os.path.basename(path)} {mode}[{index}] exact: max |diff| "
                          f"{diff:.6f} ({diff / level:.2f} levels)")
                    failures += 1
                got, box, flip, _ = run_transform(tool, mode, path, out, True, index)
                want = reference_tensor(path, box if mode == "train" else None, flip)
                levels = np.abs(got - want) / level
                worst_dct = max(worst_dct, float(levels.max()))
                worst_dct_mean = max(worst_dct_mean, float(levels.mean()))
                if float(levels.mean()) > 2.0:
                    print(f"FAIL {os.path.basename(path)} {mode}[{index}] DCT scaling: mean "
                          f"{levels.mean():.2f} levels")
                    failures += 1
    if failures:
        print(f"FAIL: {failures} comparison(s)")
        return 1
    print(f"ok: {len(files)} JPEGs (baseline, 4:4:4, progressive, grayscale, CMYK; YCCK by "
          f"gpuperf's encoder; 1 x 1 and strips 1-3 pixels across): decode equal "
          f"to PIL {Image.__version__}; validation and training transforms without DCT scaling "
          f"within {worst_exact:.2g} of torchvision {torchvision.__version__} (limit 1e-5); with "
          f"DCT scaling the worst image's mean {worst_dct_mean:.2f} levels (limit 2), largest "
          f"{worst_dct:.1f} levels")
    return 0


def folder(tool, work):
    import shutil
    root = os.path.join(work, "folder")
    shutil.rmtree(root, ignore_errors=True)
    jpeg = io_jpeg()
    files = ["Zebra/a.jpg", "apple/B.JPG", "apple/a.jpeg", "apple/sub/x.jpg", "apple/sub-2/y.jpg",
             "apple/sub/deeper/z.JPEG", "apple/.hidden.jpg", "apple/notes.txt", "apple/pic.png",
             "10/one.jpg", "9/nine.jpg", "with space/f g.jpg", "_under/u.jpg", "Apple/c.jpg",
             "apple/b.jpg.bak", "apple/10.jpg", "apple/9.jpg"]
    for name in files:
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(jpeg)
    os.symlink(os.path.join(root, "Zebra"), os.path.join(root, "linked"))
    dataset = torchvision.datasets.ImageFolder(root, is_valid_file=lambda p: p.lower().endswith(
        (".jpg", ".jpeg")))
    want = ["%d %s" % (label, path) for path, label in dataset.samples]
    got = subprocess.run([tool, "scan", root], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    if got != want:
        for w, g in zip(want, got):
            print(("   " if w == g else "!! ") + f"torchvision {w} | gpuperf {g}")
        print(f"FAIL: the scans differ ({len(want)} and {len(got)} samples)")
        return 1
    print(f"ok: {len(want)} samples in {len(dataset.classes)} classes, the same paths, labels "
          f"and order as torchvision {torchvision.__version__}'s ImageFolder")
    return 0


def io_jpeg():
    import io
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 20, 30)).save(buffer, "JPEG")
    return buffer.getvalue()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["geometry", "folder", "pixels"])
    parser.add_argument("--tool", required=True)
    parser.add_argument("--work", default="input-reference-work")
    args = parser.parse_args()
    if args.mode == "geometry":
        return geometry(args.tool)
    if args.mode == "folder":
        return folder(args.tool, args.work)
    return pixels(args.tool, args.work)


if __name__ == "__main__":
    sys.exit(main())
