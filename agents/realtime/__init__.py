"""Realtime, the sockets' edge: consumers serve the sockets, frames validate what a
client sends, wsauth authenticates a socket, routing maps the websocket URLs. The
doorbell they hear is agents.doorbell."""
