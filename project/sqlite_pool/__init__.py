"""Django's SQLite backend with the process's connections kept open and lent again
(base.py)."""
