"""``bt.config``: process-wide settings.

``bt.config.update("donation", "warn" | "error")`` chooses what a donation that
no output can use does (DESIGN R4): warn with ``DonationWarning`` (default) or
raise ``DonationError`` before anything runs. Read a setting as an attribute
(``bt.config.donation``). Layers that keep their own copy of a setting (the
C++ jit) subscribe with ``config.add_listener(fn)``; ``fn(name, value)`` runs
on every update. The donation mode is pushed to the C++ runtime
(baton/core/config.h) here.
"""

from __future__ import annotations

from typing import Any, Callable

from baton import _baton

_CHOICES: dict[str, tuple[Any, ...]] = {"donation": ("warn", "error")}
_DEFAULTS: dict[str, Any] = {"donation": "warn"}


class Config:
    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(_DEFAULTS))
        object.__setattr__(self, "_listeners", [])

    def update(self, name: str, value: Any) -> None:
        """Sets setting ``name`` to ``value`` (ValueError for unknown ones)."""
        if name not in _CHOICES:
            raise ValueError(
                f"unknown baton config option {name!r}; options: {sorted(_CHOICES)}"
            )
        if value not in _CHOICES[name]:
            raise ValueError(
                f"config option {name!r} must be one of {_CHOICES[name]}, not {value!r}"
            )
        self._values[name] = value
        for listener in list(self._listeners):
            listener(name, value)

    def read(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise ValueError(f"unknown baton config option {name!r}") from None

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"baton config has no option {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use bt.config.update(name, value)")

    def add_listener(self, listener: Callable[[str, Any], None]) -> None:
        """Calls ``listener(name, value)`` after every update."""
        self._listeners.append(listener)

    def values(self) -> dict[str, Any]:
        """A copy of every setting (for saving and restoring)."""
        return dict(self._values)

    def __repr__(self) -> str:
        return f"baton.config({self._values})"


def _push_to_runtime(name: str, value: Any) -> None:
    if name == "donation":
        _baton._set_donation_mode(value)


config = Config()
config.add_listener(_push_to_runtime)
_push_to_runtime("donation", config.donation)
