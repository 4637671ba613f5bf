"""Realtime: streams name the channel groups and ring the doorbell, consumers serve the
sockets, frames validate what a client sends, wsauth authenticates a socket, routing
maps the websocket URLs."""
