"""jacobi.py: the Jacobi iteration of examples/jacobi.acc in plain Python 3 (lists, no numpy).
usage: python3 jacobi.py N M ITER_MAX"""
import sys


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    m = int(sys.argv[2]) if len(sys.argv) > 2 else n
    iter_max = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    tol = 1e-6
    A = [0.0] * (n * m)
    Anew = [0.0] * (n * m)
    for j in range(m):
        A[j] = 1.0
        Anew[j] = 1.0
    err = 1.0
    it = 0
    while err > tol and it < iter_max:
        err = 0.0
        for j in range(1, n - 1):
            row = j * m
            for i in range(1, m - 1):
                k = row + i
                v = 0.25 * (A[k + 1] + A[k - 1] + A[k - m] + A[k + m])
                Anew[k] = v
                d = abs(v - A[k])
                if d > err:
                    err = d
        for j in range(1, n - 1):
            row = j * m
            A[row + 1:row + m - 1] = Anew[row + 1:row + m - 1]
        it += 1
    s = 0.0
    for v in A:
        s += v
    print("jacobi %d x %d: iterations: %d, error: %0.6e, sum(A): %0.6f" % (n, m, it, err, s))


main()
