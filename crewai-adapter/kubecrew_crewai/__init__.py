"""kubecrew's CrewAI adapter: runs one task of a crew with the CrewAI library (see __main__.py for the protocol)."""

__version__ = "0.1.0"
