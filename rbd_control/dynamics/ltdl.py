"""Sparse L^T D L factorisation of H and its solve: RBDA (Featherstone 2008) §6.5; MuJoCo's
mj_factorM and mj_solveM (qLD).

Because parent[i] < i, H = L^T D L has L with the sparsity of H itself: L[i, j] can be non-zero
only when j is an ancestor of i. Both loops walk branches instead of rows, so a tree's
factorisation costs O(n * depth^2) instead of O(n^3), with no fill-in.
Storage: in place in H's lower triangle, D on the diagonal and L (unit diagonal) below it.
"""
from rbd_control.dynamics.model import parent
from rbd_control.dynamics.spatial import jit


@jit
def ltdl(md, H):
    """Factorise in place. Returns -1, or the index of the first non-positive pivot.
    inputs: H (lower triangle); outputs: H holding L and D."""
    for k in range(H.shape[0] - 1, -1, -1):
        if not H[k, k] > 0.0:
            return k
        i = parent(md, k)
        while i >= 0:
            a = H[k, i] / H[k, k]
            j = i
            while j >= 0:
                H[i, j] -= a * H[k, j]
                j = parent(md, j)
            H[k, i] = a
            i = parent(md, i)
    return -1


@jit
def ltdl_solve(md, LD, x):
    """x <- H^-1 x, with LD from ltdl: solve L^T y = x, then D z = y, then L x = z."""
    n = LD.shape[0]
    for i in range(n - 1, -1, -1):
        j = parent(md, i)
        while j >= 0:
            x[j] -= LD[i, j] * x[i]
            j = parent(md, j)
    for i in range(n):
        x[i] /= LD[i, i]
    for i in range(n):
        j = parent(md, i)
        while j >= 0:
            x[i] -= LD[i, j] * x[j]
            j = parent(md, j)
