"""What each patch relies on of its framework still holds in the installed versions.

A failure here means a pin moved: read the patch against the new version, then
update its WRITTEN_FOR (and its docstring) or turn it off for good. Each patch's
own tests pin its behaviour; these pin the internals it reaches into.
"""

import importlib
import inspect
from importlib.metadata import version

import pytest

from project import patches

MODULES = {
    name: importlib.import_module(f"project.patches.{name}") for name in patches.NAMES
}


def test_every_patch_module_is_named_and_says_what_it_was_written_for():
    for name, module in MODULES.items():
        assert module.WRITTEN_FOR, name
        assert "TOOLCRIB_PATCHES_OFF" in module.__doc__, name


@pytest.mark.parametrize("name", patches.NAMES)
def test_installed_frameworks_are_those_the_patch_was_written_for(name):
    installed = {
        distribution: ".".join(version(distribution).split(".")[:2])
        for distribution in MODULES[name].WRITTEN_FOR
    }

    assert installed == MODULES[name].WRITTEN_FOR


def test_cache_reaches_djangos_redis_client_internals():
    from django.core.cache.backends.redis import RedisCacheClient

    client = RedisCacheClient(["redis://127.0.0.1:6379"])
    assert callable(client._get_connection_pool_index)
    assert {"_servers", "_pool_options", "_pool_class", "_client"} <= set(vars(client))
    assert "write" in inspect.signature(RedisCacheClient.get_client).parameters


def test_daphne_input_finds_twisted_and_autobahn_options():
    from daphne.ws_protocol import WebSocketProtocol
    from twisted.web import http

    assert (
        "parsePOSTFormSubmission" in inspect.signature(http.Request.__init__).parameters
    )
    assert set(MODULES["daphne_input"].SOCKET_OPTIONS) <= set(
        WebSocketProtocol.CONFIG_ATTRS
    )


def test_memory_layer_overrides_what_channels_calls():
    from channels.layers import InMemoryChannelLayer

    layer = InMemoryChannelLayer()
    assert isinstance(layer.channels, dict)
    assert isinstance(layer.groups, dict)
    assert callable(layer._clean_expired)
    source = inspect.getsource(InMemoryChannelLayer.receive)
    assert "_clean_expired" in source


def test_prepared_reads_the_compilers_select_list():
    from django.db.models.query import get_related_populators
    from django.db.models.sql.compiler import SQLCompiler

    from agents.models import Run

    compiler = Run.objects.select_related("session").query.get_compiler("default")
    compiler.as_sql()
    assert {"select", "klass_info", "annotation_col_map", "col_count"} <= set(
        vars(compiler)
    )
    assert callable(SQLCompiler.get_converters)
    assert callable(SQLCompiler.has_composite_fields)
    assert callable(get_related_populators)


def test_redis_layer_reaches_channels_redis_helpers():
    from channels_redis.serializers import registry
    from channels_redis.utils import create_pool, decode_hosts
    from redis.asyncio.connection import Connection

    assert decode_hosts(["redis://127.0.0.1:6379"])[0]["address"]
    assert callable(create_pool)
    assert registry.get_serializer("msgpack")
    assert "push_request" in inspect.signature(Connection.read_response).parameters


def test_rows_batch_size_and_prep_save_are_djangos():
    from django.db import connection
    from django.db.models.sql import InsertQuery

    from agents.models import RunSpan

    fields = RunSpan._meta.concrete_fields
    assert connection.ops.bulk_batch_size(fields, [object()]) >= 1
    assert "raw" in inspect.signature(InsertQuery.insert_values).parameters


def test_socket_writes_finds_twisteds_write_state():
    from twisted.internet import abstract, tcp

    assert hasattr(abstract.FileDescriptor, "write")
    assert hasattr(tcp.Connection, "TLS")
    assert {"dataBuffer", "offset"} <= set(vars(abstract.FileDescriptor))


def test_sqlite_pool_overrides_what_djangos_backend_calls():
    from django.db.backends.sqlite3 import base

    assert base.FORMAT_QMARK_REGEX.sub("?", "a = %s") == "a = ?"
    assert (
        "param_names"
        in inspect.signature(base.SQLiteCursorWrapper.convert_query).parameters
    )
    assert callable(base.DatabaseWrapper._close)
    assert "init_commands" in inspect.getsource(base.DatabaseWrapper)
