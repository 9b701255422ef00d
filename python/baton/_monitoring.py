"""``bt.monitoring``: JAX's event listeners (``jax.monitoring``).

Programs register callbacks and record events; baton itself records
``/jax/core/compile/jaxpr_trace_duration`` (JAX's event name, with
``fun_name=``) each time a ``bt.jit`` function (eager operations included)
misses its cache and traces, with the tracing time in seconds. It records
no other events of JAX's (baton's compile is not timed separately).
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = [
    "clear_event_listeners",
    "record_event",
    "record_event_duration_secs",
    "record_event_time_span",
    "record_scalar",
    "register_event_duration_secs_listener",
    "register_event_listener",
    "register_event_time_span_listener",
    "register_scalar_listener",
    "unregister_event_duration_listener",
    "unregister_event_listener",
    "unregister_event_time_span_listener",
    "unregister_scalar_listener",
]

_event: list[Callable[..., None]] = []
_duration: list[Callable[..., None]] = []
_span: list[Callable[..., None]] = []
_scalar: list[Callable[..., None]] = []


def listening() -> bool:
    """Whether a duration listener is registered (baton times its traces
    only then)."""
    return bool(_duration)


def record_event(event: str, **kwargs: str | int) -> None:
    """Calls every event listener with ``(event, **kwargs)``."""
    for cb in list(_event):
        cb(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Calls every duration listener with ``(event, duration, **kwargs)``."""
    for cb in list(_duration):
        cb(event, duration, **kwargs)


def record_event_time_span(
    event: str, start_time: float, end_time: float, **kwargs: str | int
) -> None:
    """Calls every time-span listener with ``(event, start_time, end_time,
    **kwargs)``."""
    for cb in list(_span):
        cb(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Calls every scalar listener with ``(event, value, **kwargs)``."""
    for cb in list(_scalar):
        cb(event, value, **kwargs)


def _register(lst: list, callback: Any) -> None:
    if not callable(callback):
        raise TypeError(f"listener must be callable, not {type(callback).__name__}")
    lst.append(callback)


def _unregister(lst: list, callback: Any, what: str) -> None:
    try:
        lst.remove(callback)
    except ValueError:
        raise AssertionError(f"{callback!r} is not a registered {what} listener") from None


def register_event_listener(callback: Callable[..., None]) -> None:
    """Registers ``callback(event, **kwargs)`` for :func:`record_event`."""
    _register(_event, callback)


def register_event_duration_secs_listener(callback: Callable[..., None]) -> None:
    """Registers ``callback(event, duration_secs, **kwargs)``."""
    _register(_duration, callback)


def register_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Registers ``callback(event, start_time, end_time, **kwargs)``."""
    _register(_span, callback)


def register_scalar_listener(callback: Callable[..., None]) -> None:
    """Registers ``callback(event, value, **kwargs)``."""
    _register(_scalar, callback)


def unregister_event_listener(callback: Callable[..., None]) -> None:
    """Removes an event listener (AssertionError if not registered, as JAX)."""
    _unregister(_event, callback, "event")


def unregister_event_duration_listener(callback: Callable[..., None]) -> None:
    """Removes a duration listener."""
    _unregister(_duration, callback, "duration")


def unregister_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Removes a time-span listener."""
    _unregister(_span, callback, "time-span")


def unregister_scalar_listener(callback: Callable[..., None]) -> None:
    """Removes a scalar listener."""
    _unregister(_scalar, callback, "scalar")


def clear_event_listeners() -> None:
    """Removes every listener."""
    for lst in (_event, _duration, _span, _scalar):
        lst.clear()
