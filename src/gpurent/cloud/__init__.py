"""Facts about cloud providers that more than one room needs: metadata services, and the spot
interruption defaults that plan, pricing and spot share.

Imports only the standard library; every room above it may import it.
"""
