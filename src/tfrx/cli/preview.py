"""tfrx preview."""

from __future__ import annotations

import math
import sys

from tfrx.cli._common import CliError, add_input, name_of, reader, sources

DESCRIPTION = """Save a PNG grid of the first images of Example records, each with its label.

The image feature is found by name (image/encoded, image, image_raw, ...) or
given with --image-key; the label comes from image/class/text,
image/class/label, label, ... or --label-key. Needs Pillow.

  tfrx preview out/photos-train.tfrecord-00000-of-00016 -o grid.png -n 16
"""

_IMAGE_KEYS = ("image/encoded", "image", "image_raw", "img", "encoded", "jpeg", "png")
_LABEL_KEYS = ("image/class/text", "image/text", "image/class/label", "label", "labels", "class", "image/class", "text")


def add_arguments(p) -> None:
    add_input(p)
    p.add_argument("-o", "--output", default="preview.png", help="PNG file to write (default preview.png)")
    p.add_argument("-n", "--num-images", type=int, default=16, metavar="N", help="images in the grid (default 16)")
    p.add_argument("--image-key", help="feature holding the encoded image")
    p.add_argument("--label-key", help="feature to print under each image ('' for none)")
    p.add_argument("--cell", type=int, default=128, metavar="PX", help="cell size in pixels (default 128)")
    p.add_argument("--columns", type=int, default=None, help="images per row (default: a square grid)")


def _label_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(v.decode("utf-8", "replace") for v in value[:3])
    return ", ".join(str(v) for v in value.tolist()[:3])


def run(args) -> int:
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise CliError("preview needs Pillow: pip install 'tfrx[image]'") from None
    from tfrx.codec import decode_example
    from tfrx.image import decode_image
    from tfrx.codec._sniff import EXAMPLE, record_kind

    items = []
    for source in sources(args):
        with reader(source, args) as r:
            for rec in r:
                if record_kind(rec) != EXAMPLE:
                    raise CliError(
                        f"{name_of(source)}: records are not tf.train.Example protos; preview needs Examples with encoded images"
                    )
                items.append(decode_example(rec))
                if len(items) >= args.num_images:
                    break
        if len(items) >= args.num_images:
            break
    if not items:
        raise CliError("no records to preview")
    keys = set().union(*items)
    image_key = args.image_key or next((k for k in _IMAGE_KEYS if k in keys), None)
    if image_key is None or image_key not in keys:
        raise CliError(
            f"no image feature found (looked for {', '.join(_IMAGE_KEYS)}); pass --image-key; features: {sorted(keys)}"
        )
    label_key = args.label_key if args.label_key is not None else next((k for k in _LABEL_KEYS if k in keys), "")
    cell = args.cell
    cols = args.columns or math.ceil(math.sqrt(len(items)))
    rows = math.ceil(len(items) / cols)
    text_h = 14 if label_key else 0
    grid = Image.new("RGB", (cols * cell, rows * (cell + text_h)), "white")
    draw = ImageDraw.Draw(grid)
    shown = 0
    for n, d in enumerate(items):
        x, y = (n % cols) * cell, (n // cols) * (cell + text_h)
        value = d.get(image_key)
        try:
            if not isinstance(value, list) or not value:
                raise ValueError("not a bytes feature")
            image = decode_image(value[0], channels=3, expand_animations=False)
            tile = Image.fromarray(image)
            tile.thumbnail((cell, cell))
            grid.paste(tile, (x + (cell - tile.width) // 2, y + (cell - tile.height) // 2))
            shown += 1
        except Exception:  # noqa: BLE001 - an undecodable image is drawn as a crossed cell
            draw.line((x, y, x + cell - 1, y + cell - 1), fill="red")
            draw.line((x, y + cell - 1, x + cell - 1, y), fill="red")
        if label_key:
            draw.text((x + 2, y + cell), _label_text(d.get(label_key))[: cell // 6], fill="black")
    if shown == 0:
        raise CliError(f"no image in {image_key!r} could be decoded")
    grid.save(args.output, format="PNG")
    print(
        f"{args.output}: {shown} images ({cols}x{rows})" + (f", labels from {label_key!r}" if label_key else ""),
        file=sys.stderr,
    )
    return 0
