"""mandelbrot.py: escape-time Mandelbrot over [-2, 1] x [-1.5, 1.5] in plain Python 3.
usage: python3 mandelbrot.py WIDTH HEIGHT MAX_ITER"""
import sys


def mandel(px, py, width, height, max_iter):
    cx = -2.0 + 3.0 * px / width
    cy = -1.5 + 3.0 * py / height
    zx = 0.0
    zy = 0.0
    k = 0
    while k < max_iter and zx * zx + zy * zy <= 4.0:
        t = zx * zx - zy * zy + cx
        zy = 2.0 * zx * zy + cy
        zx = t
        k += 1
    return k


def main():
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    height = int(sys.argv[2]) if len(sys.argv) > 2 else width
    max_iter = int(sys.argv[3]) if len(sys.argv) > 3 else 255
    total = 0
    inside = 0
    for y in range(height):
        for x in range(width):
            k = mandel(x, y, width, height, max_iter)
            total += k
            if k == max_iter:
                inside += 1
    print("mandelbrot %d x %d, max_iter %d: total iterations %d, inside %d"
          % (width, height, max_iter, total, inside))


main()
