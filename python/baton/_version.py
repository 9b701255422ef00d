"""The package version (``bt.__version__``), in a module of its own so that
the modules it is reported from need not import the package."""

__version__ = "0.1.0"
