"""The doorbell: a frame rung to the channel groups that listen for it, once what it
tells is stored (streams.py). Below everything that rings it (the event log, the
turn, the requests' rings, governance) and every socket that hears it
(agents.realtime.consumers); it imports nothing of agents but the models."""
