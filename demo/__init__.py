"""The demo agents and users: an app on top of toolsets, installed when TOOLCRIB_DEMO is set."""
