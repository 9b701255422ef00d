"""``baton.numpy``: numpy's array functions on baton arrays.

    import baton as bt, baton.numpy as bnp

    x = bnp.arange(6, dtype=bnp.float32).reshape(2, 3)
    y = bnp.exp(x) @ bnp.ones((3, 4)) + 1        # eager: each op compiled once

    @bt.jit
    def f(x):                                    # traced: one program
        return bnp.tanh(x * 2).sum(axis=0)

Mirrors numpy / jax.numpy for the common functions: creation, elementwise
math, comparisons, ``where``, reductions, ``dot``/``matmul``/``einsum``,
reshaping, ``concatenate``/``stack``/``split``, ``take``, dtype names.
Every function works on baton Arrays, numpy data and Python scalars, and
on Tracers inside ``bt.jit``. Outside a trace each call runs eagerly; the
program for each function, static parameters and argument shapes/dtypes is
compiled once and cached (``bt.clear_caches()`` drops them).

Semantics are jax.numpy's where the two differ: dtype promotion (Python
scalars weakly typed, integers with floats give the float type, no float64
from Python floats), true division of integers gives float32, sums of
small integers int32, arrays are immutable (``x.at[i].set(v)`` instead of
``x[i] = v``; ``out=`` arguments are not supported). Indexing follows numpy
for static indices and JAX for traced ones (see ``baton._indexing``).
"""

from baton._array_type import Array as ndarray  # arrays and tracers
from baton.numpy import (
    _along_axis,
    _bitwise,
    _casts,
    _creation,
    _cumulative,
    _dtypes,
    _elementwise,
    _exponents,
    _float_functions,
    _index_tricks,
    _joining,
    _linalg,
    _matrices,
    _nan_reductions,
    _nonzero,
    _polynomial,
    _predicates,
    _printing,
    _rearranging,
    _reductions,
    _selection,
    _shapes,
    _sorting,
    _statistics,
    _transcendental,
    _vector,
    _vectorize,
    _windows,
)
from baton.numpy._along_axis import *  # noqa: F403
from baton.numpy._bitwise import *  # noqa: F403
from baton.numpy._casts import *  # noqa: F403
from baton.numpy._creation import *  # noqa: F403
from baton.numpy._cumulative import *  # noqa: F403
from baton.numpy._dtypes import *  # noqa: F403
from baton.numpy._elementwise import *  # noqa: F403
from baton.numpy._exponents import *  # noqa: F403
from baton.numpy._float_functions import *  # noqa: F403
from baton.numpy._index_tricks import *  # noqa: F403
from baton.numpy._joining import *  # noqa: F403
from baton.numpy._linalg import *  # noqa: F403
from baton.numpy._matrices import *  # noqa: F403
from baton.numpy._nan_reductions import *  # noqa: F403
from baton.numpy._nonzero import *  # noqa: F403
from baton.numpy._polynomial import *  # noqa: F403
from baton.numpy._predicates import *  # noqa: F403
from baton.numpy._printing import *  # noqa: F403
from baton.numpy._rearranging import *  # noqa: F403
from baton.numpy._reductions import *  # noqa: F403
from baton.numpy._selection import *  # noqa: F403
from baton.numpy._shapes import *  # noqa: F403
from baton.numpy._sorting import *  # noqa: F403
from baton.numpy._statistics import *  # noqa: F403
from baton.numpy._transcendental import *  # noqa: F403
from baton.numpy._vector import *  # noqa: F403
from baton.numpy._vectorize import *  # noqa: F403
from baton.numpy._windows import *  # noqa: F403
from baton.numpy import _more  # noqa: E402
from baton.numpy._more import *  # noqa: F403

__all__ = ["ndarray"]
__all__ += _more.__all__
__all__ += _along_axis.__all__
__all__ += _bitwise.__all__
__all__ += _casts.__all__
__all__ += _creation.__all__
__all__ += _cumulative.__all__
__all__ += _dtypes.__all__
__all__ += _elementwise.__all__
__all__ += _exponents.__all__
__all__ += _float_functions.__all__
__all__ += _index_tricks.__all__
__all__ += _joining.__all__
__all__ += _linalg.__all__
__all__ += _matrices.__all__
__all__ += _nan_reductions.__all__
__all__ += _nonzero.__all__
__all__ += _polynomial.__all__
__all__ += _predicates.__all__
__all__ += _printing.__all__
__all__ += _rearranging.__all__
__all__ += _reductions.__all__
__all__ += _selection.__all__
__all__ += _shapes.__all__
__all__ += _sorting.__all__
__all__ += _statistics.__all__
__all__ += _transcendental.__all__
__all__ += _vector.__all__
__all__ += _vectorize.__all__
__all__ += _windows.__all__

from baton.numpy import linalg  # noqa: E402, F401  (bnp.linalg: LAPACK)
from baton.numpy import fft  # noqa: E402, F401  (bnp.fft: pocketfft)
