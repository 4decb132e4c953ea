"""Facts about cloud providers that more than one room needs (metadata services today).

Imports only the standard library; every edge room (runtime, monitor) may import it.
"""
