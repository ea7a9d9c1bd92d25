/* jacobi.c: the Jacobi iteration of examples/jacobi.acc in C (gcc -O2 -ffp-contract=off).
 * usage: jacobi N M ITER_MAX */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 256;
    long m = argc > 2 ? atol(argv[2]) : n;
    long iter_max = argc > 3 ? atol(argv[3]) : 1000;
    double tol = 1e-6;
    double *A = calloc(n * m, sizeof *A);
    double *Anew = calloc(n * m, sizeof *Anew);
    for (long j = 0; j < m; j++) {
        A[j] = 1.0;
        Anew[j] = 1.0;
    }
    double err = 1.0;
    long iter = 0;
    while (err > tol && iter < iter_max) {
        err = 0.0;
        for (long j = 1; j < n - 1; j++) {
            for (long i = 1; i < m - 1; i++) {
                Anew[j * m + i] = 0.25 * (A[j * m + i + 1] + A[j * m + i - 1] + A[(j - 1) * m + i] + A[(j + 1) * m + i]);
                err = fmax(err, fabs(Anew[j * m + i] - A[j * m + i]));
            }
        }
        for (long j = 1; j < n - 1; j++) {
            for (long i = 1; i < m - 1; i++) {
                A[j * m + i] = Anew[j * m + i];
            }
        }
        iter++;
    }
    double sum = 0.0;
    for (long k = 0; k < n * m; k++) {
        sum += A[k];
    }
    printf("jacobi %ld x %ld: iterations: %ld, error: %0.6e, sum(A): %0.6f\n", n, m, iter, err, sum);
    free(A);
    free(Anew);
    return 0;
}
