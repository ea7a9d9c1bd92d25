/* mandelbrot.c: escape-time Mandelbrot over [-2, 1] x [-1.5, 1.5] (gcc -O2 -ffp-contract=off).
 * usage: mandelbrot WIDTH HEIGHT MAX_ITER */
#include <stdio.h>
#include <stdlib.h>

static long mandel(long px, long py, long width, long height, long max_iter) {
    double cx = -2.0 + 3.0 * px / width;
    double cy = -1.5 + 3.0 * py / height;
    double zx = 0.0, zy = 0.0;
    long k = 0;
    while (k < max_iter && zx * zx + zy * zy <= 4.0) {
        double t = zx * zx - zy * zy + cx;
        zy = 2.0 * zx * zy + cy;
        zx = t;
        k++;
    }
    return k;
}

int main(int argc, char **argv) {
    long width = argc > 1 ? atol(argv[1]) : 1024;
    long height = argc > 2 ? atol(argv[2]) : width;
    long max_iter = argc > 3 ? atol(argv[3]) : 255;
    long total = 0, inside = 0;
    for (long y = 0; y < height; y++) {
        for (long x = 0; x < width; x++) {
            long k = mandel(x, y, width, height, max_iter);
            total += k;
            if (k == max_iter) inside++;
        }
    }
    printf("mandelbrot %ld x %ld, max_iter %ld: total iterations %ld, inside %ld\n", width, height, max_iter, total, inside);
    return 0;
}
