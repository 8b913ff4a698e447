"""The swarm's mean position, the same bit for bit whatever the number of ranks.

CSO's x-bar (Gu, Cheng & Jin 2018, Eq. 3), summed exactly in fixed point so that the order
of the additions (which rank holds which rows) cannot change the result.
"""

import numpy as np

from hpcswarm.comm import as_comm


def fixed_point_bits(n_rows: int) -> int:
    """Fraction bits of the fixed-point sum of ``n_rows`` values in [0, 1].

    As many as float64 carries (52) while ``n_rows * 2**bits`` stays below ``2**62``, so that
    the int64 sum cannot overflow. A function of the row count only, never of the ranks.
    """
    return min(52, 62 - int(n_rows).bit_length())


def swarm_mean(position, n_rows=None, comm=None) -> np.ndarray:
    """Mean position of the swarm, ndarray of shape (n_genes,) (CSO's x-bar, Gu et al. Eq. 3).

    Order-independent: every value (in [0, 1]) is truncated to a multiple of
    ``2**-fixed_point_bits(n_rows)`` (less than ``2**-52`` below it for up to 1023 rows;
    the scaling by a power of two is exact) and summed exactly as int64,
    locally and then over the ranks (an Allreduce of ``8 n_genes`` bytes); the exact sum is
    divided once. A serial run calls the same function, so 1 rank and N ranks give the same
    mean bit for bit, whatever the partition.

    Parameters
    ----------
    position : ndarray of shape (n_local, n_genes)
        This rank's rows (all rows in a serial run), values in [0, 1].
    n_rows : int, optional
        Rows over all ranks (default: ``n_local``, the serial case).
    comm : SerialComm or MPIComm, optional
    """
    position = np.asarray(position, dtype=float)
    n_rows = position.shape[0] if n_rows is None else int(n_rows)
    scale = float(2 ** fixed_point_bits(n_rows))
    local = (position * scale).astype(np.int64).sum(axis=0)
    total = as_comm(comm).allreduce_sum(local)
    return total.astype(float) / scale / n_rows
