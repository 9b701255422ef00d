"""bt.config."""

import pytest

import baton as bt
from baton import _baton


def test_donation_setting_reaches_the_runtime():
    assert bt.config.donation == "warn" and _baton._donation_mode() == "warn"
    bt.config.update("donation", "error")
    assert bt.config.donation == "error" and bt.config.read("donation") == "error"
    assert _baton._donation_mode() == "error"


def test_restored_between_tests():
    assert bt.config.donation == "warn"


def test_bad_updates():
    with pytest.raises(ValueError):
        bt.config.update("donation", "ignore")
    with pytest.raises(ValueError):
        bt.config.update("nope", 1)
    with pytest.raises(AttributeError):
        bt.config.donation = "error"


def test_listeners_see_updates():
    seen = []

    def seen_listener(name, value):
        seen.append((name, value))

    bt.config.add_listener(seen_listener)
    try:
        bt.config.update("donation", "error")
        assert seen == [("donation", "error")]
    finally:
        bt.config._listeners.remove(seen_listener)


def test_runtime_warnings_become_donation_warnings():
    with pytest.warns(bt.DonationWarning, match="unusable donation"):
        _baton._emit_warning("unusable donation of x[0]")
