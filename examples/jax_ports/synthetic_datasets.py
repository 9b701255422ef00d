"""MNIST's shapes and types without the download (nothing can be fetched
here): what `examples/datasets.py` of the JAX repository returns from
`mnist()`, i.e. images flattened to 784 float32 values in [0, 1] and one-hot
float32 labels, drawn from a fixed seed. SIZES = (train, test) counts; the
real set has (60000, 10000), the tests use fewer."""

import numpy as np

SIZES = (60000, 10000)


def _one_hot(x, k, dtype=np.float32):
    """Create a one-hot encoding of x of size k."""
    return np.array(x[:, None] == np.arange(k), dtype)


def mnist(permute_train=False):
    """(train_images, train_labels, test_images, test_labels) of MNIST's
    shapes: float32 [n, 784] in [0, 1] and one-hot float32 [n, 10]."""
    rng = np.random.RandomState(1234)
    n_train, n_test = SIZES
    images = rng.rand(n_train + n_test, 784).astype(np.float32)
    labels = _one_hot(rng.randint(0, 10, n_train + n_test), 10)
    return images[:n_train], labels[:n_train], images[n_train:], labels[n_train:]


def face():
    """What `scipy.datasets.face()` returns without its download (it needs
    pooch and the network): a uint8 [768, 1024, 3] RGB image, here drawn
    from a fixed seed (smooth stripes plus noise, so that smoothing it
    means something)."""
    rng = np.random.RandomState(1701)
    rows, cols = np.mgrid[0:768, 0:1024]
    base = 127 + 100 * np.sin(rows / 40.0) * np.cos(cols / 55.0)
    rgb = base[..., None] + rng.randint(-20, 21, (768, 1024, 3))
    return np.clip(rgb, 0, 255).astype(np.uint8)
