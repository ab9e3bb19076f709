#!/usr/bin/env python3
"""Draws the extension's icon (icon.png, 128×128): three nodes of a graph joined by edges on
a rounded square. Standard library only; run it again to remake the file."""
import math
import struct
import zlib

SIZE = 128
BACKGROUND = (22, 58, 96)
EDGE = (140, 190, 235)
NODE = (255, 255, 255)
NODES = [(64, 30), (34, 92), (94, 92)]
EDGES = [(0, 1), (0, 2), (1, 2)]


def inside_rounded_square(x: float, y: float, radius: float = 24) -> bool:
    cx = min(max(x, radius), SIZE - radius)
    cy = min(max(y, radius), SIZE - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius**2


def distance_to_segment(px, py, ax, ay, bx, by) -> float:
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def pixel(x: int, y: int) -> tuple[int, int, int, int]:
    px, py = x + 0.5, y + 0.5
    if not inside_rounded_square(px, py):
        return (0, 0, 0, 0)
    if any(math.hypot(px - nx, py - ny) <= 13 for nx, ny in NODES):
        return (*NODE, 255)
    if any(distance_to_segment(px, py, *NODES[a], *NODES[b]) <= 4 for a, b in EDGES):
        return (*EDGE, 255)
    return (*BACKGROUND, 255)


def png(width: int, height: int, rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + row for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    rows = [b"".join(bytes(pixel(x, y)) for x in range(SIZE)) for y in range(SIZE)]
    with open(__file__.replace("make_icon.py", "icon.png"), "wb") as f:
        f.write(png(SIZE, SIZE, rows))
