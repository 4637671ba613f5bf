"""The process's channel layer under threads: made as the app starts, so every
socket and every publisher of the process shares one.

Channels makes a layer on first use (ChannelLayerManager.__getitem__), with no
lock. In a web server the first socket (the sockets' loop), the first turn (the
turn loop) and the first grant change (a sync view's thread) may all be first.
"""

import time

import pytest
from channels.layers import channel_layers, get_channel_layer
from django.apps import apps

from tests.threads import at_once


@pytest.fixture
def slow_making(monkeypatch):
    """No layer made yet; making one takes a while (a layer's own setup, the
    import of its backend): how many were made."""
    monkeypatch.setattr(channel_layers, "backends", {})
    made = []
    make = channel_layers.make_backend

    def make_slowly(name):
        time.sleep(0.01)
        layer = make(name)
        made.append(layer)
        return layer

    monkeypatch.setattr(channel_layers, "make_backend", make_slowly)
    return made


def test_channels_makes_a_layer_per_thread_that_uses_it_first_at_once(slow_making):
    """What the app's start guards against: if channels ever locks this, the
    layer need not be made at start."""
    at_once(lambda i: get_channel_layer())

    assert len(slow_making) > 1


def test_every_thread_gets_the_one_layer_made_as_the_app_started(slow_making):
    apps.get_app_config("agents").ready()

    layers = at_once(lambda i: get_channel_layer())

    assert len(slow_making) == 1  # as the app started
    assert all(layer is slow_making[0] for layer in layers)
